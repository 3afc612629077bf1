// Majority over classes of equivalent answers (see answer_aggregator.h).
#include "smoothing/answer_aggregator.h"

#include <absl/strings/ascii.h>

#include "core/status_macros.h"

namespace bulwark {

std::string NormalizeAnswer(std::string_view answer) {
  std::string out;
  bool space = false;
  for (char c : answer) {
    if (absl::ascii_isspace(static_cast<unsigned char>(c))) {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += absl::ascii_tolower(static_cast<unsigned char>(c));
  }
  return out;
}

absl::StatusOr<AggregatedAnswer> AggregateByEquivalence(std::string_view question,
                                                        std::span<const std::string> responses,
                                                        const EquivalenceJudge& judge) {
  if (responses.empty()) return absl::InvalidArgumentError("no responses to aggregate");
  BULWARK_ASSIGN_OR_RETURN(auto comparison, judge.Compare(question, responses));
  std::vector<std::string> normalized;
  for (const std::string& r : responses) normalized.push_back(NormalizeAnswer(r));
  AggregatedAnswer out;
  for (size_t r = 0; r < responses.size(); ++r) {
    int joined = -1;
    for (size_t g = 0; g < out.groups.size() && joined < 0; ++g) {
      bool all = true;
      for (int member : out.groups[g].runs) {
        if (normalized[member] == normalized[r]) continue;
        BULWARK_ASSIGN_OR_RETURN(auto equivalent, comparison->Equivalent(member, r));
        if (!equivalent) {
          all = false;
          break;
        }
      }
      if (all) joined = static_cast<int>(g);
    }
    if (joined < 0) {
      out.groups.push_back({responses[r], {}});
      joined = static_cast<int>(out.groups.size()) - 1;
    }
    out.groups[joined].runs.push_back(static_cast<int>(r));
  }
  for (size_t g = 0; g < out.groups.size(); ++g) {
    if (2 * out.groups[g].runs.size() > responses.size()) out.majority = static_cast<int>(g);
  }
  return out;
}

}  // namespace bulwark
