// Percentile bootstrap (see bootstrap.h).
#include "eval/bootstrap.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace bulwark::eval {
namespace {

// Uniform in [0, bound) without modulo bias. Precondition: bound >= 1.
uint64_t UniformIndex(std::mt19937_64& rng, uint64_t bound) {
  const uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
  uint64_t x;
  do {
    x = rng();
  } while (x >= limit);
  return x % bound;
}

// The q-quantile of sorted values with linear interpolation between order statistics.
double Quantile(const std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

}  // namespace

MeanWithCi BootstrapMeanCi(std::span<const double> values, const BootstrapOptions& options) {
  MeanWithCi result;
  if (values.empty()) {
    result.ci = {0, 0};
    return result;
  }
  double sum = 0;
  for (double v : values) sum += v;
  result.mean = sum / static_cast<double>(values.size());
  if (values.size() == 1) {
    result.ci = {result.mean, result.mean};
    return result;
  }
  std::mt19937_64 rng(options.seed);
  const int resamples = std::max(1, options.resamples);
  std::vector<double> means;
  means.reserve(resamples);
  for (int b = 0; b < resamples; ++b) {
    double s = 0;
    for (size_t i = 0; i < values.size(); ++i) s += values[UniformIndex(rng, values.size())];
    means.push_back(s / static_cast<double>(values.size()));
  }
  std::sort(means.begin(), means.end());
  const double tail = (1 - options.confidence) / 2;
  result.ci = {Quantile(means, tail), Quantile(means, 1 - tail)};
  return result;
}

}  // namespace bulwark::eval
