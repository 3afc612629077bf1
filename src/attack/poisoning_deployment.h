// The deployments that `bulwark-lab eval poisoning` and `eval adaptive` attack
// (attack/poisoning_eval.h, attack/adaptive_eval.h describe the protocol): a seeded evaluation
// store, the benign side of a seed (query history H, calibration reference, memories), steps 1-3
// for one attack row (calibrate, write the benign memories, run the attack through the store's
// API), and the retrieval effects of the poisons with and without each defense.
//
// Evaluation-only code: linked by bulwark-lab, never by the product binary.
#pragma once

#include <absl/base/thread_annotations.h>
#include <absl/status/statusor.h>
#include <absl/synchronization/mutex.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "attack/agent_action.h"
#include "attack/agentpoison_trigger.h"
#include "attack/attack.h"
#include "attack/eval_corpora.h"
#include "attack/poisoning_eval.h"
#include "bulwark/env.h"
#include "core/seeded_csprng.h"
#include "detect/screened_outcomes.h"
#include "detect/write_gate.h"
#include "embed/synonym_table.h"
#include "store/memory_store.h"

namespace bulwark::attack::poisoning {

inline constexpr char kTriggeredAgentPoison[] = "agentpoison_triggered";
inline constexpr char kComposite[] = "composite";
inline constexpr char kCompositeNoWatermark[] = "composite_no_watermark";

// The verdict of `defense` (a detector's name, kComposite or kCompositeNoWatermark) in an entry's
// gate outcome: (suspicion score, flagged). Suspicion is the score oriented so that higher is more
// suspicious (DetectorOutcome::suspicion); a composite is the OR with the largest normalized
// margin (DetectorOutcome::margin) as its score. An entry without an outcome is (-inf, false) for
// a composite and (0, false) for a detector, as is a detector that did not run.
std::pair<double, bool> Suspicion(const GateOutcome& outcome, const std::string& defense);

// The gate outcomes of a set of stored entries, by id (from the store's ScreenedOutcomes).
using Outcomes = std::map<std::string, GateOutcome>;
void AddOutcomes(const ScreenedOutcomes& screened, const std::vector<Entry>& entries, Outcomes* out);

// The benign side of a seed's deployments, drawn once (Deployment::Draw).
struct BenignDraw {
  std::vector<std::string> history;    // the benign queries of H
  std::vector<std::string> reference;  // M_ref for calibration
  std::vector<std::string> memories;   // the benign memories written into each namespace
};

struct Deployment {
  MemoryStore* store;
  const EvalCorpora& corpora;
  const PoisoningEvalConfig& config;
  std::shared_ptr<const SynonymTable> synonyms;

  // Marks text as the legitimate writer does (the store's watermark scheme).
  TextMarker Marker() const;

  // The benign inputs of steps 1-2 for `seed`: the same for every namespace of the seed.
  BenignDraw Draw(uint64_t seed) const;

