// StringVote: the plurality of identical response strings (after NormalizeAnswer). For
// COMPARISON IN EVALUATION ONLY: it is what the Consistent Minority Effect games (SMSR), since
// copies of one injected answer outvote correct answers worded differently. The deployable
// aggregation is AggregateByEquivalence (smoothing/answer_aggregator.h).
#pragma once

#include <optional>
#include <span>
#include <string>

namespace bulwark::eval {

struct StringVoteResult {
  std::optional<std::string> winner;  // nullopt on a tie for first place or no responses
  int votes = 0;                      // runs that gave the winner
};

StringVoteResult StringVote(std::span<const std::string> responses);

}  // namespace bulwark::eval
