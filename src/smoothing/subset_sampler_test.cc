// SubsetSampler: every k-subset equally likely (chi-square over all C(m,k) subsets of a small m),
// proper subsets, determinism from the seed.
#include "smoothing/subset_sampler.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "testing/status_matchers.h"

namespace bulwark {
namespace {

using ::bulwark::testing::IsOk;

TEST(SubsetSamplerTest, EveryKSubsetIsEquallyLikely) {
  // m = 6, k = 3: C(6,3) = 20 subsets, 40,000 draws, 2,000 expected per subset. The chi-square
  // statistic has 19 degrees of freedom; P[chi2_19 > 43.82] = 0.001. The seed is fixed, so this
  // test is deterministic; it fails only if the sampler is biased.
  SeededCsprng::Seed seed{};
  seed[31] = 7;
  SeededCsprng rng(seed);
  SubsetSampler sampler(&rng);
  std::map<std::vector<int>, int> counts;
  constexpr int kDraws = 40000;
  for (int i = 0; i < kDraws; ++i) {
    auto s = sampler.Draw(6, 3);
    ASSERT_THAT(s, IsOk());
    ++counts[*s];
  }
  ASSERT_EQ(counts.size(), 20u);
  const double expected = kDraws / 20.0;
  double chi2 = 0;
  for (const auto& [subset, n] : counts) chi2 += (n - expected) * (n - expected) / expected;
  EXPECT_LT(chi2, 43.82);

  // Positions are uniform too: each item is in a subset with probability k/m = 1/2.
  std::vector<int> item_counts(6, 0);
  for (const auto& [subset, n] : counts) {
    for (int item : subset) item_counts[item] += n;
  }
  for (int c : item_counts) EXPECT_NEAR(c / double(kDraws), 0.5, 0.02);
}

TEST(SubsetSamplerTest, SubsetsAreDistinctSortedAndInRange) {
  SeededCsprng rng(SeededCsprng::Seed{});
  SubsetSampler sampler(&rng);
  auto runs = sampler.DrawRuns(20, 5, 100);
  ASSERT_THAT(runs, IsOk());
  ASSERT_EQ(runs->size(), 100u);
  for (const auto& subset : *runs) {
    ASSERT_EQ(subset.size(), 5u);
    EXPECT_TRUE(std::is_sorted(subset.begin(), subset.end()));
    EXPECT_EQ(std::set<int>(subset.begin(), subset.end()).size(), 5u);
    EXPECT_GE(subset.front(), 0);
    EXPECT_LT(subset.back(), 20);
  }
  auto all = sampler.Draw(4, 4);
  ASSERT_THAT(all, IsOk());
  EXPECT_EQ(*all, (std::vector<int>{0, 1, 2, 3}));
}

TEST(SubsetSamplerTest, SameSeedSameRuns) {
  SeededCsprng::Seed seed{};
  seed[3] = 1;
  SeededCsprng a(seed), b(seed);
  EXPECT_EQ(*SubsetSampler(&a).DrawRuns(50, 5, 10), *SubsetSampler(&b).DrawRuns(50, 5, 10));
}

TEST(SubsetSamplerTest, RejectsBadSizes) {
  SeededCsprng rng(SeededCsprng::Seed{});
  SubsetSampler sampler(&rng);
  EXPECT_FALSE(sampler.Draw(3, 4).ok());
  EXPECT_FALSE(sampler.Draw(3, 0).ok());
  EXPECT_FALSE(sampler.DrawRuns(3, 2, 0).ok());
}

}  // namespace
}  // namespace bulwark
