// Fitting, scoring and (de)serializing the query gate's statistics (see gate_model.h).
#include "gate/gate_model.h"

#include <absl/strings/str_cat.h>
#include <openssl/sha.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/status_macros.h"
#include "gate/shrinkage_covariance.h"
#include "gate/triangular_norm.h"
#include "index/inner_product.h"

namespace bulwark {
namespace {

constexpr char kMagic[8] = {'B', 'W', 'K', 'G', 'A', 'T', 'E', '\0'};
constexpr uint32_t kFormatVersion = 1;
constexpr size_t kHeaderBytes = 72;
constexpr size_t kChecksumBytes = SHA256_DIGEST_LENGTH;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
static_assert(GateModel::kMaxDimension % 16 == 0);

// The statistics of one fit, in double precision (used for out-of-fold scoring and, converted to
// float, by the final model).
struct Stats {
  Eigen::VectorXd mu;
  Eigen::MatrixXd whitening;  // d x d, lower triangular: L^-1 with Sigma = L L^T
  double alpha = 0;           // of the benign covariance
  double within_alpha = 0;    // of the pooled within-class covariance (LDA)
  bool has_lda = false;
  Eigen::VectorXd lda_w;  // unit norm
};

Eigen::MatrixXd ToMatrix(std::span<const std::vector<float>> rows, const std::vector<int>& pick) {
  const Eigen::Index d = static_cast<Eigen::Index>(rows.front().size());
  Eigen::MatrixXd m(static_cast<Eigen::Index>(pick.size()), d);
  for (size_t r = 0; r < pick.size(); ++r) {
    for (Eigen::Index c = 0; c < d; ++c) m(static_cast<Eigen::Index>(r), c) = rows[pick[r]][c];
  }
  return m;
}

// `shrinkage` and `within_shrinkage`: fixed alphas, or negative for Ledoit-Wolf.
absl::StatusOr<Stats> FitStats(const Eigen::MatrixXd& benign, const Eigen::MatrixXd* triggered,
                               double shrinkage, double within_shrinkage) {
  Stats st;
  st.mu = benign.colwise().mean().transpose();
  const Eigen::MatrixXd centered = benign.rowwise() - st.mu.transpose();
  ShrunkCovariance cov = ShrinkCovariance(centered, shrinkage);
  st.alpha = cov.alpha;
  // Condition check on the eigenvalues, then the whitening W = L^-1 from the Cholesky factor:
  // ||L^-1 v||^2 = v^T Sigma^-1 v, and L^-1 is lower triangular, so scoring reads half of W.
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(cov.covariance, Eigen::EigenvaluesOnly);
  if (eig.info() != Eigen::Success) return absl::InternalError("eigendecomposition of the covariance failed");
  const Eigen::VectorXd& lambda = eig.eigenvalues();
  const double largest = lambda.maxCoeff();
  if (!(largest > 0) || !(lambda.minCoeff() > 1e-12 * largest)) {
    return absl::FailedPreconditionError(
        "the benign covariance is singular: use shrinkage > 0 or more benign queries than dimensions");
  }
  Eigen::LLT<Eigen::MatrixXd> llt(cov.covariance);
  if (llt.info() != Eigen::Success)
    return absl::FailedPreconditionError("the benign covariance is not positive definite");
  st.whitening = llt.matrixL().solve(Eigen::MatrixXd::Identity(cov.covariance.rows(), cov.covariance.cols()));
  st.whitening.triangularView<Eigen::StrictlyUpper>().setZero();
  if (triggered != nullptr) {
    const Eigen::VectorXd mu_t = triggered->colwise().mean().transpose();
    Eigen::MatrixXd pooled(benign.rows() + triggered->rows(), benign.cols());
    pooled << centered, (triggered->rowwise() - mu_t.transpose());
    ShrunkCovariance within = ShrinkCovariance(pooled, within_shrinkage);
    st.within_alpha = within.alpha;
    Eigen::LDLT<Eigen::MatrixXd> ldlt(within.covariance);
    if (ldlt.info() != Eigen::Success || !ldlt.isPositive()) {
      return absl::FailedPreconditionError("the within-class covariance is singular: use shrinkage > 0");
    }
    st.lda_w = ldlt.solve(mu_t - st.mu);
    const double norm = st.lda_w.norm();
    if (!(norm > 0) || !std::isfinite(norm)) {
      return absl::FailedPreconditionError(
          "benign and triggered queries have the same mean; LDA has no direction");
    }
    st.lda_w /= norm;
    st.has_lda = true;
  }
  return st;
}

// Scores in double precision, the same formulas as GateModel::Score.
std::array<double, kGateScoreCount> ScoreStats(const Stats& st, const Eigen::VectorXd& z) {
  std::array<double, kGateScoreCount> s;
  const double denom = z.norm() * st.mu.norm();
  s[static_cast<int>(GateScore::kCentroid)] = denom > 0 ? 1.0 - z.dot(st.mu) / denom : 1.0;
  s[static_cast<int>(GateScore::kMahalanobis)] = (st.whitening * (z - st.mu)).norm();
  s[static_cast<int>(GateScore::kLda)] = st.has_lda ? st.lda_w.dot(z) : kNaN;
  return s;
}

// The (1 - fpr) quantile: at most floor(fpr * n) of `scores` lie strictly above it.
double Threshold(std::vector<double> scores, double fpr) {
  std::sort(scores.begin(), scores.end());
  const double n = static_cast<double>(scores.size());
  size_t index = static_cast<size_t>(std::max(0.0, std::ceil((1.0 - fpr) * n - 1e-9) - 1));
  index = std::min(index, scores.size() - 1);
  return scores[index];
}

absl::Status CheckVectors(std::span<const std::vector<float>> rows, size_t dimension, const char* what) {
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].size() != dimension) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " query ", i, " has dimension ", rows[i].size(), ", expected ", dimension));
    }
    for (float x : rows[i]) {
      if (!std::isfinite(x))
        return absl::InvalidArgumentError(absl::StrCat(what, " query ", i, " is not finite"));
    }
  }
  return absl::OkStatus();
}

