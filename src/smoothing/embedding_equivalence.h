// EmbeddingEquivalence: two answers are equivalent when the cosine similarity of their embeddings,
// after removing from each its component along the question's embedding, is at least `threshold`.
// Answers to one question all echo it (an injected answer is written to be retrieved for it, so it
// echoes the question most); what they claim is in what they add to it. On the lexical embedder
// this residual cosine puts paraphrases of one claim at 0.26-0.78 and an injected answer against
// them at 0.13 or less (src/eval/consistent_minority_test.cc), where the plain cosine overlaps
// (0.47-0.86 against up to 0.57).
//
// A changed number, account, address or host inside an otherwise equal sentence leaves the residual
// cosine high, so by default two answers whose identifiers conflict (answer_identifiers.h: both
// name some, they share none -- "USD 500" / "USD 750", IBAN DE89... / GB33...) are never
// equivalent. Still blind to a negation or a changed name; configure an LLM judge where that
// matters. The threshold depends on the embedder.
#pragma once

#include "bulwark/embedder.h"
#include "smoothing/equivalence_judge.h"

namespace bulwark {

class EmbeddingEquivalence final : public EquivalenceJudge {
 public:
  static constexpr double kDefaultThreshold = 0.2;  // for the lexical embedder

  // `embedder` must outlive the judge; threshold in [-1, 1]. `identifier_veto` false compares by
  // the residual cosine alone (for comparison in tests and evaluation).
  explicit EmbeddingEquivalence(const Embedder* embedder, double threshold = kDefaultThreshold,
                                bool identifier_veto = true)
      : embedder_(embedder), threshold_(threshold), identifier_veto_(identifier_veto) {}
  std::string_view name() const override { return "embedding"; }
  // Embeds the question and every answer in one batch. Errors from the embedder.
  [[nodiscard]] absl::StatusOr<std::unique_ptr<AnswerComparison>> Compare(
      std::string_view question, std::span<const std::string> answers) const override;
  double threshold() const { return threshold_; }

 private:
  const Embedder* embedder_;
  double threshold_;
  bool identifier_veto_;
};

}  // namespace bulwark
