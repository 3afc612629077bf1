// Reciprocal-rank fusion on hand-computed rankings.
#include "eval/experiments/rank_fusion.h"

#include <gtest/gtest.h>

#include <vector>

namespace bulwark::eval {
namespace {

TEST(ReciprocalRankFusion, SumsReciprocalRanks) {
  // k = 60. a: 1/61 + 1/63; b: 1/62 + 1/61; c: 1/63; d: 1/62.  b > a > d > c.
  const std::vector<std::vector<int64_t>> rankings = {{1, 2, 3}, {2, 4, 1}};  // a=1 b=2 c=3 d=4
  EXPECT_EQ(ReciprocalRankFusion(rankings, 60, -1), (std::vector<int64_t>{2, 1, 4, 3}));
  EXPECT_EQ(ReciprocalRankFusion(rankings, 60, 2), (std::vector<int64_t>{2, 1}));
}

TEST(ReciprocalRankFusion, AgreementBeatsOneFirstPlace) {
  // 7 is first in one list only (1/1); 8 is second in both (1/2 + 1/2): a tie at k = 0, kept in
  // first-appearance order; with k = 60, 8 wins (2/62 > 1/61).
  const std::vector<std::vector<int64_t>> rankings = {{7, 8}, {9, 8}};
  EXPECT_EQ(ReciprocalRankFusion(rankings, 0, -1), (std::vector<int64_t>{7, 8, 9}));
  EXPECT_EQ(ReciprocalRankFusion(rankings, 60, -1)[0], 8);
}

TEST(ReciprocalRankFusion, EmptyInputs) {
  EXPECT_TRUE(ReciprocalRankFusion({}, 60, 10).empty());
  const std::vector<std::vector<int64_t>> one = {{5}};
  EXPECT_TRUE(ReciprocalRankFusion(one, 60, 0).empty());
}

}  // namespace
}  // namespace bulwark::eval
