// GateModel: the fitted statistics of the query OOD gate (QOE Sec. 3.2) for one namespace, and the
// three scores it computes for a query embedding z. Higher always means "more out of distribution".
//
//   centroid     s_cos = 1 - cos(z, mu)                            mu: mean of the benign queries
//   mahalanobis  s_mah = sqrt((z - mu)^T Sigma^-1 (z - mu))        Sigma: shrunk covariance
//   lda          s_lda = w^T z,  w = Sigma_w^-1 (mu_trig - mu_benign) / ||.||
//                                                                  Sigma_w: shrunk pooled within-class
//                                                                  covariance; needs triggered queries
//
// Thresholds: for each score, the (1 - target_fpr) quantile of *out-of-fold* benign scores (each
// benign query scored by statistics fitted without it, K-fold), so that fresh benign queries are
// flagged at about the target rate; in-sample Mahalanobis distances would be optimistically small.
// A query is flagged when its score is strictly above the threshold.
//
// Scoring cost: O(d) for centroid and LDA; Mahalanobis is ||W (z - mu)|| with the lower-triangular
// whitening matrix W = L^-1 (Cholesky, Sigma = L L^T), d^2/2 multiply-adds (triangular_norm.h).
//
// The serialized form is documented in doc/gate_format.md.
#pragma once

#include <absl/status/statusor.h>

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace bulwark {

enum class GateScore { kCentroid = 0, kMahalanobis = 1, kLda = 2 };
inline constexpr int kGateScoreCount = 3;
std::string_view ToString(GateScore score);  // "centroid", "mahalanobis", "lda"
std::optional<GateScore> ParseGateScore(std::string_view name);

struct GateFitOptions {
  // Fraction of benign queries the threshold may flag; (0, 0.5]. Default 0.05 (QOE Sec. 4.3).
  double target_fpr = 0.05;
  // Covariance shrinkage alpha in [0, 1]; negative (the default) picks Ledoit-Wolf.
  double shrinkage = -1;
  // Folds for the out-of-fold threshold scores, 2 .. 20; both classes need at least this many
  // samples. Default 5.
  int folds = 5;
  // The score that decides; default: lda when triggered queries are given, else mahalanobis.
  std::optional<GateScore> decision_score;
};

// Out-of-fold scores of the fitting data (for reports without a separate labelled set).
struct GateFitDiagnostics {
  std::array<std::vector<double>, kGateScoreCount> benign;     // per score, one per benign query
  std::array<std::vector<double>, kGateScoreCount> triggered;  // empty without triggered queries
};

struct GateScores {
  std::array<double, kGateScoreCount> value{};  // indexed by GateScore; lda is NaN without LDA
  double operator[](GateScore s) const { return value[static_cast<int>(s)]; }
};

class GateModel {
 public:
  static constexpr int kMaxDimension = 2048;
  static constexpr int kMinBenign = 10;

  // Fits on benign query embeddings (required, at least max(kMinBenign, folds) of them) and
  // optionally triggered ones (then also LDA; at least `folds` of them). Every vector must have
  // the same dimension, 1 .. kMaxDimension, and finite entries. InvalidArgument for bad input or
  // options; FailedPrecondition if a covariance is singular (shrinkage 0 with too few samples).
  [[nodiscard]] static absl::StatusOr<GateModel> Fit(std::span<const std::vector<float>> benign,
                                                     std::span<const std::vector<float>> triggered,
                                                     const GateFitOptions& options,
                                                     GateFitDiagnostics* diagnostics = nullptr);

  GateModel(GateModel&&) = default;
  GateModel& operator=(GateModel&&) = default;
  GateModel(const GateModel&) = delete;
  GateModel& operator=(const GateModel&) = delete;

  // All scores of `z`. Precondition: z.size() == dimension(). Thread-safe.
  GateScores Score(std::span<const float> z) const;
  double ScoreOf(GateScore score, std::span<const float> z) const;

  int dimension() const { return dimension_; }
  bool has_lda() const { return has_lda_; }
  GateScore decision_score() const { return decision_score_; }
  // The flagging threshold of `score` (NaN for lda without LDA).
  double threshold(GateScore score) const { return thresholds_[static_cast<int>(score)]; }
  double target_fpr() const { return target_fpr_; }
  double shrinkage() const { return shrinkage_; }  // alpha of the benign covariance
  int benign_count() const { return benign_count_; }
  int triggered_count() const { return triggered_count_; }
  std::span<const float> mean() const { return mu_; }

  // {"dimension", "decision_score", "thresholds": {...}, "target_fpr", "shrinkage", "benign",
  //  "triggered", "has_lda"}
  nlohmann::json Summary() const;

  // Self-describing bytes with magic, version and a SHA-256 checksum (doc/gate_format.md).
  std::string Serialize() const;
  // DataLoss for anything that is not an intact serialized model: wrong magic or version, sizes
  // that do not add up or exceed the limits, a checksum mismatch, non-finite numbers.
  [[nodiscard]] static absl::StatusOr<GateModel> Deserialize(std::string_view bytes);

 private:
  GateModel() = default;
  void BuildScoringCopies();

  int dimension_ = 0;
  bool has_lda_ = false;
  GateScore decision_score_ = GateScore::kMahalanobis;
  double target_fpr_ = 0.05;
  double shrinkage_ = 0;
  int benign_count_ = 0;
  int triggered_count_ = 0;
  std::array<double, kGateScoreCount> thresholds_{};
  std::vector<float> mu_;                    // d
  std::vector<float> mu_unit_;               // mu / ||mu|| (zero if mu is zero)
  std::vector<float> whitening_;             // d x d, row-major, lower triangular: L^-1, Sigma = L L^T
  std::vector<float> lda_w_;                 // d, unit norm; empty without LDA
  std::vector<float> packed_storage_;        // whitening_ in TriangularSquaredNorm's packed tile layout,
  const float* packed_whitening_ = nullptr;  // starting at the first 64-byte boundary of the storage
  size_t padded_ = 0;                        // d rounded up to 16
};

}  // namespace bulwark
