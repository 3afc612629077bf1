#include "honeypot/llr_estimator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "testing/status_matchers.h"

namespace bulwark::honeypot {
namespace {

using ::bulwark::testing::IsOk;
using ::bulwark::testing::StatusIs;

TEST(LlrEstimatorTest, CountIncrementTable) {
  // research/mempot.md 2.5: log((n + eps) / (k - n + eps)).
  const std::vector<double> k4 = {-2.197, -0.847, 0, 0.847, 2.197};
  for (int n = 0; n <= 4; ++n) EXPECT_NEAR(CountLlr(n, 4 - n, 0.5), k4[n], 5e-4) << n;
  const std::vector<double> k3 = {-1.946, -0.511, 0.511, 1.946};
  for (int n = 0; n <= 3; ++n) EXPECT_NEAR(CountLlr(n, 3 - n, 0.5), k3[n], 5e-4) << n;
  EXPECT_NEAR(CountLlr(1, 3, 0.25), -0.956, 5e-4);
  EXPECT_NEAR(CountLlr(0, 5, 0.5), -2.398, 5e-4);
}

TEST(LlrEstimatorTest, ObservationDispatchesToTheEstimator) {
  const std::vector<RetrievedRow> top = {{0.6f, true}, {0.5f, false}, {-0.2f, false}, {0.3f, true}};
  const std::vector<float> pots = {0.6f, 0.3f, 0.1f};
  const std::vector<float> mems = {0.5f, -0.2f, -0.3f};
  Observation obs{top, pots, mems};
  EXPECT_EQ(obs.pot_count(), 2);
  LlrOptions o;
  EXPECT_NEAR(ObservationLlr(obs, o), 0.0, 1e-12);  // 2 of 4
  o.kind = LlrEstimatorKind::kSimilarity;           // Eq. 18, the negative cosine clamped to 0
  EXPECT_NEAR(ObservationLlr(obs, o), std::log((0.9 + 0.01) / (0.5 + 0.01)), 1e-6);
  o.kind = LlrEstimatorKind::kGlobalSimilarity;  // Eq. 19 with K_g = 2
  o.global_k = 2;
  EXPECT_NEAR(ObservationLlr(obs, o), std::log((0.45 + 0.01) / (0.25 + 0.01)), 1e-6);
  o.global_k = 4;  // fewer than K_g scores: the missing ones count as 0
  EXPECT_NEAR(ObservationLlr(obs, o), std::log((1.0 / 4 + 0.01) / (0.5 / 4 + 0.01)), 1e-6);
}

TEST(LlrEstimatorTest, CalibratedCountIsTheJeffreysSmoothedLogRatio) {
  // Benign: 98 x 0 pots, 2 x 1 pot. Attack: 10 x 0, 30 x 1, 60 x 2.
  std::vector<int> benign(98, 0), attack;
  benign.insert(benign.end(), 2, 1);
  attack.insert(attack.end(), 10, 0);
  attack.insert(attack.end(), 30, 1);
  attack.insert(attack.end(), 60, 2);
  auto cal = CountCalibration::Fit(benign, attack, 2);
  ASSERT_TRUE(cal.ok()) << cal.status();
  const double z = 100 + 1.5;
  ASSERT_EQ(cal->llr.size(), 3u);
  EXPECT_NEAR(cal->llr[0], std::log((10.5 / z) / (98.5 / z)), 1e-12);
  EXPECT_NEAR(cal->llr[1], std::log((30.5 / z) / (2.5 / z)), 1e-12);
  EXPECT_NEAR(cal->llr[2], std::log((60.5 / z) / (0.5 / z)), 1e-12);
  // One pot hit is strong evidence here, unlike Eq. 17 (where 1 of 2 gives 0).
  EXPECT_GT(cal->llr[1], 2.0);
  auto capped = CountCalibration::Fit(benign, attack, 2, std::log(9.0));
  ASSERT_TRUE(capped.ok());
  EXPECT_NEAR(capped->llr[2], std::log(9.0), 1e-12);
  // A count beyond the table uses its last entry.
  LlrOptions o{.kind = LlrEstimatorKind::kCountCalibrated, .calibration = *cal};
  const std::vector<RetrievedRow> top = {{0.5f, true}, {0.5f, true}, {0.5f, true}};
  EXPECT_EQ(ObservationLlr(Observation{top, {}, {}}, o), cal->llr[2]);
}

// The unseen-family mixture: llr = log((1 - rho) p1 / p0 + rho), so a round without pots costs at
// most -log(rho), and strong pot evidence loses about -log(1 - rho).
TEST(LlrEstimatorTest, UnseenWeightMixesTheBenignPmfIntoTheAlternative) {
  std::vector<int> benign(98, 0), attack;
  benign.insert(benign.end(), 2, 1);
  attack.insert(attack.end(), 10, 0);
  attack.insert(attack.end(), 90, 1);
  auto plain = CountCalibration::Fit(benign, attack, 1);
  auto mixed = CountCalibration::Fit(benign, attack, 1, /*cap=*/0, /*unseen_weight=*/0.5);
  ASSERT_THAT(plain, IsOk());
  ASSERT_THAT(mixed, IsOk());
  for (size_t n = 0; n < 2; ++n) {
    EXPECT_NEAR(mixed->llr[n], std::log(0.5 * std::exp(plain->llr[n]) + 0.5), 1e-12) << n;
  }
  EXPECT_LT(plain->llr[0], -2.0);                   // the pots' silence argues "benign" strongly
  EXPECT_GT(mixed->llr[0], std::log(0.5) - 1e-12);  // at most log 2 with rho = 1/2
  EXPECT_GT(mixed->llr[1], plain->llr[1] - std::log(2.0) - 1e-12);
  // Applied before the cap.
  auto capped = CountCalibration::Fit(benign, attack, 1, /*cap=*/1.1, /*unseen_weight=*/0.5);
  ASSERT_THAT(capped, IsOk());
  EXPECT_NEAR(capped->llr[1], 1.1, 1e-12);
  EXPECT_NEAR(capped->llr[0], mixed->llr[0], 1e-12);
  for (double bad : {-0.1, 1.0, std::nan("")}) {
    EXPECT_THAT(CountCalibration::Fit(benign, attack, 1, 0, bad),
                StatusIs(absl::StatusCode::kInvalidArgument))
        << bad;
  }
}

TEST(LlrEstimatorTest, CalibrationJsonRoundTripAndValidation) {
  CountCalibration cal{{-1.5, 0.25, 3.0}};
  auto back = CountCalibration::FromJson(cal.ToJson());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->llr, cal.llr);
  EXPECT_FALSE(CountCalibration::FromJson({{"llr", {1.0}}}).ok());
  EXPECT_FALSE(CountCalibration::FromJson({{"llr", {1.0, "x"}}}).ok());
  EXPECT_FALSE(CountCalibration::FromJson({{"llr", {1.0, 2.0}}, {"extra", 1}}).ok());
  EXPECT_FALSE(CountCalibration::Fit(std::vector<int>{0, 5}, std::vector<int>{1}, 4).ok());
  EXPECT_FALSE(CountCalibration::Fit(std::vector<int>{}, std::vector<int>{1}, 4).ok());
  EXPECT_FALSE(ValidateLlrOptions({.kind = LlrEstimatorKind::kCountCalibrated}).ok());
  EXPECT_FALSE(ValidateLlrOptions({.count_epsilon = 0}).ok());
  EXPECT_FALSE(ParseLlrEstimatorKind("magic").ok());
  EXPECT_EQ(*ParseLlrEstimatorKind("global_similarity"), LlrEstimatorKind::kGlobalSimilarity);
}

}  // namespace
}  // namespace bulwark::honeypot
