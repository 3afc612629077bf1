// Binomial statistics for evaluation tables (DESIGN 4.8): exact Clopper–Pearson intervals for a
// rate k/n, the one-sided exact binomial test, and the Bonferroni correction across table rows.
// Clopper–Pearson bounds are quantiles of Beta distributions, computed here by bisection on the
// regularized incomplete beta function I_x(a, b) (continued fraction, Numerical Recipes 6.4),
// because the project has no statistics library.
#pragma once

#include <cstdint>

namespace bulwark::eval {

// I_x(a, b), the regularized incomplete beta function (the Beta(a, b) CDF at x).
// Preconditions: a > 0, b > 0; x is clamped to [0, 1]. Accurate to ~1e-12.
double RegularizedIncompleteBeta(double a, double b, double x);

// The p-quantile of Beta(a, b): the x in [0, 1] with I_x(a, b) = p, to within 1e-12.
// Preconditions: a > 0, b > 0, 0 <= p <= 1.
double BetaQuantile(double a, double b, double p);

struct Interval {
  double lo = 0;
  double hi = 1;
};

// The exact (Clopper–Pearson) two-sided interval for a binomial proportion with `successes` out
// of `trials` at the given confidence (default 95 %): lo = Beta(a/2; k, n-k+1) quantile (0 when
// k = 0), hi = Beta(1-a/2; k+1, n-k) quantile (1 when k = n), a = 1 - confidence.
// trials == 0 gives [0, 1]. Preconditions: 0 <= successes <= trials, 0 < confidence < 1.
Interval ClopperPearson(int64_t successes, int64_t trials, double confidence = 0.95);

// P[Binomial(n, p) >= k]: the p-value of the one-sided exact test of H0 "rate <= p" against
// "rate > p" after observing k successes in n trials. 1 for k <= 0, 0 for k > n.
double BinomialPValueAtLeast(int64_t k, int64_t n, double p);

// The per-test significance level after a Bonferroni correction for `tests` tests at family-wise
// level `alpha`: alpha / tests (alpha itself when tests <= 1).
double BonferroniAlpha(double alpha, int tests);

}  // namespace bulwark::eval
