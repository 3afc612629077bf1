#include "honeypot/relevance_evidence.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "testing/status_matchers.h"

namespace bulwark::honeypot {
namespace {

using ::bulwark::testing::IsOk;
using ::bulwark::testing::StatusIs;

// tau is the benign quantile; l is the Jeffreys-smoothed log ratio of the shares below tau.
TEST(RelevanceEvidenceTest, ThresholdIsTheBenignQuantileAndLlrTheShareRatio) {
  std::vector<float> benign, attack;
  for (int i = 0; i < 101; ++i) benign.push_back(0.01f * static_cast<float>(i));  // 0.00 .. 1.00
  for (int i = 0; i < 40; ++i) attack.push_back(i < 30 ? 0.02f : 0.9f);           // 30 of 40 below
  auto cal = RelevanceCalibration::Fit(benign, attack, 0.1, /*cap=*/20);
  ASSERT_THAT(cal, IsOk());
  EXPECT_FLOAT_EQ(cal->threshold, 0.10f);  // sorted[0.1 * 100]
  const double p0 = (10 + 0.5) / 102, p1 = (30 + 0.5) / 41;
  EXPECT_NEAR(cal->llr, std::log(p1 / p0), 1e-9);
  EXPECT_EQ(cal->Llr(0.05), cal->llr);
  EXPECT_EQ(cal->Llr(0.5), 0.0);  // near a memory: no evidence either way
  EXPECT_EQ(cal->Llr(std::numeric_limits<double>::quiet_NaN()), cal->llr);
  // Capped, and never negative (attack queries closer to memories than benign ones).
  auto capped = RelevanceCalibration::Fit(benign, attack, 0.1, 1.1);
  ASSERT_THAT(capped, IsOk());
  EXPECT_DOUBLE_EQ(capped->llr, 1.1);
  const std::vector<float> close(40, 0.95f);
  auto none = RelevanceCalibration::Fit(benign, close);
  ASSERT_THAT(none, IsOk());
  EXPECT_EQ(none->llr, 0.0);
  EXPECT_EQ(cal->ToJson()["benign_queries"], 101);
}

TEST(RelevanceEvidenceTest, BadInputIsRefused) {
  const std::vector<float> ok = {0.1f, 0.2f}, empty;
  const std::vector<float> nan = {0.1f, std::numeric_limits<float>::quiet_NaN()};
  EXPECT_THAT(RelevanceCalibration::Fit(empty, ok), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(RelevanceCalibration::Fit(ok, empty), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(RelevanceCalibration::Fit(ok, nan), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(RelevanceCalibration::Fit(ok, ok, 0.0), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(RelevanceCalibration::Fit(ok, ok, 0.6), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(RelevanceCalibration::Fit(ok, ok, 0.1, 0), StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace bulwark::honeypot
