// EquivalenceJudge: decides which answers to the same question say the same thing. The deployable
// aggregation of smoothed retrieval groups runs by this relation (it knows neither the right nor
// the malicious answer). Implementations: EmbeddingEquivalence (the default) and LlmEquivalence
// (a chat model's judgement, used when an LLM is configured).
//
// A judge compares the answers of one query as a set (Compare), so it can prepare once, e.g.
// embed every answer in one batch, and the aggregator asks only for the pairs it needs.
#pragma once

#include <absl/status/statusor.h>

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "core/status_macros.h"

namespace bulwark {

// The equivalence relation over one query's answers, by index. Not thread-safe.
class AnswerComparison {
 public:
  virtual ~AnswerComparison() = default;
  // True if answers i and j say the same thing. Errors from the backend.
  [[nodiscard]] virtual absl::StatusOr<bool> Equivalent(size_t i, size_t j) = 0;
};

class EquivalenceJudge {
 public:
  virtual ~EquivalenceJudge() = default;
  // "embedding", "llm"
  virtual std::string_view name() const = 0;
  // Prepares comparisons among `answers` to `question`; both must outlive the result. Errors from
  // the backend.
  [[nodiscard]] virtual absl::StatusOr<std::unique_ptr<AnswerComparison>> Compare(
      std::string_view question, std::span<const std::string> answers) const = 0;

  // One comparison of two answers.
  [[nodiscard]] absl::StatusOr<bool> Equivalent(std::string_view question, std::string_view a,
                                                std::string_view b) const {
    const std::string answers[] = {std::string(a), std::string(b)};
    BULWARK_ASSIGN_OR_RETURN(auto comparison, Compare(question, answers));
    return comparison->Equivalent(0, 1);
  }
};

}  // namespace bulwark
