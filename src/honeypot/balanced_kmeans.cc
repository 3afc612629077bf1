// Balanced k-means (see balanced_kmeans.h).
#include "honeypot/balanced_kmeans.h"

#include <absl/status/status.h>
#include <absl/strings/str_cat.h>

#include <algorithm>
#include <limits>
#include <numeric>

namespace bulwark::honeypot {
namespace {

// Squared distances ||x_i - c_j||^2 for all i, j (N x P), via ||x||^2 - 2 x.c + ||c||^2.
Eigen::MatrixXf SquaredDistances(const RowMatrixXf& points, const RowMatrixXf& centroids) {
  Eigen::MatrixXf d = -2.0f * (points * centroids.transpose());
  d.colwise() += points.rowwise().squaredNorm();
  d.rowwise() += centroids.rowwise().squaredNorm().transpose();
  return d.cwiseMax(0.0f);
}

// k-means++ (Arthur & Vassilvitskii 2007): the first centre uniform, each next one drawn with
// probability proportional to the squared distance to the nearest centre chosen so far.
RowMatrixXf PlusPlusSeeds(const RowMatrixXf& points, int clusters, SeededCsprng& rng) {
  const Eigen::Index n = points.rows();
  RowMatrixXf centroids(clusters, points.cols());
  centroids.row(0) = points.row(static_cast<Eigen::Index>(rng.Uniform(static_cast<uint64_t>(n))));
  Eigen::VectorXd nearest = (points.rowwise() - centroids.row(0)).rowwise().squaredNorm().cast<double>();
  for (int c = 1; c < clusters; ++c) {
    const double total = nearest.sum();
    Eigen::Index pick = n - 1;
    if (total > 0) {
      const double target = UniformDouble(rng) * total;
      double acc = 0;
      for (Eigen::Index i = 0; i < n; ++i) {
        acc += nearest[i];
        if (acc > target) {
          pick = i;
          break;
        }
      }
    } else {
      pick = static_cast<Eigen::Index>(rng.Uniform(static_cast<uint64_t>(n)));  // all points coincide
    }
    centroids.row(c) = points.row(pick);
    nearest = nearest.cwiseMin((points.rowwise() - centroids.row(c)).rowwise().squaredNorm().cast<double>());
  }
  return centroids;
}

// Step 2 of the header: the greedy regret-ordered assignment under the floor/ceil capacities.
std::vector<int> AssignWithCapacity(const Eigen::MatrixXf& dist, int clusters) {
  const Eigen::Index n = dist.rows();
  std::vector<float> regret(static_cast<size_t>(n), 0.0f);
  for (Eigen::Index i = 0; i < n; ++i) {
    float best = std::numeric_limits<float>::infinity(), second = best;
    for (int c = 0; c < clusters; ++c) {
      const float v = dist(i, c);
      if (v < best) {
        second = best;
        best = v;
      } else if (v < second) {
        second = v;
      }
    }
    if (clusters > 1) regret[static_cast<size_t>(i)] = second - best;
  }
  std::vector<int> points(static_cast<size_t>(n));
  std::iota(points.begin(), points.end(), 0);
  std::stable_sort(points.begin(), points.end(), [&](int a, int b) { return regret[a] > regret[b]; });

  const int floor_size = static_cast<int>(n / clusters);
  int big_left = static_cast<int>(n % clusters);  // clusters that may still grow to floor + 1
  std::vector<int> size(static_cast<size_t>(clusters), 0);
  std::vector<int> assignment(static_cast<size_t>(n), -1);
  for (int i : points) {
    // The nearest centroid with room (first index on ties). One always has room: the capacities
    // add up to n exactly.
    int pick = -1;
    for (int c = 0; c < clusters; ++c) {
      const bool room = size[c] < floor_size || (size[c] == floor_size && big_left > 0);
      if (room && (pick < 0 || dist(i, c) < dist(i, pick))) pick = c;
    }
    if (size[pick] == floor_size) --big_left;  // `pick` becomes one of the big clusters
    ++size[pick];
    assignment[static_cast<size_t>(i)] = pick;
  }
  return assignment;
}

}  // namespace

absl::StatusOr<BalancedKMeansResult> BalancedKMeans(const RowMatrixXf& points,
                                                    const BalancedKMeansOptions& options) {
  const Eigen::Index n = points.rows();
  if (n == 0 || points.cols() == 0) return absl::InvalidArgumentError("balanced k-means: no points");
  if (options.clusters < 1 || options.clusters > n) {
    return absl::InvalidArgumentError(
        absl::StrCat("balanced k-means: clusters must be in [1, ", n, "], got ", options.clusters));
  }
  if (options.iterations < 1 || options.iterations > 1000) {
    return absl::InvalidArgumentError("balanced k-means: iterations must be in [1, 1000]");
  }
  if (!points.allFinite()) return absl::InvalidArgumentError("balanced k-means: a point is not finite");

  SeededCsprng rng(SeedFor(options.seed, SeedDomain::kKMeans));
  BalancedKMeansResult result;
  result.centroids = PlusPlusSeeds(points, options.clusters, rng);
  for (int it = 0; it < options.iterations; ++it) {
    std::vector<int> assignment =
        AssignWithCapacity(SquaredDistances(points, result.centroids), options.clusters);
    ++result.iterations_run;
    const bool moved = assignment != result.assignment;
    result.assignment = std::move(assignment);
    RowMatrixXf sums = RowMatrixXf::Zero(options.clusters, points.cols());
    result.sizes.assign(static_cast<size_t>(options.clusters), 0);
    for (Eigen::Index i = 0; i < n; ++i) {
      const int c = result.assignment[static_cast<size_t>(i)];
      sums.row(c) += points.row(i);
      ++result.sizes[static_cast<size_t>(c)];
    }
    for (int c = 0; c < options.clusters; ++c) result.centroids.row(c) = sums.row(c) / result.sizes[c];
    if (!moved) break;
  }
  double inertia = 0;
  for (Eigen::Index i = 0; i < n; ++i) {
    inertia +=
        (points.row(i) - result.centroids.row(result.assignment[static_cast<size_t>(i)])).squaredNorm();
  }
  result.inertia = inertia;
  return result;
}

}  // namespace bulwark::honeypot
