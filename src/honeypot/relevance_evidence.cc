// Relevance evidence for the honeypot monitor (see relevance_evidence.h).
#include "honeypot/relevance_evidence.h"

#include <absl/status/status.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace bulwark::honeypot {

absl::StatusOr<RelevanceCalibration> RelevanceCalibration::Fit(std::span<const float> benign_best,
                                                               std::span<const float> attack_best,
                                                               double quantile, double cap) {
  if (benign_best.empty() || attack_best.empty()) {
    return absl::InvalidArgumentError("relevance calibration needs benign and attack queries");
  }
  if (!(quantile > 0 && quantile <= 0.5))
    return absl::InvalidArgumentError("relevance calibration: quantile must be in (0, 0.5]");
  if (!(cap > 0 && cap <= 20))
    return absl::InvalidArgumentError("relevance calibration: cap must be in (0, 20]");
  for (std::span<const float> side : {benign_best, attack_best}) {
    if (!std::all_of(side.begin(), side.end(), [](float s) { return std::isfinite(s); })) {
      return absl::InvalidArgumentError("relevance calibration: a score is not finite");
    }
  }
  std::vector<float> sorted(benign_best.begin(), benign_best.end());
  std::sort(sorted.begin(), sorted.end());
  const auto at = static_cast<size_t>(quantile * static_cast<double>(sorted.size() - 1));
  RelevanceCalibration cal;
  cal.threshold = sorted[at];
  cal.quantile = quantile;
  cal.benign_queries = benign_best.size();
  cal.attack_queries = attack_best.size();
  auto below = [&cal](std::span<const float> side) {
    return static_cast<double>(
        std::count_if(side.begin(), side.end(), [&cal](float s) { return s < cal.threshold; }));
  };
  cal.benign_rate = (below(benign_best) + 0.5) / (static_cast<double>(benign_best.size()) + 1);
  cal.attack_rate = (below(attack_best) + 0.5) / (static_cast<double>(attack_best.size()) + 1);
  cal.llr = std::clamp(std::log(cal.attack_rate / cal.benign_rate), 0.0, cap);
  return cal;
}

nlohmann::json RelevanceCalibration::ToJson() const {
  return {{"threshold", threshold},
          {"llr", llr},
          {"quantile", quantile},
          {"benign_rate", benign_rate},
          {"attack_rate", attack_rate},
          {"benign_queries", benign_queries},
          {"attack_queries", attack_queries}};
}

}  // namespace bulwark::honeypot