template <typename T>
void Append(std::string* out, const T& value) {
  out->append(reinterpret_cast<const char*>(&value), sizeof(T));  // little-endian host
}
void AppendFloats(std::string* out, const std::vector<float>& v) {
  out->append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}
template <typename T>
T Read(std::string_view bytes, size_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

// GateModel::Fit's checks of its inputs (see gate_model.h); returns the dimension.
absl::StatusOr<size_t> CheckFitInputs(std::span<const std::vector<float>> benign,
                                      std::span<const std::vector<float>> triggered,
                                      const GateFitOptions& options) {
  if (!(options.target_fpr > 0 && options.target_fpr <= 0.5)) {
    return absl::InvalidArgumentError("target FPR must be in (0, 0.5]");
  }
  if (options.shrinkage > 1 || std::isnan(options.shrinkage)) {
    return absl::InvalidArgumentError("shrinkage must be in [0, 1], or negative for Ledoit-Wolf");
  }
  if (options.folds < 2 || options.folds > 20)
    return absl::InvalidArgumentError("folds must be between 2 and 20");
  const size_t min_benign = std::max<size_t>(GateModel::kMinBenign, options.folds);
  if (benign.size() < min_benign) {
    return absl::InvalidArgumentError(
        absl::StrCat("need at least ", min_benign, " benign queries, got ", benign.size()));
  }
  if (!triggered.empty() && triggered.size() < static_cast<size_t>(options.folds)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "need at least ", options.folds, " triggered queries (one per fold), got ", triggered.size()));
  }
  const size_t d = benign.front().size();
  if (d < 1 || d > static_cast<size_t>(GateModel::kMaxDimension)) {
    return absl::InvalidArgumentError(
        absl::StrCat("dimension must be between 1 and ", GateModel::kMaxDimension));
  }
  BULWARK_RETURN_IF_ERROR(CheckVectors(benign, d, "benign"));
  BULWARK_RETURN_IF_ERROR(CheckVectors(triggered, d, "triggered"));
  return d;
}

