// Reciprocal-rank fusion (see rank_fusion.h).
#include "eval/experiments/rank_fusion.h"

#include <absl/container/flat_hash_map.h>

#include <algorithm>

namespace bulwark::eval {

std::vector<int64_t> ReciprocalRankFusion(std::span<const std::vector<int64_t>> rankings, double k,
                                          int depth) {
  k = std::max(0.0, k);
  absl::flat_hash_map<int64_t, size_t> slot;  // item -> position in items/scores (first appearance)
  std::vector<int64_t> items;
  std::vector<double> scores;
  for (const std::vector<int64_t>& ranking : rankings) {
    for (size_t r = 0; r < ranking.size(); ++r) {
      const auto [it, added] = slot.try_emplace(ranking[r], items.size());
      if (added) {
        items.push_back(ranking[r]);
        scores.push_back(0);
      }
      scores[it->second] += 1.0 / (k + static_cast<double>(r + 1));
    }
  }
  std::vector<size_t> order(items.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] > scores[b]; });
  const size_t keep = depth < 0 ? order.size() : std::min(order.size(), static_cast<size_t>(depth));
  std::vector<int64_t> fused;
  fused.reserve(keep);
  for (size_t i = 0; i < keep; ++i) fused.push_back(items[order[i]]);
  return fused;
}

}  // namespace bulwark::eval
