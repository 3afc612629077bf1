// Aggregation of the runs of smoothed retrieval (SMSR Component 2): group the nruns responses
// into classes of equivalent answers with an EquivalenceJudge, and return the class that holds a
// strict majority of the runs, or abstain ("no consistent answer"). Grouping by meaning rather
// than by string defeats the Consistent Minority Effect, where identical injected responses win a
// string plurality against correct answers that are worded differently.
#pragma once

#include <absl/status/statusor.h>

#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "smoothing/equivalence_judge.h"

namespace bulwark {

struct AnswerGroup {
  std::string answer;     // the group's first response (its representative)
  std::vector<int> runs;  // indexes of the runs whose response is in this group
};

struct AggregatedAnswer {
  std::vector<AnswerGroup> groups;  // in order of first appearance
  int majority = -1;                // index into groups, or -1: abstain
  bool abstained() const { return majority < 0; }
};

// Groups `responses` by complete linkage: each response, in run order, joins the first group all
// of whose members the judge finds equivalent to it (equal strings after trimming and case
// folding count as equivalent without asking), else starts a group. A group is thus a set of
// mutually equivalent answers: an injected answer cannot ride into the majority on its likeness
// to one correct answer. A group wins when 2 * size > responses.size(). Errors from the judge;
// InvalidArgument for no responses.
[[nodiscard]] absl::StatusOr<AggregatedAnswer> AggregateByEquivalence(std::string_view question,
                                                                      std::span<const std::string> responses,
                                                                      const EquivalenceJudge& judge);

// Lowercased, whitespace-collapsed, trimmed: the form in which two responses are "the same string".
std::string NormalizeAnswer(std::string_view answer);

}  // namespace bulwark
