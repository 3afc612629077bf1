// Hand-computed checks of the evaluation statistics: AUROC with ties, the ROC curve, TPR at FPR,
// Clopper–Pearson against published values, the binomial tail, Bonferroni, and the bootstrap.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "eval/binomial.h"
#include "eval/bootstrap.h"
#include "eval/rates.h"
#include "eval/roc.h"

namespace bulwark::eval {
namespace {

TEST(Auroc, TiesCountHalf) {
  // Pairs (pos, neg): (1,2)=0 (1,0)=1 (2,2)=.5 (2,0)=1 (2,2)=.5 (2,0)=1 -> 4 / 6.
  const std::vector<double> pos = {1, 2, 2}, neg = {2, 0};
  EXPECT_NEAR(Auroc(pos, neg), 4.0 / 6.0, 1e-12);
}

TEST(Auroc, PerfectInvertedAndAllTied) {
  const std::vector<double> hi = {3, 4}, lo = {1, 2}, same = {1, 1};
  EXPECT_DOUBLE_EQ(Auroc(hi, lo), 1.0);
  EXPECT_DOUBLE_EQ(Auroc(lo, hi), 0.0);
  EXPECT_DOUBLE_EQ(Auroc(same, same), 0.5);
  EXPECT_DOUBLE_EQ(Auroc({}, lo), 0.5);
}

TEST(RocCurve, StepsThroughDistinctScoresAndMatchesAuroc) {
  const std::vector<double> pos = {1, 2, 2}, neg = {2, 0};
  const std::vector<RocPoint> curve = RocCurve(pos, neg);
  ASSERT_EQ(curve.size(), 4u);  // (0,0), thr 2, thr 1, thr 0
  EXPECT_DOUBLE_EQ(curve[0].fpr, 0);
  EXPECT_DOUBLE_EQ(curve[0].tpr, 0);
  EXPECT_DOUBLE_EQ(curve[1].threshold, 2);
  EXPECT_DOUBLE_EQ(curve[1].fpr, 0.5);
  EXPECT_NEAR(curve[1].tpr, 2.0 / 3.0, 1e-12);
  EXPECT_DOUBLE_EQ(curve[2].fpr, 0.5);
  EXPECT_DOUBLE_EQ(curve[2].tpr, 1);
  EXPECT_DOUBLE_EQ(curve[3].fpr, 1);
  EXPECT_DOUBLE_EQ(curve[3].tpr, 1);
  double area = 0;
  for (size_t i = 1; i < curve.size(); ++i) {
    area += (curve[i].fpr - curve[i - 1].fpr) * (curve[i].tpr + curve[i - 1].tpr) / 2;
  }
  EXPECT_NEAR(area, Auroc(pos, neg), 1e-12);
  EXPECT_DOUBLE_EQ(TprAtFpr(curve, 0.5), 1.0);
  EXPECT_DOUBLE_EQ(TprAtFpr(curve, 0.4), 0.0);
  EXPECT_DOUBLE_EQ(FprAtTpr(curve, 0.99), 0.5);
  EXPECT_DOUBLE_EQ(FprAtTpr(curve, 0.5), 0.5);
}

TEST(IncompleteBeta, MatchesBinomialIdentity) {
  // I_0.5(2, 3) = P[Bin(4, .5) >= 2] = 11/16; I_x(1, 1) = x.
  EXPECT_NEAR(RegularizedIncompleteBeta(2, 3, 0.5), 11.0 / 16.0, 1e-12);
  EXPECT_NEAR(RegularizedIncompleteBeta(1, 1, 0.3), 0.3, 1e-12);
  EXPECT_NEAR(BetaQuantile(2, 3, 11.0 / 16.0), 0.5, 1e-10);
}

TEST(ClopperPearson, KnownValues) {
  Interval ci = ClopperPearson(0, 10);
  EXPECT_DOUBLE_EQ(ci.lo, 0);
  EXPECT_NEAR(ci.hi, 0.308497, 1e-6);
  ci = ClopperPearson(5, 10);
  EXPECT_NEAR(ci.lo, 0.187086, 1e-6);
  EXPECT_NEAR(ci.hi, 0.812914, 1e-6);
  ci = ClopperPearson(10, 10);
  EXPECT_NEAR(ci.lo, 0.691503, 1e-6);
  EXPECT_DOUBLE_EQ(ci.hi, 1);
  ci = ClopperPearson(1, 10);
  EXPECT_NEAR(ci.lo, 0.002529, 1e-6);
  EXPECT_NEAR(ci.hi, 0.445016, 1e-6);
  ci = ClopperPearson(0, 0);
  EXPECT_DOUBLE_EQ(ci.lo, 0);
  EXPECT_DOUBLE_EQ(ci.hi, 1);
}

TEST(BinomialTest, OneSidedTailAndBonferroni) {
  EXPECT_NEAR(BinomialPValueAtLeast(8, 10, 0.5), 56.0 / 1024.0, 1e-12);
  EXPECT_DOUBLE_EQ(BinomialPValueAtLeast(0, 10, 0.3), 1.0);
  EXPECT_DOUBLE_EQ(BinomialPValueAtLeast(11, 10, 0.3), 0.0);
  EXPECT_DOUBLE_EQ(BonferroniAlpha(0.05, 5), 0.01);
  EXPECT_DOUBLE_EQ(BonferroniAlpha(0.05, 0), 0.05);
}

TEST(Rate, CountsAndInterval) {
  Rate rate;
  for (int i = 0; i < 10; ++i) rate.Add(i < 5);
  EXPECT_EQ(rate.successes, 5);
  EXPECT_EQ(rate.trials, 10);
  EXPECT_DOUBLE_EQ(rate.value(), 0.5);
  EXPECT_NEAR(ToJson(rate)["ci95"][0].get<double>(), 0.187086, 1e-6);
}

TEST(Bootstrap, DeterministicForASeedAndBracketsTheMean) {
  const std::vector<double> values = {0.1, 0.4, 0.35, 0.8, 0.5, 0.2};
  const MeanWithCi a = BootstrapMeanCi(values, {.resamples = 500, .seed = 7});
  const MeanWithCi b = BootstrapMeanCi(values, {.resamples = 500, .seed = 7});
  const MeanWithCi c = BootstrapMeanCi(values, {.resamples = 500, .seed = 8});
  EXPECT_NEAR(a.mean, 2.35 / 6, 1e-12);
  EXPECT_EQ(a.ci.lo, b.ci.lo);
  EXPECT_EQ(a.ci.hi, b.ci.hi);
  EXPECT_TRUE(a.ci.lo != c.ci.lo || a.ci.hi != c.ci.hi);
  EXPECT_LT(a.ci.lo, a.mean);
  EXPECT_GT(a.ci.hi, a.mean);
  EXPECT_GE(a.ci.lo, 0.1);
  EXPECT_LE(a.ci.hi, 0.8);
  const std::vector<double> one = {0.3};
  EXPECT_DOUBLE_EQ(BootstrapMeanCi(one).ci.lo, 0.3);
}

}  // namespace
}  // namespace bulwark::eval
