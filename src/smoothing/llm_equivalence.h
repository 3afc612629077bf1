// LlmEquivalence: a chat model judges whether two answers to a question are the same answer, in
// JSON mode ({"equivalent": true|false}), one call per pair the aggregator asks about (remembered,
// so no pair is asked twice). The answers are quoted as untrusted data.
#pragma once

#include "llm/chat_client.h"
#include "smoothing/equivalence_judge.h"

namespace bulwark {

class LlmEquivalence final : public EquivalenceJudge {
 public:
  // `client` must outlive the judge.
  explicit LlmEquivalence(const ChatClient* client) : client_(client) {}
  std::string_view name() const override { return "llm"; }
  // The comparison's Equivalent: ChatClient's errors; DataLoss when the reply has no boolean
  // "equivalent".
  [[nodiscard]] absl::StatusOr<std::unique_ptr<AnswerComparison>> Compare(
      std::string_view question, std::span<const std::string> answers) const override;

 private:
  const ChatClient* client_;
};

}  // namespace bulwark
