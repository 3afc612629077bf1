// The attack x defense experiment behind `bulwark-lab eval poisoning` (MemSAD paper Tables 2-3);
// attack/adaptive_eval.h is the adaptive attacker against the same deployments, and
// attack/poisoning_deployment.h the deployments themselves.
//
// Per seed, one real store (lexical embedder, every registered write-time detector enabled, the
// watermark included) in `work_dir`/poisoning-<seed>, one namespace "eval-<attack>" per attack, each set up
// like a deployment:
//   1. calibrate the gate on the namespace's query history H (benign queries + the attacked
//      victim queries, as users asked them) and on `reference` benign reference memories;
//   2. add `memories` benign memories (watermarked, as the legitimate writer marks them);
//   3. run the attack through the store's API: AgentPoison (optimized trigger, n = 5 per topic,
//      written unmarked by the attacker), MINJA (10 rounds per topic through the auto-storing
//      agent, whose records are marked like all agent writes), InjecMEM (15 anchors in one agent
//      interaction, marked), SMSR direct / paraphrase flooding (t = 3) / subtle / fluent bypass
//      (enterprise scenarios; supporting passages join the benign memories; written unmarked);
//   4. measure, from the write-time gate's typed outcomes (detect/screened_outcomes.h), each detector's TPR
//   (poison flagged), FPR
//      (benign flagged) and AUROC, and ASR-R@k, ASR-A and ASR-T of the victim queries (triggered
//      for AgentPoison) with no defense and with each detector (or the OR composite) filtering the
//      top k: ASR-A = the ExtractiveResponder's answer from that top k is the attacker's, ASR-T =
//      the agent's action on it is the attacker's target action (agent_action.h; ASR-T counts
//      only queries whose goal names a target: an address, IBAN or host).
// The agentpoison_triggered row is AgentPoison (the same triggers and poisons as agentpoison) against
// a defender who uses triggered calibration (MemSAD App. D: CalibrationRequest::trigger): one
// namespace per victim topic, "eval-agentpoison_triggered-<i>", whose H is agentpoison's H with
// every query followed by topic i's trigger, holding topic i's poisons; the row pools them (so its
// benign count is topics x that of agentpoison: every namespace holds the same benign memories).
#pragma once

#include <absl/status/statusor.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attack/eval_corpora.h"

namespace bulwark::attack {

inline const std::vector<std::string>& kPoisoningAttacks() {
  static const std::vector<std::string> kNames = {
      "agentpoison", "agentpoison_triggered",    "minja",       "injecmem",
      "smsr_direct", "smsr_paraphrase_flooding", "smsr_subtle", "smsr_fluent_bypass"};
  return kNames;
}
// The defenses measured: every registered detector (detect/detector_registry.h, in the gate's
// order), then "composite", the gate's OR of all of them, and "composite_no_watermark", the OR of
// those that do not need the writers' watermark (for deployments whose writers cannot mark).
const std::vector<std::string>& kEvalDetectors();

struct PoisoningEvalConfig {
  int memories = 300;         // benign memories per namespace, 1 .. 1400
  int history_queries = 100;  // benign queries in H, 1 .. 350
  int reference = 50;         // N benign reference memories for calibration, 2 .. 280
  int topics = 3;             // victim topics per seed (AgentPoison, MINJA, InjecMEM), 1 .. 42
  int scenarios = 4;          // enterprise scenarios per seed (SMSR variants), 1 .. 20
  int k = 5;                  // retrieval depth
  bool synonyms = true;       // lexical embedder with WordNet canonicalization (if installed)
  std::vector<std::string> attacks = kPoisoningAttacks();
};

// Called with (done, total) steps of one seed.
using EvalProgressFn = std::function<void(size_t done, size_t total)>;

// Raw per-seed outcomes (counts and scores), to be pooled over seeds by SummarizePoisoning.
// JSON: {"seed", "attacks": {name: {"poison": n, "benign": n, "queries": n,
//   "scores": {det: {"poison": [...], "benign": [...]}}, "flags": {det: {"poison": x, "benign": y}},
//   "retrieved": {"none": x, det: x...}, "answered": {...}, "acted": {...}, "action_queries": n,
//   "triggered_calibration": every namespace of the row has a triggered calibration,
//   "example": poison text}}}
[[nodiscard]] absl::StatusOr<nlohmann::json> RunPoisoningSeed(const EvalCorpora& corpora,
                                                              const PoisoningEvalConfig& config,
                                                              uint64_t seed,
                                                              const std::filesystem::path& work_dir,
                                                              const EvalProgressFn& progress = {});

// Pools seeds: {"attacks": {name: {"poison", "benign", "queries", "action_queries", "triggered_calibration",
//   "asr_r" | "asr_a": {"none": rate, det: rate} (trials: queries), "asr_t": {...} (trials: action_queries),
//   "detectors": {det: {"tpr": rate, "fpr": rate, "auroc": x}}}}} with rate = {"value",
//   "successes", "trials", "ci95": [lo, hi]} (Clopper-Pearson); and the markdown table.
struct PoisoningSummary {
  nlohmann::json json;
  std::string markdown;
};
PoisoningSummary SummarizePoisoning(const std::vector<nlohmann::json>& seeds, int k);

}  // namespace bulwark::attack
