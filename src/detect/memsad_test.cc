#include "detect/memsad.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "detect/calibration.h"
#include "detect/detectors.h"
#include "testing/status_matchers.h"

namespace bulwark {
namespace {

using ::bulwark::testing::IsOk;

std::vector<float> Unit(std::vector<float> v) {
  double n = 0;
  for (float x : v) n += double{x} * x;
  for (float& x : v) x = static_cast<float>(x / std::sqrt(n));
  return v;
}

std::vector<std::vector<float>> RandomUnits(size_t count, size_t dim, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<std::vector<float>> out(count, std::vector<float>(dim));
  for (auto& v : out) {
    for (float& x : v) x = normal(rng);
    v = Unit(v);
  }
  return out;
}

double Dot(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += double{a[i]} * b[i];
  return s;
}

std::vector<const float*> Rows(const std::vector<std::vector<float>>& v) {
  std::vector<const float*> rows;
  for (const auto& r : v) rows.push_back(r.data());
  return rows;
}

TEST(MemsadScoresTest, EqualDirectComputation) {
  for (size_t m : {1u, 3u, 20u, 201u}) {
    const auto history = RandomUnits(m, 384, 7 + m);
    const auto c = RandomUnits(1, 384, 99)[0];
    const auto rows = Rows(history);
    const MemsadScores s = ScoreAgainstHistory(c, rows.data(), rows.size(), 384);
    double max = -2, sum = 0;
    int argmax = -1;
    for (size_t i = 0; i < m; ++i) {
      const double d = Dot(c, history[i]);
      sum += d;
      if (d > max) max = d, argmax = static_cast<int>(i);
    }
    EXPECT_NEAR(s.s_max, max, 1e-5) << m;
    EXPECT_NEAR(s.s_mean, sum / m, 1e-5) << m;
    EXPECT_NEAR(s.s_comb, 0.5 * max + 0.5 * sum / m, 1e-5) << m;  // Eq. 7
    EXPECT_EQ(s.argmax, argmax);
    EXPECT_EQ(s.history_size, m);
    EXPECT_DOUBLE_EQ(s.Get(MemsadMode::kMax), s.s_max);
    EXPECT_DOUBLE_EQ(s.Get(MemsadMode::kMean), s.s_mean);
  }
}

TEST(MemsadScoresTest, HistoryViewEqualsRowPointers) {
  // The streaming scan over the ring (two runs once it wraps) against the pointer overload.
  for (size_t appended : {1u, 5u, 64u, 65u, 200u, 333u}) {
    QueryHistory history(384, 128);
    const auto queries = RandomUnits(appended, 384, 11 + appended);
    for (const auto& q : queries) history.Append(q);
    const auto c = RandomUnits(1, 384, 5)[0];
    const size_t held = std::min<size_t>(appended, 128);
    const std::vector<std::vector<float>> newest(queries.end() - static_cast<ptrdiff_t>(held), queries.end());
    const auto rows = Rows(newest);
    const MemsadScores expected = ScoreAgainstHistory(c, rows.data(), rows.size(), 384);
    history.Read([&](const QueryHistory::View& h) {
      const MemsadScores s = ScoreAgainstHistory(c, h);
      EXPECT_EQ(s.s_max, expected.s_max) << appended;
      EXPECT_NEAR(s.s_mean, expected.s_mean, 1e-6) << appended;
      EXPECT_NEAR(s.s_comb, expected.s_comb, 1e-6) << appended;
      EXPECT_EQ(s.argmax, expected.argmax) << appended;
      EXPECT_EQ(s.history_size, held);
    });
  }
}

TEST(MemsadScoresTest, BoundedScanBreaksTiesLikeTheFullScan) {
  // 300 rows through a 200-row ring (wrapped), with one vector repeated at several places: the max
  // is tied and the full scan reports the oldest of the tied rows; so must the bounded scan.
  QueryHistory history(384, 200);
  auto queries = RandomUnits(300, 384, 77);
  const auto repeated = queries[150];
  for (size_t i : {120u, 180u, 260u, 299u}) queries[i] = repeated;
  for (const auto& q : queries) history.Append(q);
  const std::vector<std::vector<float>> newest(queries.end() - 200, queries.end());
  const auto rows = Rows(newest);
  for (const auto& c : {repeated, RandomUnits(1, 384, 78)[0]}) {
    const MemsadScores expected = ScoreAgainstHistory(c, rows.data(), rows.size(), 384);
    history.Read([&](const QueryHistory::View& h) {
      const MemsadScores s = ScoreAgainstHistory(c, h);
      EXPECT_EQ(s.s_max, expected.s_max);
      EXPECT_EQ(s.argmax, expected.argmax);
      EXPECT_NEAR(s.s_mean, expected.s_mean, 1e-6);
    });
  }
  history.Read([&](const QueryHistory::View& h) {
    EXPECT_EQ(ScoreAgainstHistory(repeated, h).argmax, 20);
  });  // queries[120]
}

TEST(MemsadScoresTest, HistoryRowsCarryTheirBenignCeiling) {
  const auto reference = std::make_shared<QueryHistory::Reference>(RandomUnits(50, 64, 21));
  QueryHistory history(64, 16);
  const auto before = RandomUnits(20, 64, 22);
  for (const auto& q : before) history.Append(q);  // wraps: 16 of 20 held
  history.Read([&](const QueryHistory::View& h) {
    EXPECT_EQ(h.reference(), nullptr);
    EXPECT_TRUE(std::isnan(h.ceiling(0)));
  });
  history.AttachReference(reference);
  for (const auto& q : RandomUnits(7, 64, 23)) history.Append(q);  // appended after attaching
  history.Read([&](const QueryHistory::View& h) {
    EXPECT_EQ(h.reference(), reference.get());
    for (size_t i = 0; i < h.size(); ++i) {
      const std::span<const float> row(h.row(i), h.dim());
      double direct = -2;
      for (const auto& m : *reference)
        direct = std::max(direct, Dot(m, std::vector<float>(row.begin(), row.end())));
      EXPECT_NEAR(h.ceiling(i), direct, 1e-5) << i;
      EXPECT_EQ(h.ceiling(i), static_cast<float>(BenignCeiling(row, *reference))) << i;
    }
  });
  EXPECT_TRUE(std::isnan(BenignCeiling(before[0], {})));
}

TEST(MemsadScoresTest, EmptyHistoryScoresZero) {
  const auto c = RandomUnits(1, 8, 1)[0];
  const MemsadScores s = ScoreAgainstHistory(c, nullptr, 0, 8);
  EXPECT_EQ(s.s_comb, 0);
  EXPECT_EQ(s.argmax, -1);
}

TEST(MemsadCalibrationTest, EtaMatchesTheorem11) {
  // N = 50, delta = 0.05, kappa = 2: eta = sigma (1/sqrt(50) + 2/sqrt(98)) sqrt(2 ln 80).
  const double sigma = 0.043;
  const double expected = sigma * (1 / std::sqrt(50.0) + 2 / std::sqrt(98.0)) * std::sqrt(2 * std::log(80.0));
  EXPECT_NEAR(CalibrationTolerance(sigma, 50, 2.0, 0.05), expected, 1e-12);
  // The paper's Table 8 bound at N = 50 (0.044) corresponds to sigma ~ 0.0433.
  EXPECT_NEAR(CalibrationTolerance(0.0433, 50, 2.0, 0.05), 0.044, 0.0005);
}

TEST(MemsadCalibrationTest, MuSigmaAreSampleStatistics) {
  const std::vector<double> scores = {0.1, 0.2, 0.3, 0.4};
  auto cal = CalibrateMemsad(scores, MemsadMode::kCombined, 2.0, 0.05);
  ASSERT_TRUE(cal.ok()) << cal.status();
  EXPECT_NEAR(cal->mu, 0.25, 1e-12);
  EXPECT_NEAR(cal->sigma, std::sqrt(0.05 / 3), 1e-12);  // sum of squares 0.05 over N-1 = 3
  EXPECT_NEAR(cal->threshold(), 0.25 + 2 * std::sqrt(0.05 / 3), 1e-12);
  EXPECT_NEAR(cal->eta, CalibrationTolerance(cal->sigma, 4, 2.0, 0.05), 1e-15);
  EXPECT_FALSE(CalibrateMemsad(std::vector<double>{0.1}, MemsadMode::kMax, 2, 0.05).ok());
  EXPECT_FALSE(CalibrateMemsad(scores, MemsadMode::kMax, 0, 0.05).ok());
  EXPECT_FALSE(CalibrateMemsad(scores, MemsadMode::kMax, 2, 1.0).ok());
}

TEST(MemsadCalibrationTest, CertificateIsLemma8) {
  MemsadCalibration cal;
  cal.kappa = 2;
  cal.sigma = 0.05;
  cal.eta = 0.04;
  const std::vector<float> q = Unit({1, 0, 0});
  const std::vector<std::vector<float>> reference = {Unit({1, 1, 0}), Unit({0, 1, 0})};
  const double s_bar = std::sqrt(0.5);
  auto cert = CertifyDetection(0.95, q, reference, cal);
  EXPECT_NEAR(cert.s_bar, s_bar, 1e-6);
  EXPECT_NEAR(cert.delta_s, 0.95 - s_bar, 1e-6);
  EXPECT_NEAR(cert.radius, 0.14, 1e-12);
  EXPECT_TRUE(cert.holds);                                        // 0.243 > 0.14
  EXPECT_FALSE(CertifyDetection(0.80, q, reference, cal).holds);  // 0.093 < 0.14
  // From a precomputed ceiling: the same numbers; without a reference set it never holds.
  const MemsadCertificate from_ceiling = CertifyDetection(0.95, s_bar, cal);
  EXPECT_NEAR(from_ceiling.delta_s, cert.delta_s, 1e-6);
  EXPECT_TRUE(from_ceiling.holds);
  const MemsadCertificate none = CertifyDetection(0.95, std::nan(""), cal);
  EXPECT_FALSE(none.holds);
  EXPECT_EQ(none.s_bar, 0);
  EXPECT_FALSE(CertifyDetection(0.95, q, {}, cal).holds);
}

TEST(CalibrationTest, ProactiveScoreIsTheMeanCosine) {
  const auto probes = RandomUnits(16, 384, 31);
  const auto centroid = ProbeCentroid(probes, 384);
  for (const auto& e : RandomUnits(5, 384, 32)) {
    double mean = 0;
    for (const auto& p : probes) mean += Dot(e, p) / 16;
    EXPECT_NEAR(ProactiveScore(e, centroid), mean, 1e-6);
    EXPECT_EQ(ProactiveScore(e, probes), ProactiveScore(e, centroid));
  }
  EXPECT_EQ(ProactiveScore(probes[0], std::span<const std::vector<float>>()), 0);
}

TEST(CalibrationTest, ThresholdAtFprBoundsReferenceFlags) {
  std::vector<double> scores;
  for (int i = 0; i < 200; ++i) scores.push_back(i / 200.0);
  for (double fpr : {0.0, 0.01, 0.05, 0.2}) {
    const double t = ThresholdAtFpr(scores, fpr);
    const auto above = std::count_if(scores.begin(), scores.end(), [&](double s) { return s > t; });
    EXPECT_EQ(above, static_cast<long>(std::floor(fpr * 200))) << fpr;
  }
  EXPECT_DOUBLE_EQ(ThresholdAtFpr(std::vector<double>{0.3, 0.3, 0.3}, 0.5), 0.3);
}

TEST(CalibrationTest, TriggeredCalibrationLowersTheThreshold) {
  // Reference entries and plain queries share a topic direction; the triggered queries carry an
  // extra trigger direction the benign entries lack, so benign similarity to them drops, and so
  // does the threshold: an entry carrying the trigger then stands out.
  const size_t dim = 64;
  auto noise = RandomUnits(200, dim, 3);
  auto make = [&](size_t i, double topic, double trigger) {
    std::vector<float> v(dim);
    for (size_t j = 0; j < dim; ++j) v[j] = static_cast<float>(0.5 * noise[i][j]);
    v[0] += static_cast<float>(topic);
    v[1] += static_cast<float>(trigger);
    return Unit(v);
  };
  CalibrationInput plain, triggered;
  for (size_t i = 0; i < 50; ++i) {
    plain.reference_texts.push_back("benign entry " + std::to_string(i));
    plain.reference_embeddings.push_back(make(i, 1.0, 0.0));
  }
  triggered.reference_texts = plain.reference_texts;
  triggered.reference_embeddings = plain.reference_embeddings;
  for (size_t i = 50; i < 100; ++i) {
    plain.history.push_back(make(i, 1.0, 0.0));
    triggered.history.push_back(make(i, 1.0, 1.5));
  }
  triggered.triggered = true;
  auto a = CalibrateNamespace(plain);
  auto b = CalibrateNamespace(triggered);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_LT(b->Get<MemsadCalibration>(MemsadDescriptor())->threshold(),
            a->Get<MemsadCalibration>(MemsadDescriptor())->threshold());
  EXPECT_TRUE(b->Get<MemsadCalibration>(MemsadDescriptor())->triggered);
  EXPECT_EQ(a->Get<MemsadCalibration>(MemsadDescriptor())->n, 50u);
}

TEST(CalibrationTest, RejectsUnusableInput) {
  CalibrationInput input;
  EXPECT_EQ(CalibrateNamespace(input).status().code(), absl::StatusCode::kInvalidArgument);
  input.history = RandomUnits(3, 8, 1);
  input.reference_texts = {"only one"};
  input.reference_embeddings = RandomUnits(1, 8, 2);
  EXPECT_EQ(CalibrateNamespace(input).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(CalibrationTest, RoundTripsThroughJson) {
  CalibrationInput input;
  input.history = RandomUnits(10, 16, 1);
  input.reference_embeddings = RandomUnits(5, 16, 2);
  input.reference_texts = {"alpha beta", "gamma delta", "epsilon", "zeta eta theta", "iota"};
  input.probes = RandomUnits(4, 16, 3);
  auto cal = CalibrateNamespace(input);
  ASSERT_THAT(cal, IsOk());
  auto back = NamespaceCalibration::FromJson(cal->ToJson(/*with_data=*/true));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_DOUBLE_EQ(back->Get<MemsadCalibration>(MemsadDescriptor())->mu,
                   cal->Get<MemsadCalibration>(MemsadDescriptor())->mu);
  const auto* plus = cal->Get<MemsadPlusCalibration>(MemsadPlusDescriptor());
  const auto* plus_back = back->Get<MemsadPlusCalibration>(MemsadPlusDescriptor());
  ASSERT_TRUE(plus != nullptr && plus_back != nullptr);
  EXPECT_DOUBLE_EQ(plus_back->threshold, plus->threshold);
  ASSERT_NE(cal->Get<double>(ProactiveDescriptor()), nullptr);
  EXPECT_DOUBLE_EQ(*back->Get<double>(ProactiveDescriptor()), *cal->Get<double>(ProactiveDescriptor()));
  EXPECT_EQ(back->reference, cal->reference);
  EXPECT_DOUBLE_EQ(plus_back->baseline->JensenShannon(CharNgramProfile::Distribution("alpha")),
                   plus->baseline->JensenShannon(CharNgramProfile::Distribution("alpha")));
}

}  // namespace
}  // namespace bulwark
