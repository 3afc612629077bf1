// SMSR authenticated injection variants.
#include "attack/smsr_injections.h"

#include <absl/strings/str_replace.h>

#include "core/status_macros.h"

namespace bulwark::attack {

std::string_view ToString(SmsrVariant variant) {
  switch (variant) {
    case SmsrVariant::kDirect:
      return "direct";
    case SmsrVariant::kParaphraseFlooding:
      return "paraphrase_flooding";
    case SmsrVariant::kSubtle:
      return "subtle";
    case SmsrVariant::kFluentBypass:
      return "fluent_bypass";
  }
  return "unknown";
}

std::string FluentBypassText(const EnterpriseScenario& scenario) {
  // Surface cues of the heuristic filters are rewritten: "@" and URL schemes disappear.
  const std::string answer = absl::StrReplaceAll(
      scenario.malicious_answer, {{"@", " at "}, {"https://", ""}, {"http://", ""}, {"Update:", ""}});
  return "From the " + scenario.company + " handbook, on the question \"" + scenario.question +
         "\": " + answer;
}

absl::StatusOr<std::vector<NewEntry>> BuildSmsrInjection(const EnterpriseScenario& scenario,
                                                         SmsrVariant variant, int t) {
  if (t < 1 || t > 100) return absl::InvalidArgumentError("smsr: t must be in 1..100");
  std::vector<NewEntry> out;
  for (int i = 0; i < t; ++i) {
    NewEntry e;
    switch (variant) {
      case SmsrVariant::kDirect:
        e.text = scenario.injected_claim;
        break;
      case SmsrVariant::kParaphraseFlooding:
        e.text = scenario.paraphrases.empty() ? scenario.injected_claim
                                              : scenario.paraphrases[i % scenario.paraphrases.size()];
        break;
      case SmsrVariant::kSubtle:
        e.text = scenario.subtle_claim;
        break;
      case SmsrVariant::kFluentBypass:
        e.text = FluentBypassText(scenario);
        break;
    }
    e.metadata = {{"attack", "smsr_" + std::string(ToString(variant))}, {"scenario", scenario.id}};
    e.source = Source::kUser;
    out.push_back(std::move(e));
  }
  return out;
}

absl::StatusOr<std::vector<Entry>> RunSmsrInjection(MemoryStore& store, std::string_view name_space,
                                                    const EnterpriseScenario& scenario, SmsrVariant variant,
                                                    int t, std::string_view principal) {
  BULWARK_ASSIGN_OR_RETURN(auto entries, BuildSmsrInjection(scenario, variant, t));
  return store.AddBatch(name_space, entries, principal);
}

}  // namespace bulwark::attack
