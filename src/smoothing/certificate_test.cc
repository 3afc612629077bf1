// The certificate against exact rational values, its monotonicity, its tie rule and its range.
#include "smoothing/certificate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/status_matchers.h"

namespace bulwark {
namespace {

using ::bulwark::testing::IsOk;

double Delta(int m, int k, int t, int nruns) {
  auto d = CertificateDelta({.m = m, .k = k, .nruns = nruns}, t);
  EXPECT_TRUE(d.ok()) << d.status();
  return d.value_or(-1);
}

TEST(CertificateTest, ProductionScaleValue) {
  // p_hit = 1 - 15/20 = 1/4; P[Bin(5, 1/4) >= 3] = (10*9 + 5*3 + 1) / 4^5 = 106/1024.
  EXPECT_DOUBLE_EQ(Delta(20, 5, 1, 5), 106.0 / 1024.0);
  EXPECT_NEAR(Delta(20, 5, 1, 5), 0.1035, 5e-5);
}

TEST(CertificateTest, SmallStoreValue) {
  // m' = 10 + t = 11: p_hit = 1 - C(10,5)/C(11,5) = 5/11;
  // P[Bin(5, 5/11) >= 3] = (10*5^3*6^2 + 5*5^4*6 + 5^5) / 11^5 = 66875/161051 = 0.415241...
  // (the "0.4153" is this value rounded up in its fourth decimal).
  EXPECT_NEAR(Delta(11, 5, 1, 5), 66875.0 / 161051.0, 1e-14);
  EXPECT_NEAR(Delta(11, 5, 1, 5), 0.4153, 1e-4);
}

TEST(CertificateTest, HitProbabilityIsTheHypergeometricComplement) {
  // 1 - C(17,5)/C(20,5) = 1 - 6188/15504.
  auto p = HitProbability({.m = 20, .k = 5, .nruns = 5}, 3);
  ASSERT_THAT(p, IsOk());
  EXPECT_NEAR(*p, 1.0 - 6188.0 / 15504.0, 1e-15);
  EXPECT_EQ(*HitProbability({.m = 20, .k = 5, .nruns = 5}, 0), 0.0);
  // More marked items than items left out of a subset: every subset holds one.
  EXPECT_EQ(*HitProbability({.m = 8, .k = 5, .nruns = 5}, 4), 1.0);
}

TEST(CertificateTest, TieCountsAsLost) {
  // nruns = 4: two hit runs of four already count against us. p_hit = 1/4:
  // P[Bin(4, 1/4) >= 2] = 1 - (3/4)^4 - 4 (1/4)(3/4)^3 = 67/256.
  EXPECT_DOUBLE_EQ(Delta(20, 5, 1, 4), 67.0 / 256.0);
}

TEST(CertificateTest, MonotoneInT) {
  for (int m : {6, 11, 20, 100, 1000}) {
    double previous = Delta(m, 5, 0, 5);
    EXPECT_EQ(previous, 0.0);
    for (int t = 1; t <= std::min(m, 40); ++t) {
      const double d = Delta(m, 5, t, 5);
      EXPECT_GE(d, previous) << "m=" << m << " t=" << t;
      previous = d;
    }
  }
}

TEST(CertificateTest, MonotoneInM) {
  for (int t : {1, 2, 3}) {
    double previous = 1.0;
    for (int m = 5; m <= 2000; m += (m < 50 ? 1 : 37)) {
      const double d = Delta(m, 5, t, 5);
      EXPECT_LE(d, previous) << "m=" << m << " t=" << t;
      previous = d;
    }
  }
}

TEST(CertificateTest, LargeStoresStayFiniteAndExact) {
  // p_hit = k/m for t = 1, so delta = P[Bin(5, 5/10000) >= 3] = 10 p^3 q^2 + 5 p^4 q + p^5.
  const double p = 5.0 / 10000.0, q = 1 - p;
  EXPECT_NEAR(Delta(10000, 5, 1, 5), 10 * p * p * p * q * q + 5 * p * p * p * p * q + p * p * p * p * p,
              1e-20);
  const double tiny = Delta(10000, 50, 3, 101);
  EXPECT_GT(tiny, 0.0);
  EXPECT_LT(tiny, 1e-60);
  EXPECT_NEAR(Delta(10000, 9999, 1, 10000), 1.0, 1e-12);
}

TEST(CertificateTest, BinomialTailMatchesDirectSum) {
  for (int n : {1, 2, 7, 30}) {
    for (double p : {0.0, 0.01, 0.3, 0.5, 0.99, 1.0}) {
      for (int r = 0; r <= n + 1; ++r) {
        double direct = 0, c = 1;  // c = C(n, j)
        for (int j = 0; j <= n; ++j) {
          if (j >= r) direct += c * std::pow(p, j) * std::pow(1 - p, n - j);
          c = c * (n - j) / (j + 1);
        }
        EXPECT_NEAR(BinomialUpperTail(n, p, r), direct, 1e-12) << n << " " << p << " " << r;
      }
    }
  }
}

TEST(CertificateTest, RejectsBadParameters) {
  EXPECT_FALSE(CertificateDelta({.m = 4, .k = 5, .nruns = 5}, 1).ok());
  EXPECT_FALSE(CertificateDelta({.m = 20, .k = 0, .nruns = 5}, 1).ok());
  EXPECT_FALSE(CertificateDelta({.m = 20, .k = 5, .nruns = 0}, 1).ok());
  EXPECT_FALSE(CertificateDelta({.m = 10001, .k = 5, .nruns = 5}, 1).ok());
  EXPECT_FALSE(CertificateDelta({.m = 20, .k = 5, .nruns = 5}, 21).ok());
  EXPECT_FALSE(CertificateDelta({.m = 20, .k = 5, .nruns = 5}, -1).ok());
}

TEST(CertificateTest, CertificateReportsTOneToThree) {
  auto c = MakeCertificate({.m = 20, .k = 5, .nruns = 5});
  ASSERT_THAT(c, IsOk());
  ASSERT_EQ(c->delta.size(), 3u);
  EXPECT_DOUBLE_EQ(c->delta[0], Delta(20, 5, 1, 5));
  EXPECT_DOUBLE_EQ(c->delta[2], Delta(20, 5, 3, 5));
  const nlohmann::json j = ToJson(*c);
  EXPECT_EQ(j["m"], 20);
  EXPECT_EQ(j["nruns"], 5);
  EXPECT_DOUBLE_EQ(j["delta"]["1"].get<double>(), c->delta[0]);
  // A pool of two: t = 3 adversarial entries would fill it.
  auto small = MakeCertificate({.m = 2, .k = 1, .nruns = 3});
  ASSERT_THAT(small, IsOk());
  EXPECT_EQ(small->delta[2], 1.0);
}

}  // namespace
}  // namespace bulwark
