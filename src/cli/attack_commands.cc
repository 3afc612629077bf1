// The red-team subcommands (see attack_commands.h).
#include "cli/attack_commands.h"

#include <absl/strings/str_cat.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>

#include "attack/agentpoison_trigger.h"
#include "attack/attack.h"
#include "cli/query_file.h"
#include "store/memory_store.h"

namespace bulwark::cli {
namespace {

// The principal the poison passages are written as with --write.
constexpr char kAttackPrincipal[] = "attack:agentpoison";

// One target topic of the victim queries: AgentPoison optimizes one trigger per topic.
struct VictimTopic {
  std::string topic;
  std::string payload;
  std::vector<std::string> queries;
};

// Victim queries: plain lines (one topic, payload from --payload) or JSONL {"query",
// "target_topic"?, "poison_goal"?} (data/corpora/victim_queries.jsonl's shape), grouped by topic in
// order of first appearance. InvalidArgument naming the line for a bad line or a query without a
// payload; NotFound for an unreadable file.
absl::StatusOr<std::vector<VictimTopic>> ReadVictims(const std::string& path, const std::string& payload) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::vector<VictimTopic> topics;
  std::map<std::string, size_t> index_of;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::string query = line, topic, goal = payload;
    if (line.front() == '{') {
      const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
      if (!j.is_object() || !j.contains("query") || !j["query"].is_string() ||
          (j.contains("target_topic") && !j["target_topic"].is_string()) ||
          (j.contains("poison_goal") && !j["poison_goal"].is_string())) {
        return absl::InvalidArgumentError(absl::StrCat(
            path, ":", number,
            ": expected {\"query\": \"...\", \"target_topic\"?: \"...\", \"poison_goal\"?: \"...\"}"));
      }
      query = j["query"].get<std::string>();
      topic = j.value("target_topic", "");
      goal = j.value("poison_goal", payload);
    }
    if (goal.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ":", number, ": no payload (give --payload or a \"poison_goal\")"));
    }
    auto [it, inserted] = index_of.try_emplace(topic, topics.size());
    if (inserted) topics.push_back({.topic = topic, .payload = goal, .queries = {}});
    topics[it->second].queries.push_back(std::move(query));
  }
  if (topics.empty()) return absl::InvalidArgumentError(absl::StrCat(path, " holds no victim query"));
  return topics;
}

nlohmann::json ScoreJson(const attack::TriggerScore& s) {
  return {{"objective", s.objective},
          {"retrieval", s.retrieval},
          {"uniqueness", s.uniqueness},
          {"compactness", s.compactness}};
}

// What `attack agentpoison` made: one optimized trigger per victim topic, the attack-log lines
// written, and (with --write) the stored poison passages.
struct AgentPoisonOutcome {
  const std::vector<VictimTopic>& topics;
  const std::vector<attack::AgentPoisonAttack>& attacks;  // parallel to topics
  size_t triggered_queries = 0;
  std::optional<nlohmann::json> written;  // [{"id", "state"}] with --write
  int quarantined = 0;
};

// Writes one attack-log line per victim query, carrying its topic's trigger, to `path`; returns
// how many. Unavailable (and no file left behind) if it cannot be written.
absl::StatusOr<size_t> WriteTriggeredQueries(const std::string& path, const std::vector<VictimTopic>& topics,
                                             const std::vector<attack::AgentPoisonAttack>& attacks) {
  size_t triggered_queries = 0;
  std::ofstream log(path, std::ios::trunc);
  if (!log) return absl::UnavailableError(absl::StrCat("cannot write ", path));
  for (size_t i = 0; i < topics.size(); ++i) {
    const VictimTopic& t = topics[i];
    for (const std::string& q : t.queries) {
      log << nlohmann::json{{"query", absl::StrCat(q, " ", attacks[i].trigger)},
                            {"attack", "agentpoison"},
                            {"trigger", attacks[i].trigger},
                            {"victim_query", q},
                            {"target_topic", t.topic}}
                 .dump()
          << "\n";
      ++triggered_queries;
    }
  }
  log.flush();
  if (!log) {
    std::filesystem::remove(path);
    return absl::UnavailableError(absl::StrCat("cannot write ", path));
  }
  return triggered_queries;
}

void PrintAgentPoison(const CommandEnv& env, const AgentPoisonOutcome& o, const std::string& log_file,
                      uint64_t seed) {
  if (env.json) {
    nlohmann::json per_topic = nlohmann::json::array();
    for (size_t i = 0; i < o.topics.size(); ++i) {
      per_topic.push_back({{"target_topic", o.topics[i].topic},
                           {"victim_queries", o.topics[i].queries.size()},
                           {"trigger", o.attacks[i].trigger},
                           {"initial", ScoreJson(o.attacks[i].initial_score)},
                           {"optimized", ScoreJson(o.attacks[i].score)}});
    }
    nlohmann::json j = {{"attack", "agentpoison"},
                        {"log", log_file},
                        {"triggered_queries", o.triggered_queries},
                        {"seed", seed},
                        {"topics", per_topic}};
    if (o.written) j["written"] = *o.written;
    env.out << j.dump() << "\n";
    return;
  }
  for (size_t i = 0; i < o.topics.size(); ++i) {
    const attack::AgentPoisonAttack& a = o.attacks[i];
    env.out << "topic " << (o.topics[i].topic.empty() ? "(one)" : o.topics[i].topic) << ": trigger \""
            << a.trigger << "\", objective " << a.initial_score.objective << " -> " << a.score.objective
            << " (retrieval " << a.score.retrieval << ", uniqueness " << a.score.uniqueness << ")\n";
  }
  env.out << "wrote " << o.triggered_queries << " triggered queries to " << log_file << "\n";
  if (o.written) {
    env.out << "stored " << o.written->size() << " poison passages in namespace " << env.name_space << " as "
            << kAttackPrincipal << "; the write gate quarantined " << o.quarantined << "\n";
  }
}

}  // namespace

