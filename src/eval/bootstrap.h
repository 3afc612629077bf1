// Percentile bootstrap confidence interval of a mean (DESIGN 4.8: "bootstrap 95 % CIs over
// seeds"). Deterministic for a given seed: resampling uses std::mt19937_64, whose output is fixed
// by the C++ standard, with a rejection-sampled index (no std::uniform_int_distribution, whose
// output differs between standard libraries).
#pragma once

#include <cstdint>
#include <span>

#include "eval/binomial.h"

namespace bulwark::eval {

struct BootstrapOptions {
  int resamples = 2000;      // B; >= 1
  double confidence = 0.95;  // in (0, 1)
  uint64_t seed = 1;
};

struct MeanWithCi {
  double mean = 0;
  Interval ci;  // [mean, mean] for one value; [0, 0] and mean 0 for none
};

// The mean of `values` and the percentile bootstrap interval: the (1-c)/2 and (1+c)/2 empirical
// quantiles of the means of `resamples` resamples with replacement.
MeanWithCi BootstrapMeanCi(std::span<const double> values, const BootstrapOptions& options = {});

}  // namespace bulwark::eval
