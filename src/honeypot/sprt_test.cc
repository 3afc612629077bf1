#include "honeypot/sprt.h"

#include <gtest/gtest.h>

#include <cmath>

#include "honeypot/llr_estimator.h"

namespace bulwark::honeypot {
namespace {

TEST(SprtTest, BoundariesForAlphaBetaPointOne) {
  auto sprt = Sprt::Create({});
  ASSERT_TRUE(sprt.ok()) << sprt.status();
  EXPECT_NEAR(sprt->upper(), 2.1972245773362196, 1e-12);  // log 9
  EXPECT_NEAR(sprt->lower(), -2.1972245773362196, 1e-12);
  auto skew = Sprt::Create({.alpha = 0.05, .beta = 0.2});
  ASSERT_TRUE(skew.ok());
  EXPECT_NEAR(skew->upper(), std::log(0.8 / 0.05), 1e-12);
  EXPECT_NEAR(skew->lower(), std::log(0.2 / 0.95), 1e-12);
}

TEST(SprtTest, RejectsBadErrorBudgets) {
  EXPECT_FALSE(Sprt::Create({.alpha = 0, .beta = 0.1}).ok());
  EXPECT_FALSE(Sprt::Create({.alpha = 0.1, .beta = 1}).ok());
  EXPECT_FALSE(Sprt::Create({.alpha = 0.6, .beta = 0.5}).ok());
  EXPECT_FALSE(Sprt::Create({.alpha = std::nan(""), .beta = 0.1}).ok());
  EXPECT_FALSE(ParseLowerBoundary("sometimes").ok());
  EXPECT_EQ(*ParseLowerBoundary("cusum"), LowerBoundary::kCusum);
}

TEST(SprtTest, AllPotRoundAtK4DecidesAtOnceDespiteTheTie) {
  // Eq. 17 at k = 4, eps 0.5: 4 pots give log(4.5 / 0.5) = log 9 = log A exactly.
  auto sprt = Sprt::Create({});
  ASSERT_TRUE(sprt.ok());
  SprtState s;
  EXPECT_EQ(sprt->Update(s, CountLlr(4, 0, 0.5)), SprtDecision::kH1);
  EXPECT_TRUE(s.h1);
  EXPECT_EQ(s.decided_round, 1u);
  // Final: later rounds count but do not move S.
  const double frozen = s.statistic;
  EXPECT_EQ(sprt->Update(s, -100), SprtDecision::kH1);
  EXPECT_EQ(s.statistic, frozen);
  EXPECT_EQ(s.rounds, 2u);
}

TEST(SprtTest, RestartResetsAfterH0) {
  auto sprt = Sprt::Create({.lower_boundary = LowerBoundary::kRestart});
  ASSERT_TRUE(sprt.ok());
  SprtState s;
  EXPECT_EQ(sprt->Update(s, CountLlr(1, 3, 0.5)), SprtDecision::kContinue);  // -0.847
  EXPECT_EQ(sprt->Update(s, CountLlr(1, 3, 0.5)), SprtDecision::kContinue);  // -1.695
  EXPECT_EQ(sprt->Update(s, CountLlr(1, 3, 0.5)), SprtDecision::kH0);        // -2.54 <= log B
  EXPECT_EQ(s.statistic, 0);
  EXPECT_EQ(s.h0_decisions, 1u);
  EXPECT_EQ(s.rounds_since_reset, 0u);
  EXPECT_EQ(s.rounds, 3u);
  // A benign round with no pot reaches log B at once (eps <= 0.5).
  EXPECT_EQ(sprt->Update(s, CountLlr(0, 4, 0.5)), SprtDecision::kH0);
  EXPECT_EQ(s.h0_decisions, 2u);
}

TEST(SprtTest, LowerBoundaryPolicies) {
  // 20 benign rounds (no pots), then an attacker drawing 3 of 4 pots per round (+0.847).
  auto rounds_to_detect = [](LowerBoundary policy) {
    auto sprt = Sprt::Create({.lower_boundary = policy});
    SprtState s;
    for (int t = 0; t < 20; ++t) sprt->Update(s, CountLlr(0, 4, 0.5));
    for (int t = 1; t <= 64; ++t) {
      if (sprt->Update(s, CountLlr(3, 1, 0.5)) == SprtDecision::kH1) return t;
    }
    return -1;
  };
  EXPECT_EQ(rounds_to_detect(LowerBoundary::kRestart), 3);  // S restarted at 0: 3 x 0.847 >= 2.197
  EXPECT_EQ(rounds_to_detect(LowerBoundary::kCusum), 3);
  EXPECT_EQ(rounds_to_detect(LowerBoundary::kFloor), 6);  // from log B: 6 x 0.847 >= 4.39
  EXPECT_EQ(rounds_to_detect(LowerBoundary::kNone), 55);  // 20 x -2.197 banked first: the pitfall
}

TEST(SprtTest, FloorAndCusumNeverDecideH0) {
  for (LowerBoundary policy : {LowerBoundary::kFloor, LowerBoundary::kCusum}) {
    auto sprt = Sprt::Create({.lower_boundary = policy});
    SprtState s;
    for (int t = 0; t < 10; ++t) EXPECT_EQ(sprt->Update(s, -5.0), SprtDecision::kContinue);
    EXPECT_EQ(s.statistic, policy == LowerBoundary::kFloor ? sprt->lower() : 0.0);
    EXPECT_EQ(s.h0_decisions, 0u);
  }
}

TEST(SprtTest, NonFiniteLlrCountsTheRoundOnly) {
  auto sprt = Sprt::Create({});
  SprtState s;
  sprt->Update(s, 1.0);
  sprt->Update(s, std::nan(""));
  sprt->Update(s, INFINITY);
  EXPECT_EQ(s.statistic, 1.0);
  EXPECT_EQ(s.rounds, 3u);
}

}  // namespace
}  // namespace bulwark::honeypot
