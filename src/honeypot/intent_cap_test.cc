// Tests of the intent evidence's derived cap (intent_cap.h): two explicit requests in rounds
// that draw no pot reach log A through a real count table, one does not.
#include "honeypot/intent_cap.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "honeypot/llr_estimator.h"
#include "honeypot/sprt.h"
#include "testing/status_matchers.h"

namespace bulwark::honeypot {
namespace {

using ::bulwark::testing::IsOk;

TEST(TwoRequestIntentCap, IsHalfLogAPlusTheBoundOnAPotlessRound) {
  const double log_a = std::log(9.0);  // alpha = beta = 0.1
  absl::StatusOr<double> cap = TwoRequestIntentCap(log_a, 0.5, 1.1);
  ASSERT_THAT(cap, IsOk());
  EXPECT_NEAR(*cap, log_a / 2 + std::log(2.0), 1e-5);  // log 2 < 1.1: rho's bound is the tighter
  cap = TwoRequestIntentCap(log_a, 0.9, 0);            // no clamp: -log(0.9)
  ASSERT_THAT(cap, IsOk());
  EXPECT_NEAR(*cap, log_a / 2 - std::log(0.9), 1e-5);
  cap = TwoRequestIntentCap(log_a, 0.1, 0.5);  // the clamp is the tighter
  ASSERT_THAT(cap, IsOk());
  EXPECT_NEAR(*cap, log_a / 2 + 0.5, 1e-5);
}

TEST(TwoRequestIntentCap, TwoRequestsBlockAndOneDoesNotThroughAFittedTable) {
  absl::StatusOr<Sprt> sprt = Sprt::Create(SprtOptions{});
  ASSERT_THAT(sprt, IsOk());
  // Benign queries almost never draw a pot, the fit's attack queries mostly do: the n = 0 entry is
  // as negative as rho allows.
  std::vector<int> benign(500, 0), attack(200, 3);
  benign[0] = 1;
  attack[0] = 0;
  absl::StatusOr<CountCalibration> table = CountCalibration::Fit(benign, attack, 4, 1.1, 0.5);
  ASSERT_THAT(table, IsOk());
  ASSERT_LT(table->llr[0], -0.6);
  absl::StatusOr<double> cap = TwoRequestIntentCap(sprt->upper(), 0.5, 1.1);
  ASSERT_THAT(cap, IsOk());
  SprtState state;
  EXPECT_EQ(sprt->Update(state, *cap + table->llr[0]), SprtDecision::kContinue);  // one request
  EXPECT_EQ(sprt->Update(state, *cap + table->llr[0]), SprtDecision::kH1);        // two
  // The cap it replaces (log A / 2 + a little) needs five or more such rounds.
  SprtState old;
  int rounds = 1;
  while (sprt->Update(old, 1.1 + table->llr[0]) != SprtDecision::kH1 && rounds < 64) ++rounds;
  EXPECT_GE(rounds, 5);
  EXPECT_LT(rounds, 64);
}

TEST(TwoRequestIntentCap, RefusesWhatHasNoSafeCap) {
  const double log_a = std::log(9.0);
  EXPECT_FALSE(TwoRequestIntentCap(log_a, 0, 0).ok());      // a pot-less round is unbounded
  EXPECT_FALSE(TwoRequestIntentCap(log_a, 0.2, 0).ok());    // -log 0.2 = 1.61 >= log A / 2
  EXPECT_FALSE(TwoRequestIntentCap(0, 0.5, 1.1).ok());      // no boundary
  EXPECT_FALSE(TwoRequestIntentCap(log_a, 1.0, 1.1).ok());  // rho outside [0, 1)
  EXPECT_FALSE(TwoRequestIntentCap(log_a, 0.5, NAN).ok());
}

}  // namespace
}  // namespace bulwark::honeypot
