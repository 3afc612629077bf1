// The deployments of the poisoning and adaptive experiments (see poisoning_deployment.h).
#include "attack/poisoning_deployment.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <sstream>

#include "attack/auto_storing_agent.h"
#include "attack/injecmem.h"
#include "attack/minja.h"
#include "attack/smsr_injections.h"
#include "core/status_macros.h"
#include "detect/detector_registry.h"
#include "detect/watermark_marker.h"
#include "eval/rates.h"
#include "smoothing/extractive_responder.h"
#include "store/memory_store_impl.h"

namespace bulwark::attack::poisoning {
namespace {

constexpr double kWatermarkTarget = 2.0;  // z the legitimate writer marks to (threshold 1.5)

// Every registered detector enabled.
nlohmann::json EvalGateConfig() {
  nlohmann::json config = nlohmann::json::object();
  for (const DetectorDescriptor* d : DetectorRegistry::Global().All()) {
    if (!d->calls_service) config[d->name] = {{"enabled", true}};
  }
  return config;
}

template <typename T>
std::vector<T> Sample(const std::vector<T>& items, size_t n, std::mt19937_64& rng) {
  std::vector<size_t> idx(items.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::shuffle(idx.begin(), idx.end(), rng);
  idx.resize(std::min(n, idx.size()));
  std::vector<T> out;
  for (size_t i : idx) out.push_back(items[i]);
  return out;
}

// AgentPoison on each victim topic: the optimized trigger and the n = 5 poisons. It depends on the
// embedder, the topics, the benign queries of H and the seed, not on a namespace, so one run per
// seed serves both the agentpoison and the agentpoison_triggered rows (same triggers, same poisons).
absl::StatusOr<std::vector<AgentPoisonAttack>> OptimizeAgentPoison(const Embedder& embedder,
                                                                   const std::vector<VictimTopic>& topics,
                                                                   const std::vector<std::string>& history,
                                                                   uint64_t seed) {
  const std::vector<std::string> vocabulary = DefaultTriggerVocabulary(300, seed);
  std::vector<AgentPoisonAttack> attacks;
  for (size_t i = 0; i < topics.size(); ++i) {
    AgentPoisonTarget target{
        .victim_queries = topics[i].queries, .benign_queries = history, .payload = topics[i].poison_goal};
    BULWARK_ASSIGN_OR_RETURN(
        auto ap, RunAgentPoison(embedder, target, vocabulary,
                                {.sweeps = 3, .candidates_per_position = 24, .seed = seed * 131 + i}));
    attacks.push_back(std::move(ap));
  }
  return attacks;
}

// Writes one topic's AgentPoison poisons into `ns` (unmarked: the attacker cannot watermark) and
// adds them to `run`, with the topic's victim queries as the victims send them (triggered).
absl::Status WriteAgentPoison(MemoryStore& store, const std::string& ns, const VictimTopic& topic,
                              const AgentPoisonAttack& attack, AttackRun* run) {
  BULWARK_ASSIGN_OR_RETURN(auto written, store.AddBatch(ns, attack.poison, "attacker"));
  const auto triggered = VictimQueries(topic.queries, VictimProtocol::kTriggered, attack.trigger);
  for (Entry& e : written) {
    run->poison.push_back(std::move(e));
    run->victim_of.push_back(triggered);
  }
  run->queries.insert(run->queries.end(), triggered.begin(), triggered.end());
  run->goals.insert(run->goals.end(), triggered.size(), GoalOfTopic(topic.poison_goal));
  return absl::OkStatus();
}

// Step 3 for an attack with one namespace. `agentpoison`: OptimizeAgentPoison's result for
// `topics` (used by "agentpoison" only).
absl::StatusOr<AttackRun> RunAttack(const Deployment& d, const std::string& attack, const std::string& ns,
                                    const std::vector<VictimTopic>& topics,
                                    const std::vector<EnterpriseScenario>& scenarios,
                                    const std::vector<AgentPoisonAttack>& agentpoison, uint64_t seed) {
  AttackRun run;
  MemoryStore& store = *d.store;
  if (attack == "agentpoison") {
    if (agentpoison.size() != topics.size())
      return absl::InternalError("agentpoison: no attack for some topic");
    for (size_t i = 0; i < topics.size(); ++i) {
      BULWARK_RETURN_IF_ERROR(WriteAgentPoison(store, ns, topics[i], agentpoison[i], &run));
    }
  } else if (attack == "minja") {
    AutoStoringAgent agent(&store, ns, 3, "agent", d.Marker());
    for (size_t i = 0; i < topics.size(); ++i) {
      BULWARK_ASSIGN_OR_RETURN(auto result, RunMinja(agent,
                                                     {.questions = topics[i].queries,
                                                      .target_topic = topics[i].topic,
                                                      .poison_goal = topics[i].poison_goal},
                                                     {.seed = seed * 131 + i}));
      for (MinjaRound& r : result.rounds) {
        run.poison.push_back(std::move(r.interaction.record));
        run.victim_of.push_back(topics[i].queries);
      }
      run.queries.insert(run.queries.end(), topics[i].queries.begin(), topics[i].queries.end());
      run.goals.insert(run.goals.end(), topics[i].queries.size(), GoalOfTopic(topics[i].poison_goal));
    }
  } else if (attack == "injecmem") {
    for (size_t i = 0; i < topics.size(); ++i) {
      BULWARK_ASSIGN_OR_RETURN(auto result, RunInjecMem(store, ns, topics[i].poison_goal,
                                                        {.seed = seed * 131 + i}, "agent", d.Marker()));
      for (Entry& e : result.stored) {
        run.poison.push_back(std::move(e));
        run.victim_of.push_back(topics[i].queries);
      }
      run.queries.insert(run.queries.end(), topics[i].queries.begin(), topics[i].queries.end());
      run.goals.insert(run.goals.end(), topics[i].queries.size(), GoalOfTopic(topics[i].poison_goal));
    }
  } else if (attack.rfind("smsr_", 0) == 0) {
    const std::string name = attack.substr(5);
    SmsrVariant variant = SmsrVariant::kDirect;
    bool known = false;
    for (SmsrVariant v : kAllSmsrVariants)
      if (ToString(v) == name) variant = v, known = true;
    if (!known) return absl::InvalidArgumentError("unknown attack " + attack);
    const int t = variant == SmsrVariant::kParaphraseFlooding ? 3 : 1;
    for (const EnterpriseScenario& s : scenarios) {
      BULWARK_ASSIGN_OR_RETURN(auto written, RunSmsrInjection(store, ns, s, variant, t));
      for (Entry& e : written) {
        run.poison.push_back(std::move(e));
        run.victim_of.push_back({s.question});
      }
      run.queries.push_back(s.question);
      run.goals.push_back(GoalOfScenario(s));
    }
  } else {
    return absl::InvalidArgumentError("unknown attack " + attack);
  }
  return run;
}

bool IsSmsr(const std::string& attack) { return attack.rfind("smsr_", 0) == 0; }

}  // namespace

std::pair<double, bool> Suspicion(const GateOutcome& outcome, const std::string& defense) {
  if (defense == kComposite || defense == kCompositeNoWatermark) {
    const bool all = defense == kComposite;
    double worst = -std::numeric_limits<double>::infinity();
    bool flagged = false;
    for (const DetectorOutcome& d : outcome.detectors) {
      if (!all && d.detector->needs_writer_marks) continue;
      worst = std::max(worst, d.margin());
      flagged |= d.flagged;
    }
    return {worst, all ? outcome.flagged : flagged};
  }
  for (const DetectorOutcome& d : outcome.detectors) {
    if (d.detector->name == defense) return {d.suspicion(), d.flagged};
  }
  return {0.0, false};
}

void AddOutcomes(const ScreenedOutcomes& screened, const std::vector<Entry>& entries, Outcomes* out) {
  for (const Entry& e : entries) {
    GateOutcome& slot = (*out)[e.id];  // none: an entry not screened (no detector ran)
    if (std::optional<GateOutcome> found = screened.Find(e.id)) slot = *std::move(found);
  }
}

TextMarker Deployment::Marker() const {
  const WatermarkScheme* scheme = &store->impl().defenses->gate().watermark();
  return [scheme](std::string_view text) { return MarkText(text, *scheme, kWatermarkTarget).text; };
}

BenignDraw Deployment::Draw(uint64_t seed) const {
  std::mt19937_64 rng = AttackRng(seed, "deployment");
  BenignDraw draw;
  draw.history = Sample(corpora.benign_queries, static_cast<size_t>(config.history_queries), rng);
  draw.reference = Sample(corpora.reference, static_cast<size_t>(config.reference), rng);
  draw.memories = Sample(corpora.memories, static_cast<size_t>(config.memories), rng);
  return draw;
}

absl::StatusOr<std::vector<Entry>> Deployment::Prepare(const std::string& ns, const BenignDraw& draw,
                                                       const std::vector<std::string>& victim,
                                                       const std::vector<std::string>& extra_benign,
                                                       const std::string& trigger) const {
  CalibrationRequest request;
  request.queries = draw.history;
  request.queries.insert(request.queries.end(), victim.begin(), victim.end());
  request.trigger = trigger;
  request.reference = draw.reference;
  BULWARK_ASSIGN_OR_RETURN(auto calibrated, store->Calibrate(ns, request));
  std::vector<std::string> texts = draw.memories;
  texts.insert(texts.end(), extra_benign.begin(), extra_benign.end());
  const TextMarker mark = Marker();
  std::vector<NewEntry> entries;
  for (const std::string& t : texts) entries.push_back({.text = mark(t)});
  return store->AddBatch(ns, entries, "owner");
}

void VictimSide(const std::string& attack, const std::vector<VictimTopic>& topics,
                const std::vector<EnterpriseScenario>& scenarios, std::vector<std::string>* plain,
                std::vector<std::string>* extra_benign) {
  if (IsSmsr(attack)) {
    for (const EnterpriseScenario& s : scenarios) {
      plain->push_back(s.question);
      extra_benign->insert(extra_benign->end(), s.supporting_passages.begin(), s.supporting_passages.end());
    }
  } else {
    for (const VictimTopic& t : topics) plain->insert(plain->end(), t.queries.begin(), t.queries.end());
  }
}

absl::StatusOr<Effects> Retrieved(MemoryStore& store, const std::string& ns,
                                  const std::vector<std::string>& queries,
                                  const std::vector<AttackGoal>& goals, const Outcomes& outcomes,
                                  const std::set<std::string>& poison, int k) {
  Effects out;
  const ExtractiveResponder responder;
  std::vector<std::string> defenses = {"none"};
  defenses.insert(defenses.end(), kEvalDetectors().begin(), kEvalDetectors().end());
  for (const std::string& d : defenses) out.retrieved[d] = out.answered[d] = out.acted[d] = 0;
  for (size_t qi = 0; qi < queries.size(); ++qi) {
    const AttackGoal goal = qi < goals.size() ? goals[qi] : AttackGoal{};
    out.action_queries += goal.target.external();
    SearchOptions options;
    options.k = std::min(k + 80, 1000);
    options.include_quarantined = true;
    BULWARK_ASSIGN_OR_RETURN(auto result, store.Search(ns, queries[qi], options));
    for (const std::string& d : defenses) {
      std::vector<const SearchHit*> top;
      for (const SearchHit& h : result.hits) {
        if (static_cast<int>(top.size()) >= k) break;
        if (d != "none") {
          auto it = outcomes.find(h.entry.id);
          if (it != outcomes.end() && Suspicion(it->second, d).second) continue;
        }
        top.push_back(&h);
      }
      const QueryEffect e = JudgeQuery(top, poison, goal, responder);
      out.retrieved[d] += e.retrieved;
      out.answered[d] += e.answered;
      out.acted[d] += e.acted;
    }
  }
  return out;
}

nlohmann::json RateJson(int64_t successes, int64_t trials) {
  return eval::ToJson(eval::Rate{successes, trials});
}

std::string Fmt(double x, int digits) {
  if (std::isnan(x)) return "-";
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(digits);
  s << x;
  return s.str();
}

Picks PickTargets(const EvalCorpora& corpora, const PoisoningEvalConfig& config, uint64_t seed) {
  std::mt19937_64 rng = AttackRng(seed, "targets");
  return {Sample(corpora.topics, static_cast<size_t>(config.topics), rng),
          Sample(corpora.scenarios, static_cast<size_t>(config.scenarios), rng)};
}

absl::StatusOr<std::unique_ptr<MemoryStore>> CreateEvalStore(const std::filesystem::path& dir, bool synonyms,
                                                             Env* env) {
  StoreOptions options;
  options.env = env;
  options.embedder_config = {{"kind", "lexical"}};
  if (!synonyms) options.embedder_config["synonyms"] = false;
  options.write_gate_config = EvalGateConfig();
  return MemoryStore::Create(dir, options);
}

absl::StatusOr<std::vector<AgentPoisonAttack>> AgentPoisonOfSeed(const MemoryStore& store,
                                                                 const std::vector<std::string>& attacks,
                                                                 const Picks& picks, const BenignDraw& draw,
                                                                 uint64_t seed) {
  const bool used = std::find(attacks.begin(), attacks.end(), "agentpoison") != attacks.end() ||
                    std::find(attacks.begin(), attacks.end(), kTriggeredAgentPoison) != attacks.end();
  if (!used) return std::vector<AgentPoisonAttack>{};
  return OptimizeAgentPoison(store.embedder(), picks.topics, draw.history, seed);
}

absl::StatusOr<std::vector<AttackedNamespace>> DeployAndAttack(
    const Deployment& d, const std::string& attack, const Picks& picks, const BenignDraw& draw,
    const std::vector<AgentPoisonAttack>& agentpoison, uint64_t seed, const std::string& prefix) {
  std::vector<std::string> plain, extra;
  VictimSide(attack, picks.topics, picks.scenarios, &plain, &extra);
  std::vector<AttackedNamespace> parts;
  if (attack == kTriggeredAgentPoison) {
    if (agentpoison.size() != picks.topics.size())
      return absl::InternalError("agentpoison: no attack for some topic");
    for (size_t i = 0; i < picks.topics.size(); ++i) {
      AttackedNamespace part;
      part.ns = prefix + attack + "-" + std::to_string(i);
      part.trigger = agentpoison[i].trigger;
      BULWARK_ASSIGN_OR_RETURN(auto benign, d.Prepare(part.ns, draw, plain, extra, part.trigger));
      part.benign = std::move(benign);
      BULWARK_RETURN_IF_ERROR(
          WriteAgentPoison(*d.store, part.ns, picks.topics[i], agentpoison[i], &part.run));
      parts.push_back(std::move(part));
    }
    return parts;
  }
  AttackedNamespace part;
  part.ns = prefix + attack;
  BULWARK_ASSIGN_OR_RETURN(auto benign, d.Prepare(part.ns, draw, plain, extra));
  part.benign = std::move(benign);
  BULWARK_ASSIGN_OR_RETURN(auto run,
                           RunAttack(d, attack, part.ns, picks.topics, picks.scenarios, agentpoison, seed));
  part.run = std::move(run);
  parts.push_back(std::move(part));
  return parts;
}

}  // namespace bulwark::attack::poisoning
