// Hand-computed rankings for the retrieval metrics: recall@k as "any relevant in the top k",
// reciprocal rank, nDCG@k with binary gains over all relevant memories, and the summary's means.
#include "eval/retrieval_metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace bulwark::eval {
namespace {

TEST(RecallAtK, AnyRelevantInTopKCounts) {
  const QueryRanks q{.relevant_ranks = {3, 7}, .relevant_count = 3};
  EXPECT_EQ(RecallAtK(q, 1), 0.0);
  EXPECT_EQ(RecallAtK(q, 2), 0.0);
  EXPECT_EQ(RecallAtK(q, 3), 1.0);
  EXPECT_EQ(RecallAtK(q, 5), 1.0);
  EXPECT_EQ(RecallAtK(q, 0), 0.0);
}

TEST(RecallAtK, NothingRetrievedIsZero) {
  const QueryRanks q{.relevant_ranks = {}, .relevant_count = 1};
  EXPECT_EQ(RecallAtK(q, 10), 0.0);
  EXPECT_EQ(ReciprocalRank(q), 0.0);
  EXPECT_EQ(NdcgAtK(q, 10), 0.0);
}

TEST(ReciprocalRank, UsesTheBestRankInAnyOrder) {
  EXPECT_DOUBLE_EQ(ReciprocalRank({.relevant_ranks = {4, 2}, .relevant_count = 2}), 0.5);
  EXPECT_DOUBLE_EQ(ReciprocalRank({.relevant_ranks = {1}, .relevant_count = 1}), 1.0);
  EXPECT_DOUBLE_EQ(ReciprocalRank({.relevant_ranks = {5}, .relevant_count = 1}), 0.2);
}

TEST(NdcgAtK, BinaryGainsOverAllRelevant) {
  // One relevant at rank 1: DCG = IDCG = 1.
  EXPECT_DOUBLE_EQ(NdcgAtK({.relevant_ranks = {1}, .relevant_count = 1}, 10), 1.0);
  // One relevant at rank 3: 1/log2(4) = 0.5.
  EXPECT_DOUBLE_EQ(NdcgAtK({.relevant_ranks = {3}, .relevant_count = 1}, 10), 0.5);
  // Two relevant at ranks 1 and 3: (1 + 0.5) / (1 + 1/log2 3).
  EXPECT_NEAR(NdcgAtK({.relevant_ranks = {1, 3}, .relevant_count = 2}, 10), 1.5 / (1 + 1 / std::log2(3.0)),
              1e-12);
  // Three relevant, only one retrieved at rank 1: 1 / (1 + 1/log2 3 + 1/2).
  EXPECT_NEAR(NdcgAtK({.relevant_ranks = {1}, .relevant_count = 3}, 10), 1 / (1.5 + 1 / std::log2(3.0)),
              1e-12);
  // A relevant memory below k is ignored: ranks {2, 12} at k = 10 -> (1/log2 3) / (1 + 1/log2 3).
  EXPECT_NEAR(NdcgAtK({.relevant_ranks = {2, 12}, .relevant_count = 2}, 10),
              (1 / std::log2(3.0)) / (1 + 1 / std::log2(3.0)), 1e-12);
  // IDCG is cut at k: R = 3, k = 1, relevant at rank 1 -> 1.
  EXPECT_DOUBLE_EQ(NdcgAtK({.relevant_ranks = {1, 2}, .relevant_count = 3}, 1), 1.0);
  EXPECT_EQ(NdcgAtK({.relevant_ranks = {1}, .relevant_count = 0}, 10), 0.0);
}

TEST(SummarizeRetrieval, MeansOverQueriesWithIntervals) {
  const std::vector<QueryRanks> queries = {
      {.relevant_ranks = {1}, .relevant_count = 1},     // r@1 1, r@5 1, RR 1
      {.relevant_ranks = {4}, .relevant_count = 1},     // r@1 0, r@5 1, RR .25
      {.relevant_ranks = {}, .relevant_count = 2},      // 0, 0, 0
      {.relevant_ranks = {2, 1}, .relevant_count = 2},  // 1, 1, 1
  };
  const std::vector<int> ks = {1, 5};
  const RetrievalSummary s = SummarizeRetrieval(queries, ks, 10, {.resamples = 500, .seed = 7});
  EXPECT_EQ(s.queries, 4u);
  ASSERT_EQ(s.recall.size(), 2u);
  EXPECT_DOUBLE_EQ(s.recall[0].mean, 0.5);
  EXPECT_DOUBLE_EQ(s.recall[1].mean, 0.75);
  EXPECT_DOUBLE_EQ(s.mrr.mean, (1 + 0.25 + 0 + 1) / 4);
  EXPECT_NEAR(s.ndcg.mean, (1 + 1 / std::log2(5.0) + 0 + 1) / 4, 1e-12);
  for (const MeanWithCi& m : {s.recall[0], s.recall[1], s.mrr, s.ndcg}) {
    EXPECT_LE(m.ci.lo, m.mean);
    EXPECT_GE(m.ci.hi, m.mean);
    EXPECT_GE(m.ci.lo, 0.0);
    EXPECT_LE(m.ci.hi, 1.0);
  }
  EXPECT_LT(s.recall[0].ci.lo, s.recall[0].ci.hi);  // four queries that disagree: a real interval
}

TEST(SummarizeRetrieval, EmptySetIsZero) {
  const std::vector<int> ks = {1};
  const RetrievalSummary s = SummarizeRetrieval({}, ks, 10, {});
  EXPECT_EQ(s.queries, 0u);
  EXPECT_EQ(s.recall[0].mean, 0.0);
  EXPECT_EQ(s.ndcg.ci.hi, 0.0);
}

}  // namespace
}  // namespace bulwark::eval