// Out-of-fold scores: sample i belongs to fold i mod K. The folds use the final fit's shrinkage:
// alpha shrinks as n grows, and a threshold calibrated under more shrinkage (smaller distances)
// would flag fresh benign queries more often than the target.
absl::StatusOr<GateFitDiagnostics> OutOfFoldScores(std::span<const std::vector<float>> benign,
                                                   std::span<const std::vector<float>> triggered,
                                                   const GateFitOptions& options, const Stats& stats,
                                                   size_t d) {
  const bool lda = !triggered.empty();
  GateFitDiagnostics oof;
  auto split = [&](size_t n, int fold, bool held_out) {
    std::vector<int> pick;
    for (size_t i = 0; i < n; ++i) {
      if ((static_cast<int>(i % options.folds) == fold) == held_out) pick.push_back(static_cast<int>(i));
    }
    return pick;
  };
  for (int fold = 0; fold < options.folds; ++fold) {
    const Eigen::MatrixXd train_b = ToMatrix(benign, split(benign.size(), fold, false));
    Eigen::MatrixXd train_t;
    if (lda) train_t = ToMatrix(triggered, split(triggered.size(), fold, false));
    BULWARK_ASSIGN_OR_RETURN(auto fold_stats,
                             FitStats(train_b, lda ? &train_t : nullptr, stats.alpha, stats.within_alpha));
    auto score_into = [&](std::span<const std::vector<float>> rows, const std::vector<int>& held,
                          std::array<std::vector<double>, kGateScoreCount>* out) {
      for (int i : held) {
        const Eigen::VectorXd z = Eigen::Map<const Eigen::VectorXf>(rows[i].data(), d).cast<double>();
        const auto s = ScoreStats(fold_stats, z);
        for (int k = 0; k < kGateScoreCount; ++k) (*out)[k].push_back(s[k]);
      }
    };
    score_into(benign, split(benign.size(), fold, true), &oof.benign);
    if (lda) score_into(triggered, split(triggered.size(), fold, true), &oof.triggered);
  }
  return oof;
}

}  // namespace

std::string_view ToString(GateScore score) {
  switch (score) {
    case GateScore::kCentroid:
      return "centroid";
    case GateScore::kMahalanobis:
      return "mahalanobis";
    case GateScore::kLda:
      return "lda";
  }
  return "?";
}

std::optional<GateScore> ParseGateScore(std::string_view name) {
  for (GateScore s : {GateScore::kCentroid, GateScore::kMahalanobis, GateScore::kLda}) {
    if (name == ToString(s)) return s;
  }
  return std::nullopt;
}

absl::StatusOr<GateModel> GateModel::Fit(std::span<const std::vector<float>> benign,
                                         std::span<const std::vector<float>> triggered,
                                         const GateFitOptions& options, GateFitDiagnostics* diagnostics) {
  BULWARK_ASSIGN_OR_RETURN(const size_t d, CheckFitInputs(benign, triggered, options));
  const bool lda = !triggered.empty();
  const GateScore decision = options.decision_score.value_or(lda ? GateScore::kLda : GateScore::kMahalanobis);
  if (decision == GateScore::kLda && !lda) {
    return absl::InvalidArgumentError("the lda score needs triggered queries");
  }

  std::vector<int> all_b(benign.size()), all_t(triggered.size());
  for (size_t i = 0; i < all_b.size(); ++i) all_b[i] = static_cast<int>(i);
  for (size_t i = 0; i < all_t.size(); ++i) all_t[i] = static_cast<int>(i);
  const Eigen::MatrixXd b = ToMatrix(benign, all_b);
  Eigen::MatrixXd t;
  if (lda) t = ToMatrix(triggered, all_t);
  BULWARK_ASSIGN_OR_RETURN(auto stats, FitStats(b, lda ? &t : nullptr, options.shrinkage, options.shrinkage));

  // Out-of-fold scores (their benign scores set the thresholds).
  BULWARK_ASSIGN_OR_RETURN(GateFitDiagnostics oof, OutOfFoldScores(benign, triggered, options, stats, d));

  GateModel model;
  model.dimension_ = static_cast<int>(d);
  model.has_lda_ = lda;
  model.decision_score_ = decision;
  model.target_fpr_ = options.target_fpr;
  model.shrinkage_ = stats.alpha;
  model.benign_count_ = static_cast<int>(benign.size());
  model.triggered_count_ = static_cast<int>(triggered.size());
  for (int k = 0; k < kGateScoreCount; ++k) {
    model.thresholds_[k] = (k == static_cast<int>(GateScore::kLda) && !lda)
                               ? kNaN
                               : Threshold(oof.benign[k], options.target_fpr);
  }
  model.mu_.resize(d);
  for (size_t i = 0; i < d; ++i) model.mu_[i] = static_cast<float>(stats.mu[i]);
  model.whitening_.resize(d * d);
  for (size_t r = 0; r < d; ++r) {
    for (size_t c = 0; c < d; ++c) model.whitening_[r * d + c] = static_cast<float>(stats.whitening(r, c));
  }
  if (lda) {
    model.lda_w_.resize(d);
    for (size_t i = 0; i < d; ++i) model.lda_w_[i] = static_cast<float>(stats.lda_w[i]);
  }
  model.BuildScoringCopies();
  if (diagnostics != nullptr) *diagnostics = std::move(oof);
  return model;
}

