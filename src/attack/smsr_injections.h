// SMSR authenticated injections (SMSR paper, "authenticated adversary"): an adversary with valid
// credentials writes t signed entries through the ordinary API to make the agent answer the
// scenario's question q* with the malicious answer. Variants:
//   direct               t identical copies of the injected claim ("policy update")
//   paraphrase_flooding  t distinct rewordings of the claim (the scenario's paraphrases, cycled)
//   subtle               a plausible, slightly wrong variant (subtle_claim), t copies
//   fluent_bypass        fluent text that echoes q* and states the malicious answer while avoiding
//                        the surface cues heuristic filters key on (addresses written "x at y",
//                        no "update"/"new policy" framing, no URLs); t copies
// All are signed by the store like any legitimate write: provenance (SMSR Component 1) does not
// stop them; the write-time detectors and smoothing (Component 2) must.
#pragma once

#include <absl/status/statusor.h>

#include <string>
#include <string_view>
#include <vector>

#include "attack/enterprise_scenario.h"
#include "store/memory_store.h"

namespace bulwark::attack {

enum class SmsrVariant { kDirect, kParaphraseFlooding, kSubtle, kFluentBypass };
inline constexpr SmsrVariant kAllSmsrVariants[] = {SmsrVariant::kDirect, SmsrVariant::kParaphraseFlooding,
                                                   SmsrVariant::kSubtle, SmsrVariant::kFluentBypass};
std::string_view ToString(SmsrVariant variant);  // "direct", "paraphrase_flooding", "subtle", "fluent_bypass"

// The t entries of the variant (metadata {"attack": "smsr_<variant>", "scenario": id}).
// InvalidArgument unless 1 <= t <= 100.
[[nodiscard]] absl::StatusOr<std::vector<NewEntry>> BuildSmsrInjection(const EnterpriseScenario& scenario,
                                                                       SmsrVariant variant, int t);

// The fluent heuristic-bypass text for a scenario.
std::string FluentBypassText(const EnterpriseScenario& scenario);

// Builds and writes the injection in one AddBatch as `principal` (an authenticated writer).
// Returns the stored (signed) entries.
[[nodiscard]] absl::StatusOr<std::vector<Entry>> RunSmsrInjection(MemoryStore& store,
                                                                  std::string_view name_space,
                                                                  const EnterpriseScenario& scenario,
                                                                  SmsrVariant variant, int t,
                                                                  std::string_view principal = "insider");

}  // namespace bulwark::attack
