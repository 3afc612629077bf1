// Incomplete beta and binomial statistics (see binomial.h).
#include "eval/binomial.h"

#include <algorithm>
#include <cmath>

#include "smoothing/certificate.h"

namespace bulwark::eval {
namespace {

// The continued fraction of I_x(a, b) by the modified Lentz method (Numerical Recipes betacf).
double BetaContinuedFraction(double a, double b, double x) {
  constexpr int kMaxIterations = 1000;
  constexpr double kEpsilon = 1e-15;
  constexpr double kTiny = 1e-300;
  const double qab = a + b, qap = a + 1, qam = a - 1;
  double c = 1, d = 1 - qab * x / qap;
  if (std::fabs(d) < kTiny) d = kTiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= kMaxIterations; ++m) {
    const int m2 = 2 * m;
    double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    h *= d * c;
    aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    const double del = d * c;
    h *= del;
    if (std::fabs(del - 1) < kEpsilon) break;
  }
  return h;
}

}  // namespace

double RegularizedIncompleteBeta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double log_front =
      std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
  const double front = std::exp(log_front);
  // The continued fraction converges fast for x < (a+1)/(a+b+2); use the symmetry otherwise.
  if (x < (a + 1) / (a + b + 2)) return front * BetaContinuedFraction(a, b, x) / a;
  return 1 - front * BetaContinuedFraction(b, a, 1 - x) / b;
}

double BetaQuantile(double a, double b, double p) {
  if (p <= 0) return 0;
  if (p >= 1) return 1;
  double lo = 0, hi = 1;
  for (int i = 0; i < 200 && hi - lo > 1e-14; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (RegularizedIncompleteBeta(a, b, mid) < p) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return 0.5 * (lo + hi);
}

Interval ClopperPearson(int64_t successes, int64_t trials, double confidence) {
  if (trials <= 0) return {0, 1};
  const double k = static_cast<double>(std::clamp<int64_t>(successes, 0, trials));
  const double n = static_cast<double>(trials);
  const double alpha = 1 - confidence;
  Interval interval;
  interval.lo = k == 0 ? 0 : BetaQuantile(k, n - k + 1, alpha / 2);
  interval.hi = k == n ? 1 : BetaQuantile(k + 1, n - k, 1 - alpha / 2);
  return interval;
}

double BinomialPValueAtLeast(int64_t k, int64_t n, double p) {
  if (k <= 0) return 1;
  if (k > n) return 0;
  return BinomialUpperTail(static_cast<int>(n), std::clamp(p, 0.0, 1.0), static_cast<int>(k));
}

double BonferroniAlpha(double alpha, int tests) { return tests <= 1 ? alpha : alpha / tests; }

}  // namespace bulwark::eval
