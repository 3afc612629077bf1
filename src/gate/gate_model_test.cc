// GateModel against direct Eigen computations: Ledoit-Wolf shrinkage from its definition,
// Mahalanobis with an explicit inverse, LDA from its formula; thresholds; serialization and
// detection of damaged bytes; input checks. Also the ROC helpers of gate_fit_report.h.
#include "gate/gate_model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <random>

#include "gate/gate_fit_report.h"
#include "testing/status_matchers.h"

namespace bulwark {
namespace {

using ::bulwark::testing::IsOk;

using ::testing::HasSubstr;

// Unit vectors around a random mean direction with a low-rank spread plus isotropic noise, like
// sentence embeddings of one topic. `shift` adds a fixed direction (a "trigger").
std::vector<std::vector<float>> Cloud(int n, int d, uint32_t seed, double shift = 0,
                                      uint32_t shift_seed = 99) {
  std::mt19937 topic(1234), rng(seed), trig(shift_seed);
  std::normal_distribution<double> g(0, 1);
  Eigen::VectorXd center(d), trigger(d);
  for (int i = 0; i < d; ++i) center[i] = g(topic);
  for (int i = 0; i < d; ++i) trigger[i] = g(trig);
  center.normalize();
  trigger.normalize();
  Eigen::MatrixXd basis(d, 8);
  for (int i = 0; i < d; ++i) {
    for (int j = 0; j < 8; ++j) basis(i, j) = g(topic) * 0.15;
  }
  std::vector<std::vector<float>> out;
  for (int s = 0; s < n; ++s) {
    Eigen::VectorXd coef(8), noise(d);
    for (int j = 0; j < 8; ++j) coef[j] = g(rng);
    for (int i = 0; i < d; ++i) noise[i] = g(rng) * 0.02;
    Eigen::VectorXd v = center + basis * coef + noise + shift * trigger;
    v.normalize();
    out.emplace_back(v.data(), v.data() + d);
    for (int i = 0; i < d; ++i) out.back()[i] = static_cast<float>(v[i]);
  }
  return out;
}

Eigen::MatrixXd AsMatrix(const std::vector<std::vector<float>>& rows) {
  Eigen::MatrixXd m(rows.size(), rows[0].size());
  for (size_t r = 0; r < rows.size(); ++r) {
    for (size_t c = 0; c < rows[0].size(); ++c) m(r, c) = rows[r][c];
  }
  return m;
}

// Ledoit-Wolf straight from the paper's definitions (Lemma 3.2-3.4): with S = X^T X / n,
// m = tr(S)/d, d2 = ||S - m I||^2, b2 = min(d2, (1/n^2) sum_k ||x_k x_k^T - S||^2);
// alpha = b2 / d2; Sigma = (1 - alpha) S + alpha m I.
Eigen::MatrixXd DirectLedoitWolf(const Eigen::MatrixXd& centered, double* alpha_out) {
  const double n = centered.rows();
  const int d = centered.cols();
  const Eigen::MatrixXd s = centered.transpose() * centered / n;
  const double m = s.trace() / d;
  const double d2 = (s - m * Eigen::MatrixXd::Identity(d, d)).squaredNorm();
  double b2 = 0;
  for (int k = 0; k < centered.rows(); ++k) {
    const Eigen::VectorXd x = centered.row(k).transpose();
    b2 += (x * x.transpose() - s).squaredNorm();
  }
  b2 = std::min(d2, b2 / (n * n));
  const double alpha = b2 / d2;
  *alpha_out = alpha;
  return (1 - alpha) * s + alpha * m * Eigen::MatrixXd::Identity(d, d);
}

TEST(GateModelTest, MahalanobisAndCentroidEqualDirectEigenComputation) {
  for (int d : {16, 384}) {
    const auto benign = Cloud(d == 16 ? 120 : 300, d, 1);
    GateFitOptions options;
    auto model = GateModel::Fit(benign, {}, options);
    ASSERT_TRUE(model.ok()) << model.status();
    EXPECT_EQ(model->decision_score(), GateScore::kMahalanobis);

    const Eigen::MatrixXd b = AsMatrix(benign);
    const Eigen::VectorXd mu = b.colwise().mean().transpose();
    double alpha = 0;
    const Eigen::MatrixXd sigma = DirectLedoitWolf(b.rowwise() - mu.transpose(), &alpha);
    EXPECT_NEAR(model->shrinkage(), alpha, 1e-9);
    EXPECT_GT(alpha, 0.0);
    const Eigen::MatrixXd inverse = sigma.inverse();

    for (const auto& z : Cloud(20, d, 2, /*shift=*/0.3)) {
      const Eigen::VectorXd zd = Eigen::Map<const Eigen::VectorXf>(z.data(), d).cast<double>();
      const double direct = std::sqrt((zd - mu).dot(inverse * (zd - mu)));
      EXPECT_NEAR(model->ScoreOf(GateScore::kMahalanobis, z), direct, 1e-4 * direct) << "d=" << d;
      const double cosine = 1 - zd.dot(mu) / (zd.norm() * mu.norm());
      EXPECT_NEAR(model->ScoreOf(GateScore::kCentroid, z), cosine, 1e-5);
      EXPECT_TRUE(std::isnan(model->ScoreOf(GateScore::kLda, z)));
    }
  }
}

TEST(GateModelTest, LdaEqualsDirectEigenComputation) {
  const int d = 384;
  const auto benign = Cloud(200, d, 3);
  const auto triggered = Cloud(60, d, 4, /*shift=*/0.4);
  auto model = GateModel::Fit(benign, triggered, {});
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_TRUE(model->has_lda());
  EXPECT_EQ(model->decision_score(), GateScore::kLda);

  const Eigen::MatrixXd b = AsMatrix(benign), t = AsMatrix(triggered);
  const Eigen::VectorXd mu_b = b.colwise().mean().transpose(), mu_t = t.colwise().mean().transpose();
  Eigen::MatrixXd pooled(b.rows() + t.rows(), d);
  pooled << (b.rowwise() - mu_b.transpose()), (t.rowwise() - mu_t.transpose());
  double alpha = 0;
  const Eigen::MatrixXd sw = DirectLedoitWolf(pooled, &alpha);
  Eigen::VectorXd w = sw.inverse() * (mu_t - mu_b);
  w.normalize();
  for (const auto& z : Cloud(10, d, 5, 0.2)) {
    const Eigen::VectorXd zd = Eigen::Map<const Eigen::VectorXf>(z.data(), d).cast<double>();
    EXPECT_NEAR(model->ScoreOf(GateScore::kLda, z), w.dot(zd), 1e-4);
  }
}

TEST(GateModelTest, ThresholdFlagsAboutTheTargetRateOfFreshBenignQueries) {
  const int d = 64;
  GateFitOptions options;
  options.target_fpr = 0.05;
  auto model = GateModel::Fit(Cloud(400, d, 6), Cloud(40, d, 7, 0.5), options);
  ASSERT_TRUE(model.ok()) << model.status();
  for (GateScore g : {GateScore::kCentroid, GateScore::kMahalanobis, GateScore::kLda}) {
    int flagged = 0;
    const auto fresh = Cloud(2000, d, 8);
    for (const auto& z : fresh) flagged += model->ScoreOf(g, z) > model->threshold(g) ? 1 : 0;
    EXPECT_NEAR(flagged / 2000.0, 0.05, 0.03) << ToString(g);
  }
  int caught = 0;
  for (const auto& z : Cloud(200, d, 9, 0.5))
    caught += model->ScoreOf(GateScore::kLda, z) > model->threshold(GateScore::kLda);
  EXPECT_GT(caught, 190);
}

TEST(GateModelTest, FixedShrinkageIsUsed) {
  GateFitOptions options;
  options.shrinkage = 0.25;
  auto model = GateModel::Fit(Cloud(50, 32, 10), {}, options);
  ASSERT_THAT(model, IsOk());
  EXPECT_EQ(model->shrinkage(), 0.25);
  // d = 384 from 50 samples is singular without shrinkage.
  options.shrinkage = 0;
  auto singular = GateModel::Fit(Cloud(50, 384, 10), {}, options);
  EXPECT_EQ(singular.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(GateModelTest, SerializationRoundTripsAndDetectsDamage) {
  auto model = GateModel::Fit(Cloud(100, 48, 11), Cloud(20, 48, 12, 0.4), {});
  ASSERT_THAT(model, IsOk());
  const std::string bytes = model->Serialize();
  auto back = GateModel::Deserialize(bytes);
  ASSERT_TRUE(back.ok()) << back.status();
  for (const auto& z : Cloud(5, 48, 13, 0.2)) {
    for (GateScore g : {GateScore::kCentroid, GateScore::kMahalanobis, GateScore::kLda}) {
      EXPECT_EQ(back->ScoreOf(g, z), model->ScoreOf(g, z));
      EXPECT_EQ(back->threshold(g), model->threshold(g));
    }
  }
  EXPECT_EQ(back->Summary(), model->Summary());

  for (size_t at : {size_t{0}, size_t{9}, size_t{13}, size_t{50}, size_t{200}, bytes.size() - 1}) {
    std::string damaged = bytes;
    damaged[at] ^= 0x40;
    EXPECT_EQ(GateModel::Deserialize(damaged).status().code(), absl::StatusCode::kDataLoss) << at;
  }
  EXPECT_EQ(GateModel::Deserialize(bytes.substr(0, bytes.size() - 4)).status().code(),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(GateModel::Deserialize("").status().code(), absl::StatusCode::kDataLoss);
  // A header claiming a huge dimension is refused before anything is allocated.
  std::string huge = bytes;
  huge[12] = '\xff';
  huge[13] = '\xff';
  EXPECT_THAT(GateModel::Deserialize(huge).status().message(), HasSubstr("dimension"));
}

TEST(GateModelTest, RejectsBadInput) {
  const auto benign = Cloud(50, 16, 14);
  EXPECT_EQ(GateModel::Fit(Cloud(5, 16, 1), {}, {}).status().code(), absl::StatusCode::kInvalidArgument);
  auto mixed = benign;
  mixed[3].pop_back();
  EXPECT_THAT(GateModel::Fit(mixed, {}, {}).status().message(), HasSubstr("dimension"));
  auto nan = benign;
  nan[1][0] = std::nanf("");
  EXPECT_EQ(GateModel::Fit(nan, {}, {}).status().code(), absl::StatusCode::kInvalidArgument);
  GateFitOptions lda_only;
  lda_only.decision_score = GateScore::kLda;
  EXPECT_THAT(GateModel::Fit(benign, {}, lda_only).status().message(), HasSubstr("triggered"));
  GateFitOptions bad_fpr;
  bad_fpr.target_fpr = 0;
  EXPECT_FALSE(GateModel::Fit(benign, {}, bad_fpr).ok());
  EXPECT_FALSE(GateModel::Fit(benign, Cloud(2, 16, 1, 0.3), {}).ok());  // fewer triggered than folds
}

TEST(GateFitReportTest, AurocAndFprAtTpr) {
  const std::vector<double> benign = {0.1, 0.2, 0.3, 0.4};
  EXPECT_DOUBLE_EQ(Auroc(benign, std::vector<double>{0.5, 0.6}), 1.0);
  EXPECT_DOUBLE_EQ(Auroc(benign, std::vector<double>{0.0}), 0.0);
  EXPECT_DOUBLE_EQ(Auroc(benign, std::vector<double>{0.3}), 2.5 / 4);  // two below, one tie
  // Triggered 0.25, 0.35, 0.5, 0.6: 95 % TPR needs all four, threshold 0.25 flags 0.3 and 0.4.
  const std::vector<double> triggered = {0.6, 0.25, 0.5, 0.35};
  EXPECT_DOUBLE_EQ(FprAtTpr(benign, triggered, 0.95), 0.5);
  EXPECT_DOUBLE_EQ(FprAtTpr(benign, triggered, 0.5), 0.0);  // threshold 0.5
  EXPECT_TRUE(std::isnan(Auroc({}, triggered)));

  auto model = GateModel::Fit(Cloud(100, 32, 15), Cloud(30, 32, 16, 0.5), {});
  ASSERT_THAT(model, IsOk());
  const GateFitReport report = EvaluateGate(*model, Cloud(100, 32, 17), Cloud(50, 32, 18, 0.5));
  ASSERT_EQ(report.scores.size(), 3u);
  EXPECT_EQ(report.scores[2].score, GateScore::kLda);
  EXPECT_GT(report.scores[2].auroc, 0.99);
  EXPECT_LT(report.scores[2].fpr_at_95_tpr, 0.05);
  const nlohmann::json j = ToJson(report);
  EXPECT_EQ(j["scores"][1]["score"], "mahalanobis");
  EXPECT_EQ(j["benign"], 100);
}

}  // namespace
}  // namespace bulwark