struct AttackCommands::Flags {
  CLI::App* agentpoison = nullptr;
  std::string victims_file, benign_file, payload, log_file;
  attack::AgentPoisonOptions options;
  size_t vocabulary = 300;
  bool write = false;
};

AttackCommands::AttackCommands() : flags_(std::make_unique<Flags>()) {}
AttackCommands::~AttackCommands() = default;

void AttackCommands::Register(CLI::App& app) {
  Flags& f = *flags_;
  auto* attack = app.add_subcommand("attack", "red-team attacks against this store (DESIGN 4.8)");
  attack->require_subcommand(1);
  f.agentpoison = attack->add_subcommand(
      "agentpoison",
      "optimize AgentPoison triggers against the store's embedder and write the attack log (triggered "
      "queries, for `gate fit --triggered`)");
  f.agentpoison
      ->add_option("--victim-queries", f.victims_file,
                   "victim queries: lines, or JSONL {\"query\", \"target_topic\", \"poison_goal\"}; one "
                   "trigger per topic")
      ->required();
  f.agentpoison->add_option("-o,--out", f.log_file, "the attack log to write (JSONL)")->required();
  f.agentpoison->add_option(
      "--benign-queries", f.benign_file,
      "benign queries the trigger should move away from (AgentPoison's uniqueness term)");
  f.agentpoison->add_option("--payload", f.payload,
                            "the malicious instruction, for victims without a poison_goal");
  f.agentpoison->add_option("--trigger-tokens", f.options.trigger_tokens, "words in the trigger")
      ->capture_default_str()
      ->check(CLI::Range(1, 16));
  f.agentpoison->add_option("--sweeps", f.options.sweeps, "coordinate-search passes (0: a random trigger)")
      ->capture_default_str()
      ->check(CLI::Range(0, 64));
  f.agentpoison
      ->add_option("--candidates", f.options.candidates_per_position, "words tried per position and pass")
      ->capture_default_str()
      ->check(CLI::Range(1, 4096));
  f.agentpoison->add_option("--vocabulary", f.vocabulary, "trigger vocabulary size (WordNet lemmas)")
      ->capture_default_str()
      ->check(CLI::Range(2, 200000));
  f.agentpoison->add_option("--seed", f.options.seed, "the run is deterministic for a seed")
      ->capture_default_str();
  f.agentpoison->add_flag("--write", f.write,
                          "also store the poison passages in the namespace (signed; the write gate applies)");
  extraction_.Register(attack);
}

std::optional<int> AttackCommands::Run(const CommandEnv& env) {
  Flags& f = *flags_;
  if (auto code = extraction_.Run(env)) return code;
  if (!f.agentpoison->parsed()) return std::nullopt;

  auto topics = ReadVictims(f.victims_file, f.payload);
  if (!topics.ok()) return FailCommand(env, topics.status());
  std::vector<std::string> benign;
  if (!f.benign_file.empty()) {
    auto read = ReadQueryFile(f.benign_file);
    if (!read.ok()) return FailCommand(env, read.status());
    benign = *std::move(read);
  }
  auto store = MemoryStore::Open(env.store, env.store_options);
  if (!store.ok()) return FailCommand(env, store.status());
  const Embedder& embedder = (*store)->embedder();

  const std::vector<std::string> vocabulary = attack::DefaultTriggerVocabulary(f.vocabulary, f.options.seed);
  std::vector<attack::AgentPoisonAttack> attacks;
  std::vector<NewEntry> poison;
  for (size_t i = 0; i < topics->size(); ++i) {
    const VictimTopic& t = (*topics)[i];
    attack::AgentPoisonOptions options = f.options;
    options.seed = f.options.seed * 131 + i;  // one independent search per topic
    auto run = attack::RunAgentPoison(
        embedder, {.victim_queries = t.queries, .benign_queries = benign, .payload = t.payload}, vocabulary,
        options);
    if (!run.ok()) return FailCommand(env, run.status());
    for (NewEntry& e : run->poison) {
      if (!t.topic.empty()) e.metadata["target_topic"] = t.topic;
      poison.push_back(e);
    }
    attacks.push_back(*std::move(run));
  }

  // The log goes to a temporary file first; it replaces LOG only after the store write succeeded.
  const std::string temp_path = f.log_file + ".tmp";
  AgentPoisonOutcome outcome{*topics, attacks};
  auto triggered = WriteTriggeredQueries(temp_path, *topics, attacks);
  if (!triggered.ok()) return FailCommand(env, triggered.status());
  outcome.triggered_queries = *triggered;
  if (f.write) {
    auto added = (*store)->AddBatch(env.name_space, poison, kAttackPrincipal);
    if (!added.ok()) {
      std::filesystem::remove(temp_path);
      return FailCommand(env, added.status());
    }
    outcome.written = nlohmann::json::array();
    for (const Entry& e : *added) {
      outcome.written->push_back({{"id", e.id}, {"state", ToString(e.state)}});
      outcome.quarantined += e.state == State::kQuarantined;
    }
  }
  std::error_code ec;
  std::filesystem::rename(temp_path, f.log_file, ec);
  if (ec)
    return FailCommand(env,
                       absl::UnavailableError(absl::StrCat("cannot write ", f.log_file, ": ", ec.message())));

  PrintAgentPoison(env, outcome, f.log_file, f.options.seed);
  return 0;
}

}  // namespace bulwark::cli
