// Uniform k-subsets by partial Fisher-Yates (see subset_sampler.h).
#include "smoothing/subset_sampler.h"

#include <algorithm>
#include <numeric>

#include "core/status_macros.h"

namespace bulwark {

absl::StatusOr<std::vector<int>> SubsetSampler::Draw(int m, int k) {
  if (k < 1 || k > m) return absl::InvalidArgumentError("a subset needs 1 <= k <= m");
  std::vector<int> items(m);
  std::iota(items.begin(), items.end(), 0);
  // After step i, items[0..i] is a uniform random (i+1)-permutation prefix of the m items.
  for (int i = 0; i < k; ++i) {
    const int j = i + static_cast<int>(rng_->Uniform(static_cast<uint64_t>(m - i)));
    std::swap(items[i], items[j]);
  }
  items.resize(k);
  std::sort(items.begin(), items.end());
  return items;
}

absl::StatusOr<std::vector<std::vector<int>>> SubsetSampler::DrawRuns(int m, int k, int nruns) {
  if (nruns < 1) return absl::InvalidArgumentError("nruns must be at least 1");
  std::vector<std::vector<int>> runs;
  runs.reserve(nruns);
  for (int r = 0; r < nruns; ++r) {
    BULWARK_ASSIGN_OR_RETURN(auto subset, Draw(m, k));
    runs.push_back(std::move(subset));
  }
  return runs;
}

}  // namespace bulwark