  // Steps 1-2 of poisoning_eval.h: calibrates `ns` on H = draw.history + `victim` and on
  // draw.reference, then writes draw.memories + `extra_benign`, watermarked. A non-empty `trigger`
  // makes the calibration triggered (MemSAD App. D: every query of H followed by " " + trigger).
  // Returns the benign entries; the store's calibration and write errors.
  [[nodiscard]] absl::StatusOr<std::vector<Entry>> Prepare(const std::string& ns, const BenignDraw& draw,
                                                           const std::vector<std::string>& victim,
                                                           const std::vector<std::string>& extra_benign,
                                                           const std::string& trigger = {}) const;
};

// One attack's poisons as stored, and the victim queries (as the victims send them) per poison group.
struct AttackRun {
  std::vector<Entry> poison;
  std::vector<std::vector<std::string>> victim_of;  // per poison entry: its victim queries
  std::vector<std::string> queries;                 // all victim queries, each once
  std::vector<AttackGoal> goals;                    // per query: what the attacker wants answered / done
};

// Victim-side inputs of an attack: the plain victim queries that go into H, and extra benign texts.
void VictimSide(const std::string& attack, const std::vector<VictimTopic>& topics,
                const std::vector<EnterpriseScenario>& scenarios, std::vector<std::string>* plain,
                std::vector<std::string>* extra_benign);

// Per defense ("none" and each detector), counts over the victim queries of: a poison in the top k
// after removing the entries the defense flagged (ASR-R), the extractive answer from that top k
// being the attacker's (ASR-A), and the agent's action on it being the attacker's target (ASR-T,
// over the `action_queries` whose goal names a target). agent_action.h defines the steps.
struct Effects {
  std::map<std::string, int> retrieved, answered, acted;
  int action_queries = 0;
};
[[nodiscard]] absl::StatusOr<Effects> Retrieved(MemoryStore& store, const std::string& ns,
                                                const std::vector<std::string>& queries,
                                                const std::vector<AttackGoal>& goals,
                                                const Outcomes& outcomes, const std::set<std::string>& poison,
                                                int k);

// {"value", "successes", "trials", "ci95": Clopper-Pearson} (eval/rates.h).
nlohmann::json RateJson(int64_t successes, int64_t trials);

// `x` with `digits` decimals; "-" for NaN.
std::string Fmt(double x, int digits = 2);

// The seed's victim topics and enterprise scenarios.
struct Picks {
  std::vector<VictimTopic> topics;
  std::vector<EnterpriseScenario> scenarios;
};
Picks PickTargets(const EvalCorpora& corpora, const PoisoningEvalConfig& config, uint64_t seed);

// The system clock, and randomness (signing and watermark keys) from a seeded CSPRNG, so that a
// run is deterministic for its seed. Must outlive the store.
class SeededEnv final : public Env {
 public:
  explicit SeededEnv(uint64_t seed) : rng_(SeedOf(seed)) {}
  int64_t NowMicros() override { return Env::Default()->NowMicros(); }
  void RandomBytes(std::span<uint8_t> out) override {
    absl::MutexLock lock(&mu_);
    rng_.Fill(out);
  }

 private:
  static SeededCsprng::Seed SeedOf(uint64_t seed) {
    SeededCsprng::Seed s{};
    for (int b = 0; b < 8; ++b) s[b] = static_cast<uint8_t>(seed >> (8 * b));
    s[8] = 0xe7;  // domain: eval stores
    return s;
  }
  absl::Mutex mu_;
  SeededCsprng rng_ ABSL_GUARDED_BY(mu_);
};

// A new store in `dir` (lexical embedder, with WordNet synonyms when `synonyms`; every registered
// detector enabled) whose randomness comes from `env`. MemoryStore::Create's errors.
[[nodiscard]] absl::StatusOr<std::unique_ptr<MemoryStore>> CreateEvalStore(const std::filesystem::path& dir,
                                                                           bool synonyms, Env* env);

// AgentPoison on each of the seed's topics (the optimized trigger and the n = 5 poisons) when
// `attacks` has an AgentPoison row; else no attacks. It depends on the embedder, the topics, the
// benign queries of H and the seed, not on a namespace, so one run per seed serves both the
// agentpoison and the agentpoison_triggered rows (same triggers, same poisons).
[[nodiscard]] absl::StatusOr<std::vector<AgentPoisonAttack>> AgentPoisonOfSeed(
    const MemoryStore& store, const std::vector<std::string>& attacks, const Picks& picks,
    const BenignDraw& draw, uint64_t seed);

// One namespace of an attack row after step 3: its benign entries and the attack's poisons.
struct AttackedNamespace {
  std::string ns;
  std::string trigger;  // the trigger its calibration was made with; empty for plain calibration
  std::vector<Entry> benign;
  AttackRun run;
};

// Steps 1-3 for one attack row. agentpoison_triggered gets one namespace per victim topic,
// "<prefix>agentpoison_triggered-<i>" (a calibration takes one trigger, and each topic has its
// own), calibrated on the same queries as agentpoison's H, each followed by topic i's trigger, and
// holding topic i's poisons; every other attack gets one namespace "<prefix><attack>" with plain
// calibration. `agentpoison`: AgentPoisonOfSeed's result (needed by the two AgentPoison rows).
// InvalidArgument for an unknown attack; the store's and the attacks' errors.
[[nodiscard]] absl::StatusOr<std::vector<AttackedNamespace>> DeployAndAttack(
    const Deployment& d, const std::string& attack, const Picks& picks, const BenignDraw& draw,
    const std::vector<AgentPoisonAttack>& agentpoison, uint64_t seed, const std::string& prefix);

}  // namespace bulwark::attack::poisoning
