#include "cli/extraction_attack_command.h"

#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attack/extraction/extraction_target.h"
#include "attack/extraction/http_extraction_target.h"
#include "attack/extraction/run_extraction.h"
#include "store/memory_store.h"

namespace bulwark::cli {

struct ExtractionAttackCommand::Flags {
  CLI::App* command = nullptr;
  std::vector<std::string> attacks;
  extraction::ExtractionAttackOptions options;
  std::string log_file, url, llm_json, embedder_json;
};

ExtractionAttackCommand::ExtractionAttackCommand() : flags_(std::make_unique<Flags>()) {}
ExtractionAttackCommand::~ExtractionAttackCommand() = default;

void ExtractionAttackCommand::Register(CLI::App* attack) {
  Flags& f = *flags_;
  f.command = attack->add_subcommand(
      "extraction",
      "run extraction attacks (and benign sessions) against the store or a running service and write "
      "the attack log (JSONL, one line per query) that `honeypots fit` reads");
  std::vector<std::string> names = extraction::ExtractionAttackNames();
  names.push_back("all");
  f.command->add_option("--attack", f.attacks, "attack to run (repeatable): " + absl::StrJoin(names, ", "))
      ->required()
      ->check(CLI::IsMember(names));
  f.command->add_option("-o,--out", f.log_file, "the attack log to write")->required();
  f.command->add_option("--sessions", f.options.sessions, "sessions per attack (benign: per length)")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  f.command->add_option("--rounds", f.options.budget.queries, "queries per attack session")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000));
  f.command->add_option("-k", f.options.budget.k, "hits asked for per query")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  f.command->add_option("--seed", f.options.seed, "the run is deterministic for a seed")
      ->capture_default_str();
  f.command->add_option("--topics", f.options.topics,
                        "the agent's domain words (IKEA topics, restart words)");
  f.command->add_option("--benign-queries", f.options.benign_query_files,
                        "query files for the benign sessions (repeatable; needed for --attack benign)");
  f.command->add_option("--benign-memories", f.options.benign_memories_file,
                        "a memory corpus the benign sessions' follow-ups draw on");
  f.command->add_option("--llm", f.llm_json,
                        R"(LLM for MEXTRA, RAG-Thief and IKEA as JSON {"url", "model", "api_key_env", ...})");
  f.command->add_option("--url", f.url,
                        "attack a running service instead of the local store (key from $BULWARK_API_KEY)");
  f.command->add_option(
      "--embedder", f.embedder_json,
      "with --url: the attacker's copy of the service's embedder as JSON (default lexical)");
}

std::optional<int> ExtractionAttackCommand::Run(const CommandEnv& env) {
  Flags& f = *flags_;
  if (f.command == nullptr || !f.command->parsed()) return std::nullopt;
  extraction::ExtractionAttackOptions options = f.options;
  for (const std::string& a : f.attacks) {
    if (a != "all") {
      options.attacks.push_back(a);
      continue;
    }
    for (const std::string& name : extraction::ExtractionAttackNames()) {
      if (name != "benign" || !options.benign_query_files.empty()) options.attacks.push_back(name);
    }
  }
  for (auto [text, out] :
       {std::pair{&f.llm_json, &options.llm}, std::pair{&f.embedder_json, &options.embedder_config}}) {
    if (text->empty()) continue;
    *out = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
    if (!out->is_object())
      return FailCommand(env, absl::InvalidArgumentError(absl::StrCat(*text, " is not a JSON object")));
  }
  std::unique_ptr<MemoryStore> store;
  std::unique_ptr<extraction::ExtractionTarget> target;
  if (!f.url.empty()) {
    const char* key = std::getenv("BULWARK_API_KEY");
    auto http = extraction::HttpExtractionTarget::Create(
        {.url = f.url, .api_key = key ? key : "", .name_space = env.name_space});
    if (!http.ok()) return FailCommand(env, http.status());
    target = *std::move(http);
  } else {
    auto opened = MemoryStore::Open(env.store, env.store_options);
    if (!opened.ok()) return FailCommand(env, opened.status());
    store = *std::move(opened);
    options.embedder = &store->embedder();
    // The red team's probes must not become the namespace's query history (MemSAD's H).
    target = std::make_unique<extraction::StoreExtractionTarget>(store.get(), env.name_space,
                                                                 /*record_queries=*/false);
  }
  // The log goes to a temporary file first and replaces LOG only when every session ran.
  const std::string temp_path = f.log_file + ".tmp";
  absl::StatusOr<std::vector<extraction::ExtractionSessionSummary>> summaries;
  {
    std::ofstream log(temp_path, std::ios::trunc);
    if (!log) return FailCommand(env, absl::UnavailableError(absl::StrCat("cannot write ", temp_path)));
    summaries = extraction::RunExtractionAttacks(options, *target, log);
    log.flush();
    if (summaries.ok() && !log) summaries = absl::UnavailableError(absl::StrCat("cannot write ", temp_path));
  }
  std::error_code ec;
  if (!summaries.ok()) {
    std::filesystem::remove(temp_path, ec);
    return FailCommand(env, summaries.status());
  }
  std::filesystem::rename(temp_path, f.log_file, ec);
  if (ec)
    return FailCommand(env,
                       absl::UnavailableError(absl::StrCat("cannot write ", f.log_file, ": ", ec.message())));
  nlohmann::json sessions = nlohmann::json::array();
  for (const extraction::ExtractionSessionSummary& s : *summaries) {
    sessions.push_back({{"attack", s.attack},
                        {"session", s.session},
                        {"queries", s.queries},
                        {"unique_hits", s.unique_hits},
                        {"refused", s.refused}});
    if (!env.json) {
      env.out << s.attack << "  " << s.session << "  " << s.queries << " queries, " << s.unique_hits
              << " distinct memories returned, " << s.refused << " refused\n";
    }
  }
  if (env.json) {
    env.out << nlohmann::json{{"log", f.log_file}, {"seed", options.seed}, {"sessions", sessions}}.dump()
            << "\n";
  } else {
    env.out << "wrote " << summaries->size() << " sessions to " << f.log_file << "\n";
  }
  return 0;
}

}  // namespace bulwark::cli
