// Bm25Index against hand-computed BM25 scores, its ordering and tie rule, and its refusals.
#include "index/bm25_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <random>
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
  // A long query (past the short-query path) counts repeats once too.
  Tokens long_query(18, "expires");
  long_query.push_back("passport");
  long_query.push_back("nothing");
  const auto long_hits = index.Search(long_query, 3);
  ASSERT_EQ(long_hits.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(long_hits[i].id, hits[i].id);
    EXPECT_DOUBLE_EQ(long_hits[i].score, hits[i].score);
  }
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

// A floor keeps exactly the unfloored ranking's documents scoring at least it (equal scores too),
// whatever it prunes on the way.
TEST(Bm25Index, SearchWithStatisticsOfKeepsWhatReachesTheFloor) {
  Bm25Index memories;
  for (int i = 0; i < 40; ++i) {
    ASSERT_THAT(memories.Add(i, Tokens{"note", i % 2 ? "june" : "passport", i % 5 ? "expires" : "orchard"}),
                IsOk());
  }
  Bm25Index pots;
  const std::vector<std::string> words = {"june", "passport", "orchard", "lantern", "expires", "amber"};
  for (int i = 0; i < 60; ++i) {
    Tokens doc;
    for (int j = 0; j <= i % 4; ++j) doc.push_back(words[(i * 7 + j * 3) % words.size()]);
    ASSERT_THAT(pots.Add(100 + i, doc), IsOk());
  }
  const Tokens query{"june", "orchard", "lantern", "passport"};
  const std::vector<Bm25Hit> all = pots.SearchWithStatisticsOf(memories, query, 60);
  ASSERT_GT(all.size(), 8u);
  for (const int k : {1, 4, 60}) {
    for (const size_t at : {size_t{0}, size_t{3}, all.size() / 2, all.size() - 1}) {
      const double floor = all[at].score;
      std::vector<Bm25Hit> want;
      for (const Bm25Hit& h : all) {
        if (h.score >= floor && want.size() < static_cast<size_t>(k)) want.push_back(h);
      }
      const std::vector<Bm25Hit> got = pots.SearchWithStatisticsOf(memories, query, k, {}, floor);
      ASSERT_EQ(got.size(), want.size()) << "k " << k << " floor " << floor;
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].id, want[i].id);
        EXPECT_EQ(got[i].score, want[i].score);
      }
    }
  }
  EXPECT_TRUE(pots.SearchWithStatisticsOf(memories, query, 4, {}, all.front().score * 2).empty());
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

// The reference: every live document scored by ScoreDocument (no postings read at all), filtered,
// best first, equal scores to the lower id.
std::vector<Bm25Hit> Reference(const Bm25Index& statistics, const std::map<int64_t, Tokens>& docs,
                               const Tokens& query, int k, std::span<const double> weights,
                               const std::function<bool(int64_t)>& accept) {
  std::vector<Bm25Hit> all;
  for (const auto& [id, tokens] : docs) {
    if (accept && !accept(id)) continue;
    const double score = statistics.ScoreDocument(tokens, query, weights);
    if (score > 0) all.push_back({id, score});
  }
  std::sort(all.begin(), all.end(), [](const Bm25Hit& a, const Bm25Hit& b) {
    return a.score != b.score ? a.score > b.score : a.id < b.id;
  });
  if (all.size() > static_cast<size_t>(std::max(k, 0))) all.resize(static_cast<size_t>(std::max(k, 0)));
  return all;
}

void ExpectSameHits(const std::vector<Bm25Hit>& got, const std::vector<Bm25Hit>& want,
                    const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].id, want[i].id) << what << " rank " << i;
    EXPECT_EQ(got[i].score, want[i].score) << what << " rank " << i;  // bit for bit
  }
}

// A random corpus with a skewed vocabulary (a few words in most documents, as "i" and "my" are in
// the store), exact duplicates (equal scores), removals and re-adds into freed slots.
struct RandomCorpus {
  explicit RandomCorpus(uint32_t seed) : rng(seed) {
    vocabulary = std::uniform_int_distribution<int>(3, 120)(rng);
    const int documents = std::uniform_int_distribution<int>(1, 400)(rng);
    for (int64_t id = 1; id <= documents; ++id) {
      Tokens tokens = rng() % 10 == 0 && !docs.empty() ? docs.begin()->second : RandomTokens(20);
      docs[id * 3] = tokens;
    }
  }
  std::string Word() {
    const int w =
        static_cast<int>(std::pow(std::uniform_real_distribution<double>(0, 1)(rng), 3) * vocabulary);
    return "w" + std::to_string(w);
  }
  Tokens RandomTokens(int max_length) {
    Tokens tokens(std::uniform_int_distribution<int>(0, max_length)(rng));
    for (std::string& t : tokens) t = Word();
    return tokens;
  }
  std::mt19937 rng;
  int vocabulary = 0;
  std::map<int64_t, Tokens> docs;
};

