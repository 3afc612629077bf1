// Balanced k-means: partitions the memory embeddings of a namespace into P clusters of equal size
// (as equal as P allows), one honeypot per cluster. MemPot Sec. 4.4 / App. B.1 ("balanced k-means
// clustering to partition the corpus into equal-sized sets"); the paper gives no algorithm, so we
// use (research/mempot.md Sec. 2.2):
//   1. k-means++ seeding (D^2 sampling) from the project's seeded CSPRNG;
//   2. a greedy capacity-constrained assignment: points in order of decreasing regret (distance to
//      the second-nearest centroid minus distance to the nearest; ties by index) each take the
//      nearest centroid that still has room. Exactly N mod P clusters may hold ceil(N/P) points,
//      all others floor(N/P), so every cluster is non-empty whenever N >= P;
//   3. centroid = mean of its points; repeat 2-3 for `iterations` rounds or until no point moves.
// Distances are squared Euclidean. Deterministic for a seed on every machine that computes the
// same floats (Eigen, no threads).
#pragma once

#include <absl/status/statusor.h>

#include <cstdint>
#include <vector>

#include "honeypot/pot_math.h"

namespace bulwark::honeypot {

struct BalancedKMeansOptions {
  int clusters = 1;     // P, 1 .. number of points
  int iterations = 20;  // assignment/update rounds, 1 .. 1000
  uint64_t seed = 0;
};

struct BalancedKMeansResult {
  RowMatrixXf centroids;        // P x d, the mean of each cluster's points (not normalised)
  std::vector<int> assignment;  // point i -> cluster in [0, P)
  std::vector<int> sizes;       // points per cluster; each floor(N/P) or ceil(N/P)
  int iterations_run = 0;       // rounds until convergence or `iterations`
  double inertia = 0;           // sum of squared distances of points to their centroids
};

// Clusters the rows of `points` (N x d). Errors: InvalidArgument if there are no points, d = 0,
// clusters is outside [1, N], iterations outside [1, 1000], or a value is not finite.
[[nodiscard]] absl::StatusOr<BalancedKMeansResult> BalancedKMeans(const RowMatrixXf& points,
                                                                  const BalancedKMeansOptions& options);

}  // namespace bulwark::honeypot
