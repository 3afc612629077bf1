// The adaptive-attacker experiment behind `bulwark-lab eval adaptive` (MemSAD paper Table 4 /
// Table 18): the poisons of `eval poisoning` (attack/poisoning_eval.h), rewritten by the greedy
// synonym attack (attack/synonym_attack.h) to evade MemSAD or MemSAD+, against deployments set up
// like the poisoning experiment's (attack/poisoning_deployment.h).
//
// Evaluation-only code: linked by bulwark-lab, never by the product binary.
#pragma once

#include <absl/status/statusor.h>

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attack/eval_corpora.h"
#include "attack/poisoning_eval.h"

namespace bulwark::attack {

struct AdaptiveEvalConfig {
  PoisoningEvalConfig base;  // attacks: agentpoison, minja, injecmem by default
  int max_substitutions = 16;
  std::vector<std::string> targets = {"memsad", "memsad_plus"};  // detector sets to evade
};

// Per seed: the poisons of each attack (built as in poisoning_eval.h, in namespace orig-<attack>) and, for
// the memsad target ({"memsad"}) and the memsad_plus target ({"memsad", "memsad_plus"}, MemSAD+ = either
// flags), the greedy synonym attack on every poison against a sibling namespace prepared identically (same
// benign memories, H and calibration, no poison yet); the substituted poisons are then written there. Flags
// before and after come from that namespace's gate; ASR-R before from orig-<attack>, after from the sibling.
// JSON: {"seed", "attacks": {name: {target: {"poison",
//   "flagged_before", "flagged_after", "evaded", "substitutions", "similarity_delta",
//   "retrieved_before", "retrieved_after", "queries"}}}}.
[[nodiscard]] absl::StatusOr<nlohmann::json> RunAdaptiveSeed(const EvalCorpora& corpora,
                                                             const AdaptiveEvalConfig& config, uint64_t seed,
                                                             const std::filesystem::path& work_dir,
                                                             const EvalProgressFn& progress = {});
PoisoningSummary SummarizeAdaptive(const std::vector<nlohmann::json>& seeds);

}  // namespace bulwark::attack
