// SubsetSampler: the random ablation of SMSR Component 2. Each run answers from k of the m
// over-fetched candidates, drawn uniformly without replacement (every k-subset equally likely),
// independently across runs, from a SeededCsprng. Uniformity is what the certificate assumes.
#pragma once

#include <absl/status/statusor.h>

#include <vector>

#include "core/seeded_csprng.h"

namespace bulwark {

class SubsetSampler {
 public:
  explicit SubsetSampler(SeededCsprng* rng) : rng_(rng) {}

  // One uniform k-subset of {0, .., m-1}, ascending (partial Fisher-Yates). InvalidArgument
  // unless 1 <= k <= m.
  [[nodiscard]] absl::StatusOr<std::vector<int>> Draw(int m, int k);
  // `nruns` independent draws.
  [[nodiscard]] absl::StatusOr<std::vector<std::vector<int>>> DrawRuns(int m, int k, int nruns);

 private:
  SeededCsprng* rng_;  // not owned
};

}  // namespace bulwark
