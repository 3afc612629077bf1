// The Mann-Whitney AUROC of pot_math.h.
#include "honeypot/pot_math.h"

#include <algorithm>
#include <utility>

namespace bulwark::honeypot {

double Auroc(std::span<const double> positives, std::span<const double> negatives) {
  if (positives.empty() || negatives.empty()) return 0.5;
  std::vector<std::pair<double, int>> all;
  all.reserve(positives.size() + negatives.size());
  for (double p : positives) all.emplace_back(p, 1);
  for (double n : negatives) all.emplace_back(n, 0);
  std::sort(all.begin(), all.end());
  // Sum of the positives' mid-ranks (1-based), ties sharing their average rank.
  double rank_sum = 0;
  for (size_t i = 0; i < all.size();) {
    size_t j = i;
    while (j < all.size() && all[j].first == all[i].first) ++j;
    const double mid_rank = 0.5 * static_cast<double>(i + 1 + j);
    for (size_t t = i; t < j; ++t) rank_sum += all[t].second * mid_rank;
    i = j;
  }
  const double np = static_cast<double>(positives.size());
  const double nn = static_cast<double>(negatives.size());
  return (rank_sum - np * (np + 1) / 2) / (np * nn);
}

}  // namespace bulwark::honeypot
