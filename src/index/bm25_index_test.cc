// Bm25Index against hand-computed BM25 scores, its ordering and tie rule, and its refusals.
#include "index/bm25_index.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "testing/status_matchers.h"

namespace bulwark {
namespace {

using ::bulwark::testing::IsOk;
using ::bulwark::testing::StatusIs;
using Tokens = std::vector<std::string>;

TEST(Bm25Index, MatchesHandComputedScores) {
  Bm25Index index({.k1 = 1.2, .b = 0.75});
  ASSERT_THAT(index.Add(10, Tokens{"cat", "eats", "fish"}), IsOk());
  ASSERT_THAT(index.Add(20, Tokens{"dog", "eats", "meat", "meat"}), IsOk());
  ASSERT_THAT(index.Add(30, Tokens{"cat", "cat"}), IsOk());
  // N = 3, avgdl = 9 / 3 = 3. "cat": df 2, idf = ln(1 + 1.5 / 2.5) = ln 1.6.
  const double idf = std::log(1.6);
  const double k1 = 1.2, b = 0.75;
  auto term = [&](double tf, double len) { return idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / 3)); };
  const std::vector<Bm25Hit> hits = index.Search(Tokens{"cat"}, 10);
  ASSERT_EQ(hits.size(), 2u);
  EXPECT_EQ(hits[0].id, 30);  // tf 2 in a short document beats tf 1 in a longer one
  EXPECT_NEAR(hits[0].score, term(2, 2), 1e-12);
  EXPECT_EQ(hits[1].id, 10);
  EXPECT_NEAR(hits[1].score, term(1, 3), 1e-12);
}

TEST(Bm25Index, RareTermsWeighMoreAndRepeatsInTheQueryCountOnce) {
  Bm25Index index;
  ASSERT_THAT(index.Add(1, Tokens{"passport", "expires", "june"}), IsOk());
  ASSERT_THAT(index.Add(2, Tokens{"license", "expires", "june"}), IsOk());
  ASSERT_THAT(index.Add(3, Tokens{"insurance", "expires", "may"}), IsOk());
  const auto hits = index.Search(Tokens{"passport", "expires", "expires"}, 3);
  ASSERT_EQ(hits.size(), 3u);
  EXPECT_EQ(hits[0].id, 1);
  EXPECT_GT(hits[0].score, hits[1].score);
  EXPECT_DOUBLE_EQ(hits[1].score, hits[2].score);  // both match "expires" only, same length
  EXPECT_EQ(hits[1].id, 2);                        // ties in insertion order
  EXPECT_EQ(hits[2].id, 3);
  EXPECT_DOUBLE_EQ(index.Search(Tokens{"passport", "expires"}, 1)[0].score, hits[0].score);
}

TEST(Bm25Index, KAndNoMatch) {
  Bm25Index index;
  EXPECT_TRUE(index.Search(Tokens{"x"}, 5).empty());  // empty index
  ASSERT_THAT(index.Add(1, Tokens{"a", "b"}), IsOk());
  ASSERT_THAT(index.Add(2, Tokens{}), IsOk());
  EXPECT_EQ(index.size(), 2u);
  EXPECT_TRUE(index.Search(Tokens{"zzz"}, 5).empty());
  EXPECT_TRUE(index.Search(Tokens{"a"}, 0).empty());
  EXPECT_EQ(index.Search(Tokens{"a"}, 5).size(), 1u);  // the empty document never matches
}

TEST(Bm25Index, RefusesADuplicateIdAndChangesNothing) {
  Bm25Index index;
  ASSERT_THAT(index.Add(7, Tokens{"a"}), IsOk());
  EXPECT_THAT(index.Add(7, Tokens{"b"}), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(index.size(), 1u);
  EXPECT_TRUE(index.Search(Tokens{"b"}, 5).empty());
}

}  // namespace
}  // namespace bulwark