void GateModel::BuildScoringCopies() {
  // W in TriangularSquaredNorm's packed layout, 64-byte aligned.
  const size_t d = static_cast<size_t>(dimension_);
  padded_ = (d + 15) / 16 * 16;
  packed_storage_.assign(PackedTriangularFloats(padded_) + 16, 0.0f);
  const auto address = reinterpret_cast<uintptr_t>(packed_storage_.data());
  float* base = packed_storage_.data() + ((64 - address % 64) % 64) / sizeof(float);
  PackLowerTriangular(whitening_.data(), d, base);
  packed_whitening_ = base;
  double norm2 = 0;
  for (float x : mu_) norm2 += double(x) * x;
  mu_unit_.assign(mu_.size(), 0.0f);
  if (norm2 > 0) {
    const double inv = 1.0 / std::sqrt(norm2);
    for (size_t i = 0; i < mu_.size(); ++i) mu_unit_[i] = static_cast<float>(mu_[i] * inv);
  }
}

double GateModel::ScoreOf(GateScore score, std::span<const float> z) const {
  const InnerProductKernels& k = BestKernels();
  const size_t d = static_cast<size_t>(dimension_);
  switch (score) {
    case GateScore::kCentroid: {
      const double norm = std::sqrt(static_cast<double>(k.dot(z.data(), z.data(), d)));
      return norm > 0 ? 1.0 - k.dot(z.data(), mu_unit_.data(), d) / norm : 1.0;
    }
    case GateScore::kMahalanobis: {
      static const TriangularSquaredNormKernel& kernel = BestTriangularSquaredNorm();
      alignas(64) thread_local float centered[kMaxDimension];  // kMaxDimension is a multiple of 16
      for (size_t i = 0; i < d; ++i) centered[i] = z[i] - mu_[i];
      for (size_t i = d; i < padded_; ++i) centered[i] = 0.0f;
      return std::sqrt(std::max(0.0, kernel.squared_norm(packed_whitening_, centered, padded_)));
    }
    case GateScore::kLda:
      return has_lda_ ? k.dot(z.data(), lda_w_.data(), d) : kNaN;
  }
  return kNaN;
}

GateScores GateModel::Score(std::span<const float> z) const {
  GateScores s;
  for (GateScore g : {GateScore::kCentroid, GateScore::kMahalanobis, GateScore::kLda}) {
    s.value[static_cast<int>(g)] = ScoreOf(g, z);
  }
  return s;
}

nlohmann::json GateModel::Summary() const {
  nlohmann::json thresholds = nlohmann::json::object();
  for (GateScore g : {GateScore::kCentroid, GateScore::kMahalanobis, GateScore::kLda}) {
    if (g == GateScore::kLda && !has_lda_) continue;
    thresholds[std::string(ToString(g))] = threshold(g);
  }
  return {{"dimension", dimension_},       {"decision_score", ToString(decision_score_)},
          {"thresholds", thresholds},      {"target_fpr", target_fpr_},
          {"shrinkage", shrinkage_},       {"benign", benign_count_},
          {"triggered", triggered_count_}, {"has_lda", has_lda_}};
}

