// Equivalence by question-residual embedding similarity (see embedding_equivalence.h).
#include "smoothing/embedding_equivalence.h"

#include <cmath>
#include <string>
#include <vector>

#include "core/status_macros.h"
#include "smoothing/answer_identifiers.h"

namespace bulwark {
namespace {

class ResidualCosine final : public AnswerComparison {
 public:
  // `identifiers` empty: no veto; else one list per answer.
  ResidualCosine(std::vector<std::vector<double>> residuals, double threshold,
                 std::vector<std::vector<std::string>> identifiers)
      : residuals_(std::move(residuals)), threshold_(threshold), identifiers_(std::move(identifiers)) {}

  absl::StatusOr<bool> Equivalent(size_t i, size_t j) override {
    if (i >= residuals_.size() || j >= residuals_.size())
      return absl::InvalidArgumentError("answer index out of range");
    if (!identifiers_.empty() && IdentifiersConflict(identifiers_[i], identifiers_[j])) return false;
    double dot = 0;
    for (size_t d = 0; d < residuals_[i].size(); ++d) dot += residuals_[i][d] * residuals_[j][d];
    return dot >= threshold_;  // both unit length (or zero: an answer that only echoes the question)
  }

 private:
  std::vector<std::vector<double>> residuals_;
  double threshold_;
  std::vector<std::vector<std::string>> identifiers_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<AnswerComparison>> EmbeddingEquivalence::Compare(
    std::string_view question, std::span<const std::string> answers) const {
  std::vector<std::string> texts = {std::string(question)};
  texts.insert(texts.end(), answers.begin(), answers.end());
  BULWARK_ASSIGN_OR_RETURN(auto vectors, embedder_->EmbedBatch(texts));
  const std::vector<float>& q = vectors[0];
  std::vector<std::vector<double>> residuals;
  for (size_t a = 1; a < vectors.size(); ++a) {
    const std::vector<float>& v = vectors[a];
    double along = 0;
    for (size_t d = 0; d < v.size(); ++d) along += double(v[d]) * q[d];
    std::vector<double> r(v.size());
    double norm2 = 0;
    for (size_t d = 0; d < v.size(); ++d) {
      r[d] = v[d] - along * q[d];
      norm2 += r[d] * r[d];
    }
    const double scale = norm2 > 1e-12 ? 1.0 / std::sqrt(norm2) : 0.0;
    for (double& x : r) x *= scale;
    residuals.push_back(std::move(r));
  }
  std::vector<std::vector<std::string>> identifiers;
  if (identifier_veto_) {
    for (const std::string& answer : answers) identifiers.push_back(IdentifierTokens(answer));
  }
  return std::unique_ptr<AnswerComparison>(
      new ResidualCosine(std::move(residuals), threshold_, std::move(identifiers)));
}

}  // namespace bulwark
