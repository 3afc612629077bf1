// The intent evidence's cap (see intent_cap.h).
#include "honeypot/intent_cap.h"

#include <absl/status/status.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace bulwark::honeypot {

absl::StatusOr<double> TwoRequestIntentCap(double log_a, double rho, double count_cap) {
  if (!(log_a > 0) || !std::isfinite(log_a))
    return absl::InvalidArgumentError("intent cap: log A must be > 0");
  if (!(rho >= 0 && rho < 1)) return absl::InvalidArgumentError("intent cap: rho must be in [0, 1)");
  if (!std::isfinite(count_cap)) return absl::InvalidArgumentError("intent cap: count cap must be finite");
  double bound = std::numeric_limits<double>::infinity();  // P: the most a pot-less round costs
  if (rho > 0) bound = -std::log(rho);
  if (count_cap > 0) bound = std::min(bound, count_cap);
  if (!std::isfinite(bound)) {
    return absl::InvalidArgumentError(
        "intent cap: a pot-less round's cost is unbounded (rho = 0 and no count cap)");
  }
  if (!(bound < log_a / 2)) {
    return absl::InvalidArgumentError("intent cap: a pot-less round may cost log A / 2 or more");
  }
  return log_a / 2 + bound + 1e-6;
}

}  // namespace bulwark::honeypot
