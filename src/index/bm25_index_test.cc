// Bm25Index against hand-computed BM25 scores, its ordering and tie rule, and its refusals.
#include "index/bm25_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <span>
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
  EXPECT_EQ(hits[1].id, 2);                        // ties to the lower id
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

TEST(Bm25Index, RemoveDropsEveryPostingAndTheStatistics) {
  Bm25Index index;
  ASSERT_THAT(index.Add(1, Tokens{"passport", "expires", "june"}), IsOk());
  ASSERT_THAT(index.Add(2, Tokens{"license", "expires", "june"}), IsOk());
  const size_t terms_before = index.term_count();
  ASSERT_THAT(index.Add(3, Tokens{"latex", "allergy", "expires"}), IsOk());
  EXPECT_EQ(index.term_count(), terms_before + 2);
  ASSERT_THAT(index.Remove(3), IsOk());
  EXPECT_FALSE(index.Contains(3));
  EXPECT_EQ(index.size(), 2u);
  EXPECT_EQ(index.term_count(), terms_before);  // "latex" and "allergy" are gone from memory
  EXPECT_TRUE(index.Search(Tokens{"latex"}, 5).empty());
  EXPECT_THAT(index.Remove(3), StatusIs(absl::StatusCode::kNotFound));

  // Scores equal those of an index that never held document 3.
  Bm25Index fresh;
  ASSERT_THAT(fresh.Add(1, Tokens{"passport", "expires", "june"}), IsOk());
  ASSERT_THAT(fresh.Add(2, Tokens{"license", "expires", "june"}), IsOk());
  const auto a = index.Search(Tokens{"passport", "june"}, 5);
  const auto b = fresh.Search(Tokens{"passport", "june"}, 5);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].id, b[i].id);
    EXPECT_DOUBLE_EQ(a[i].score, b[i].score);
  }
  // A freed slot is reused; the new document is found under its own id.
  ASSERT_THAT(index.Add(7, Tokens{"ferritin"}), IsOk());
  ASSERT_EQ(index.Search(Tokens{"ferritin"}, 5).size(), 1u);
  EXPECT_EQ(index.Search(Tokens{"ferritin"}, 5)[0].id, 7);
  EXPECT_THAT(index.Add(-1, Tokens{"x"}), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(Bm25Index, TermsFreedByARemoveAreReusedAndShrinkingKeepsScores) {
  Bm25Index index;
  ASSERT_THAT(index.Add(1, Tokens{"alpha", "beta"}), IsOk());
  ASSERT_THAT(index.Add(2, Tokens{"beta", "gamma", "gamma"}), IsOk());
  ASSERT_THAT(index.Remove(1), IsOk());
  EXPECT_EQ(index.term_count(), 2u) << "alpha is gone";
  ASSERT_THAT(index.Add(3, Tokens{"delta", "beta"}), IsOk());  // may take alpha's freed term id
  EXPECT_EQ(index.term_count(), 3u);
  EXPECT_TRUE(index.Search(Tokens{"alpha"}, 10).empty());
  const std::vector<Bm25Hit> before = index.Search(Tokens{"delta", "gamma", "beta"}, 10);
  ASSERT_EQ(before.size(), 2u);
  index.ShrinkToFit();
  const std::vector<Bm25Hit> after = index.Search(Tokens{"delta", "gamma", "beta"}, 10);
  ASSERT_EQ(after.size(), 2u);
  for (size_t i = 0; i < after.size(); ++i) {
    EXPECT_EQ(after[i].id, before[i].id);
    EXPECT_DOUBLE_EQ(after[i].score, before[i].score);
  }
  EXPECT_EQ(index.Search(Tokens{"delta"}, 10).front().id, 3);
}

TEST(Bm25Index, AcceptFiltersBeforeTheTopK) {
  Bm25Index index;
  for (int64_t id = 1; id <= 6; ++id) ASSERT_THAT(index.Add(id, Tokens{"dentist", "appointment"}), IsOk());
  const auto even = [](const void*, int64_t id) { return id % 2 == 0; };
  const auto hits = index.Search(Tokens{"dentist"}, 2, even);
  ASSERT_EQ(hits.size(), 2u);
  EXPECT_EQ(hits[0].id, 2);  // equal scores: lower id first, odd ids never
  EXPECT_EQ(hits[1].id, 4);
}

TEST(Bm25Index, ScoreDocumentEqualsTheScoreOfAnAddedDocumentWithoutChangingOthers) {
  Bm25Index index;
  ASSERT_THAT(index.Add(1, Tokens{"passport", "expires", "june"}), IsOk());
  ASSERT_THAT(index.Add(2, Tokens{"license", "expires", "june"}), IsOk());
  const Tokens query{"passport", "june"};
  const auto before = index.Search(query, 5);
  const double outside = index.ScoreDocument(Tokens{"passport", "renewal"}, query);
  EXPECT_GT(outside, 0);
  EXPECT_EQ(index.ScoreDocument(Tokens{"renewal"}, query), 0);
  const auto after = index.Search(query, 5);
  ASSERT_EQ(after.size(), before.size());
  for (size_t i = 0; i < after.size(); ++i) EXPECT_DOUBLE_EQ(after[i].score, before[i].score);
  // Scored with the index's statistics: a rarer term weighs more than a common one.
  EXPECT_GT(index.ScoreDocument(Tokens{"passport"}, Tokens{"passport"}),
            index.ScoreDocument(Tokens{"june"}, Tokens{"june"}));
}

TEST(Bm25Index, SearchWithStatisticsOfScoresLikeScoreDocument) {
  Bm25Index memories;
  ASSERT_THAT(memories.Add(1, Tokens{"passport", "expires", "june"}), IsOk());
  ASSERT_THAT(memories.Add(2, Tokens{"license", "expires", "june", "june"}), IsOk());
  ASSERT_THAT(memories.Add(3, Tokens{"dentist", "monday"}), IsOk());
  const std::vector<Tokens> pot_docs = {{"passport", "renewal", "passport"},
                                        {"june", "orchard", "lantern", "june", "expires"},
                                        {"orchard"},
                                        {"amber", "license"},
                                        {"june"}};
  Bm25Index pots;
  for (size_t i = 0; i < pot_docs.size(); ++i) ASSERT_THAT(pots.Add(10 + i, pot_docs[i]), IsOk());
  ASSERT_THAT(pots.Remove(14), IsOk());  // a removed pot is never ranked
  const Tokens query{"june", "passport", "orchard", "june", "license"};
  const std::vector<double> weights{1, 0.5, 2, 1, 0};
  for (const bool weighted : {false, true}) {
    const std::span<const double> w = weighted ? std::span<const double>(weights) : std::span<const double>();
    const auto hits = pots.SearchWithStatisticsOf(memories, query, 10, w);
    std::vector<Bm25Hit> expected;
    for (size_t i = 0; i + 1 < pot_docs.size(); ++i) {
      const double score = memories.ScoreDocument(pot_docs[i], query, w);
      if (score > 0) expected.push_back({static_cast<int64_t>(10 + i), score});
    }
    std::sort(expected.begin(), expected.end(), [](const Bm25Hit& a, const Bm25Hit& b) {
      return a.score != b.score ? a.score > b.score : a.id < b.id;
    });
    ASSERT_EQ(hits.size(), expected.size()) << "weighted " << weighted;
    for (size_t i = 0; i < hits.size(); ++i) {
      EXPECT_EQ(hits[i].id, expected[i].id);
      EXPECT_EQ(hits[i].score, expected[i].score);  // the same arithmetic, bit for bit
    }
    // "license" has weight 0 when weighted: pot 13 then matches nothing.
    EXPECT_EQ(std::count_if(hits.begin(), hits.end(), [](const Bm25Hit& h) { return h.id == 13; }),
              weighted ? 0 : 1);
  }
  EXPECT_EQ(pots.SearchWithStatisticsOf(memories, query, 2).size(), 2u);
  EXPECT_TRUE(pots.SearchWithStatisticsOf(memories, Tokens{"monday"}, 5).empty());
  // Against an empty index of memories (N = 0): still the ScoreDocument scores.
  const Bm25Index none;
  const auto alone = pots.SearchWithStatisticsOf(none, Tokens{"orchard"}, 5);
  ASSERT_EQ(alone.size(), 2u);
  EXPECT_EQ(alone[0].score, none.ScoreDocument(pot_docs[alone[0].id - 10], Tokens{"orchard"}));
}

TEST(Bm25Index, QueryWeightsScaleEachTermsContribution) {
  Bm25Index index;
  ASSERT_THAT(index.Add(1, Tokens{"passport", "expires", "june"}), IsOk());
  ASSERT_THAT(index.Add(2, Tokens{"license", "renewal", "june"}), IsOk());
  ASSERT_THAT(index.Add(3, Tokens{"insurance", "~n1", "may"}), IsOk());
  const Tokens query{"passport", "~n1"};
  const double passport = index.Search(Tokens{"passport"}, 1)[0].score;
  const double synset_score = index.Search(Tokens{"~n1"}, 1)[0].score;
  // Unweighted and all-ones weights agree; a weight multiplies its term's contribution.
  const auto plain = index.Search(query, 5);
  const auto ones = index.Search(query, 5, nullptr, nullptr, std::vector<double>{1, 1});
  ASSERT_EQ(plain.size(), 2u);
  ASSERT_EQ(ones.size(), 2u);
  EXPECT_DOUBLE_EQ(plain[0].score, ones[0].score);
  const auto weighted = index.Search(query, 5, nullptr, nullptr, std::vector<double>{1, 0.25});
  ASSERT_EQ(weighted.size(), 2u);
  EXPECT_EQ(weighted[0].id, 1);
  EXPECT_DOUBLE_EQ(weighted[0].score, passport);
  EXPECT_EQ(weighted[1].id, 3);
  EXPECT_DOUBLE_EQ(weighted[1].score, 0.25 * synset_score);
  // A zero weight matches nothing; a repeated token keeps its first weight; ScoreDocument agrees.
  EXPECT_EQ(index.Search(query, 5, nullptr, nullptr, std::vector<double>{1, 0}).size(), 1u);
  EXPECT_DOUBLE_EQ(
      index.Search(Tokens{"~n1", "~n1"}, 1, nullptr, nullptr, std::vector<double>{0.5, 1})[0].score,
      0.5 * synset_score);
  EXPECT_DOUBLE_EQ(
      index.ScoreDocument(Tokens{"insurance", "~n1", "may"}, query, std::vector<double>{1, 0.25}),
      weighted[1].score);
}

}  // namespace
}  // namespace bulwark
