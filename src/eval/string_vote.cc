// Plurality over normalized strings (see string_vote.h).
#include "eval/string_vote.h"

#include <map>

#include "smoothing/answer_aggregator.h"

namespace bulwark::eval {

StringVoteResult StringVote(std::span<const std::string> responses) {
  std::map<std::string, std::pair<int, std::string>> counts;  // normalized -> (votes, first spelling)
  for (const std::string& r : responses) {
    auto [it, inserted] = counts.try_emplace(NormalizeAnswer(r), 0, r);
    ++it->second.first;
  }
  StringVoteResult result;
  bool tie = false;
  for (const auto& [norm, entry] : counts) {
    if (entry.first > result.votes) {
      result = {entry.second, entry.first};
      tie = false;
    } else if (entry.first == result.votes) {
      tie = true;
    }
  }
  if (tie) result.winner.reset();
  return result;
}

}  // namespace bulwark::eval
