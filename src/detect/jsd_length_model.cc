#include "detect/jsd_length_model.h"

#include <algorithm>
#include <cmath>

namespace bulwark {
namespace {

double LogLength(size_t trigrams) { return std::log(static_cast<double>(std::max<size_t>(trigrams, 1))); }

}  // namespace

double JsdLengthModel::Expected(size_t trigrams) const { return intercept + slope * LogLength(trigrams); }

JsdLengthModel JsdLengthModel::Fit(std::span<const size_t> trigrams, std::span<const double> jsd) {
  const double n = static_cast<double>(jsd.size());
  double mean_x = 0, mean_y = 0;
  for (size_t i = 0; i < jsd.size(); ++i) {
    mean_x += LogLength(trigrams[i]);
    mean_y += jsd[i];
  }
  mean_x /= n;
  mean_y /= n;
  double sxx = 0, sxy = 0;
  for (size_t i = 0; i < jsd.size(); ++i) {
    const double dx = LogLength(trigrams[i]) - mean_x;
    sxx += dx * dx;
    sxy += dx * (jsd[i] - mean_y);
  }
  JsdLengthModel model;
  model.slope = sxx > 1e-12 ? sxy / sxx : 0.0;
  model.intercept = mean_y - model.slope * mean_x;
  return model;
}

}  // namespace bulwark