std::string GateModel::Serialize() const {
  std::string out(kMagic, sizeof(kMagic));
  Append(&out, kFormatVersion);
  Append(&out, static_cast<uint32_t>(dimension_));
  Append(&out, static_cast<uint32_t>(has_lda_ ? 1 : 0));
  Append(&out, static_cast<uint32_t>(decision_score_));
  Append(&out, static_cast<uint32_t>(benign_count_));
  Append(&out, static_cast<uint32_t>(triggered_count_));
  Append(&out, target_fpr_);
  Append(&out, shrinkage_);
  for (double t : thresholds_) Append(&out, t);
  AppendFloats(&out, mu_);
  AppendFloats(&out, whitening_);
  AppendFloats(&out, lda_w_);
  unsigned char digest[kChecksumBytes];
  SHA256(reinterpret_cast<const unsigned char*>(out.data()), out.size(), digest);
  out.append(reinterpret_cast<const char*>(digest), sizeof(digest));
  return out;
}

absl::StatusOr<GateModel> GateModel::Deserialize(std::string_view bytes) {
  auto bad = [](std::string_view why) {
    return absl::DataLossError(absl::StrCat("stored query gate is damaged: ", std::string(why)));
  };
  if (bytes.size() < kHeaderBytes + kChecksumBytes) return bad("too short");
  if (std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) return bad("wrong magic");
  if (Read<uint32_t>(bytes, 8) != kFormatVersion) return bad("unknown format version");
  const uint32_t d = Read<uint32_t>(bytes, 12);
  const uint32_t flags = Read<uint32_t>(bytes, 16);
  const uint32_t decision = Read<uint32_t>(bytes, 20);
  if (d < 1 || d > static_cast<uint32_t>(kMaxDimension)) return bad("dimension out of range");
  if (flags > 1) return bad("unknown flags");
  if (decision >= static_cast<uint32_t>(kGateScoreCount)) return bad("unknown decision score");
  const bool lda = flags == 1;
  const size_t floats = size_t{d} + size_t{d} * d + (lda ? d : 0);
  if (bytes.size() != kHeaderBytes + floats * sizeof(float) + kChecksumBytes)
    return bad("size does not match");
  unsigned char digest[kChecksumBytes];
  SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size() - kChecksumBytes, digest);
  if (std::memcmp(digest, bytes.data() + bytes.size() - kChecksumBytes, kChecksumBytes) != 0) {
    return bad("checksum mismatch");
  }
  GateModel model;
  model.dimension_ = static_cast<int>(d);
  model.has_lda_ = lda;
  model.decision_score_ = static_cast<GateScore>(decision);
  if (model.decision_score_ == GateScore::kLda && !lda) return bad("lda decision without lda");
  model.benign_count_ = static_cast<int>(std::min<uint32_t>(Read<uint32_t>(bytes, 24), INT32_MAX));
  model.triggered_count_ = static_cast<int>(std::min<uint32_t>(Read<uint32_t>(bytes, 28), INT32_MAX));
  model.target_fpr_ = Read<double>(bytes, 32);
  model.shrinkage_ = Read<double>(bytes, 40);
  for (int k = 0; k < kGateScoreCount; ++k) model.thresholds_[k] = Read<double>(bytes, 48 + 8 * k);
  for (int k = 0; k < kGateScoreCount; ++k) {
    if (k == static_cast<int>(GateScore::kLda) && !lda) continue;
    if (!std::isfinite(model.thresholds_[k])) return bad("non-finite threshold");
  }
  size_t offset = kHeaderBytes;
  auto take = [&](std::vector<float>* v, size_t n) {
    v->resize(n);
    std::memcpy(v->data(), bytes.data() + offset, n * sizeof(float));
    offset += n * sizeof(float);
    return std::all_of(v->begin(), v->end(), [](float x) { return std::isfinite(x); });
  };
  if (!take(&model.mu_, d) || !take(&model.whitening_, size_t{d} * d) || (lda && !take(&model.lda_w_, d))) {
    return bad("non-finite statistics");
  }
  for (size_t r = 0; r < d; ++r) {
    for (size_t c = r + 1; c < d; ++c) {
      if (model.whitening_[r * d + c] != 0.0f) return bad("whitening matrix is not lower triangular");
    }
  }
  model.BuildScoringCopies();
  return model;
}

}  // namespace bulwark