TEST(Bm25Index, PrunedTopKEqualsExhaustiveScoringOnRandomCorpora) {
  int pruned_queries = 0;
  for (uint32_t seed = 1; seed <= 60; ++seed) {
    RandomCorpus corpus(seed);
    Bm25Index index({.k1 = seed % 3 == 0 ? 0.5 : 1.2, .b = seed % 4 == 0 ? 0.0 : 0.75});
    for (const auto& [id, tokens] : corpus.docs) ASSERT_THAT(index.Add(id, tokens), IsOk());
    // Remove a third, then add some again (new tokens): they take freed slots.
    for (auto it = corpus.docs.begin(); it != corpus.docs.end();) {
      if (corpus.rng() % 3 != 0) {
        ++it;
        continue;
      }
      ASSERT_THAT(index.Remove(it->first), IsOk());
      it = corpus.docs.erase(it);
    }
    for (int64_t id = 2; id < 200; id += 3) {
      if (corpus.rng() % 2 == 0) continue;
      corpus.docs[id] = corpus.RandomTokens(20);
      ASSERT_THAT(index.Add(id, corpus.docs[id]), IsOk());
    }
    for (int q = 0; q < 25; ++q) {
      Tokens query = corpus.RandomTokens(9);
      if (q % 5 == 0) query.push_back("absent");
      std::vector<double> weights;
      if (q % 2 == 1) {
        for (size_t i = 0; i < query.size(); ++i) weights.push_back((corpus.rng() % 5) * 0.5);  // zeros too
      }
      const int k = std::uniform_int_distribution<int>(1, 40)(corpus.rng);
      const int64_t modulus = 2 + q % 3;
      const std::function<bool(int64_t)> filter = [&](int64_t id) { return id % modulus != 0; };
      const bool filtered = q % 3 == 0;
      const Bm25Index::Accept accept = [](const void* c, int64_t id) {
        return (*static_cast<const std::function<bool(int64_t)>*>(c))(id);
      };
      const std::string what = "seed " + std::to_string(seed) + " query " + std::to_string(q);
      const auto want = Reference(index, corpus.docs, query, k, weights, filtered ? filter : nullptr);
      ExpectSameHits(index.Search(query, k, filtered ? accept : nullptr, &filter, weights), want, what);
      ExpectSameHits(index.SearchExhaustive(query, k, filtered ? accept : nullptr, &filter, weights), want,
                     what + " exhaustive");
      const size_t exhaustive_reads = Bm25Index::PostingsReadByLastSearch();
      index.Search(query, k, filtered ? accept : nullptr, &filter, weights);
      pruned_queries += Bm25Index::PostingsReadByLastSearch() < exhaustive_reads;
    }
  }
  EXPECT_GT(pruned_queries, 100) << "pruning skipped postings in too few queries to test it";
}

TEST(Bm25Index, PrunedSearchWithStatisticsOfEqualsScoreDocument) {
  for (uint32_t seed = 100; seed < 120; ++seed) {
    RandomCorpus memories(seed), pots(seed + 1000);
    Bm25Index memory_index, pot_index;
    for (const auto& [id, tokens] : memories.docs) ASSERT_THAT(memory_index.Add(id, tokens), IsOk());
    for (const auto& [id, tokens] : pots.docs) ASSERT_THAT(pot_index.Add(id, tokens), IsOk());
    for (int q = 0; q < 10; ++q) {
      const Tokens query = memories.RandomTokens(8);
      const int k = 1 + q * 3;
      ExpectSameHits(pot_index.SearchWithStatisticsOf(memory_index, query, k),
                     Reference(memory_index, pots.docs, query, k, {}, nullptr),
                     "seed " + std::to_string(seed) + " query " + std::to_string(q));
    }
  }
}

TEST(Bm25Index, ACommonWordStillCountsInThePrunedTopKScores) {
  // 2,000 documents hold "i"; 3 hold "marathon". Top 2 of {"marathon", "i"}: the two marathon
  // documents that also hold "i" (their exact scores include its small contribution).
  Bm25Index index;
  for (int64_t id = 0; id < 2000; ++id) {
    Tokens tokens{"i", "w" + std::to_string(id)};
    if (id == 5 || id == 900) tokens.push_back("marathon");
    ASSERT_THAT(index.Add(id, tokens), IsOk());
  }
  ASSERT_THAT(index.Add(5000, Tokens{"marathon", "x", "y"}), IsOk());
  const Tokens query{"i", "marathon"};
  const auto hits = index.Search(query, 2);
  // Only "marathon"'s 3 postings were accumulated: with the top 2 found, "i" (bound far below
  // their scores) could lift no other document.
  EXPECT_EQ(Bm25Index::PostingsReadByLastSearch(), 3u);
  ASSERT_EQ(hits.size(), 2u);
  EXPECT_EQ(hits[0].id, 5);
  EXPECT_EQ(hits[1].id, 900);
  EXPECT_EQ(hits[0].score, index.ScoreDocument(Tokens{"i", "w5", "marathon"}, query));
  ASSERT_EQ(index.SearchExhaustive(query, 2).size(), 2u);
  EXPECT_EQ(Bm25Index::PostingsReadByLastSearch(), 2003u);
  EXPECT_GT(hits[0].score, index.ScoreDocument(Tokens{"marathon", "x", "y"}, query));
}

}  // namespace
}  // namespace bulwark
