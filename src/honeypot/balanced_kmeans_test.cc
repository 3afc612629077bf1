#include "honeypot/balanced_kmeans.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "honeypot/test_fixtures.h"

namespace bulwark::honeypot {
namespace {

TEST(BalancedKMeansTest, SizesAreFloorOrCeilAndEveryPointIsAssigned) {
  const auto space = testing::MakeSyntheticSpace(16, 5, 103, 1, 1);
  for (int p : {1, 2, 7, 10, 103}) {
    auto r = BalancedKMeans(space.memories, {.clusters = p, .iterations = 10, .seed = 3});
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->assignment.size(), 103u);
    std::vector<int> counted(static_cast<size_t>(p), 0);
    for (int c : r->assignment) {
      ASSERT_GE(c, 0);
      ASSERT_LT(c, p);
      ++counted[static_cast<size_t>(c)];
    }
    EXPECT_EQ(counted, r->sizes);
    const int lo = 103 / p;
    EXPECT_EQ(std::count(counted.begin(), counted.end(), lo + 1), 103 % p) << "P = " << p;
    EXPECT_EQ(std::count(counted.begin(), counted.end(), lo), p - 103 % p) << "P = " << p;
  }
}

TEST(BalancedKMeansTest, RecoversSeparatedEqualClusters) {
  // 4 tight clusters of 25 points each: balanced k-means with P = 4 must put each in its own cluster.
  std::mt19937 rng(11);
  const RowMatrixXf centres = testing::RandomUnit(4, 32, rng);
  RowMatrixXf points(100, 32);
  for (int i = 0; i < 100; ++i) {
    points.row(i) = testing::NoisyAround(centres.middleRows(i / 25, 1), 1, 0.02f, rng);
  }
  auto r = BalancedKMeans(points, {.clusters = 4, .iterations = 20, .seed = 1});
  ASSERT_TRUE(r.ok()) << r.status();
  for (int t = 0; t < 4; ++t) {
    std::set<int> labels(r->assignment.begin() + 25 * t, r->assignment.begin() + 25 * (t + 1));
    EXPECT_EQ(labels.size(), 1u) << "topic " << t << " was split";
  }
  EXPECT_LT(r->inertia, 100 * 0.02 * 0.02 * 32 * 2);
}

TEST(BalancedKMeansTest, DeterministicForASeed) {
  const auto space = testing::MakeSyntheticSpace(24, 6, 300, 1, 1);
  auto a = BalancedKMeans(space.memories, {.clusters = 9, .seed = 42});
  auto b = BalancedKMeans(space.memories, {.clusters = 9, .seed = 42});
  auto c = BalancedKMeans(space.memories, {.clusters = 9, .seed = 43});
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(a->assignment, b->assignment);
  EXPECT_TRUE(a->centroids == b->centroids);
  EXPECT_FALSE(a->centroids == c->centroids);  // another seed starts elsewhere
}

TEST(BalancedKMeansTest, RejectsBadInput) {
  const auto space = testing::MakeSyntheticSpace(8, 2, 10, 1, 1);
  EXPECT_EQ(BalancedKMeans(space.memories, {.clusters = 0}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(BalancedKMeans(space.memories, {.clusters = 11}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(BalancedKMeans(space.memories, {.clusters = 2, .iterations = 0}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(BalancedKMeans(RowMatrixXf(0, 8), {.clusters = 1}).status().code(),
            absl::StatusCode::kInvalidArgument);
  RowMatrixXf bad = space.memories;
  bad(3, 2) = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(BalancedKMeans(bad, {.clusters = 2}).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace bulwark::honeypot
