// Ranking metrics of the retrieval evaluation (issue #19, point 1): recall@k, reciprocal rank and
// nDCG@k of one labelled query, and their means over a query set with percentile bootstrap
// intervals (eval/bootstrap.h).
//
// A query's ranking is summarised by the 1-based ranks at which its relevant memories appear in
// the retrieved list, and by how many relevant memories it has in all. Definitions:
//   recall@k  1 if ANY relevant memory is in the top k, else 0 ("the answer first" at k = 1), so
//             a query with several relevant memories counts as found when one of them is there.
//   RR        1 / (rank of the first relevant memory), 0 when none was retrieved.
//   nDCG@k    binary gains over all relevant memories (Jarvelin & Kekalainen 2002):
//             DCG@k = sum over relevant ranks r <= k of 1 / log2(r + 1); IDCG@k the same for the
//             ideal ranking, sum over i = 1 .. min(R, k) of 1 / log2(i + 1).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "eval/bootstrap.h"

namespace bulwark::eval {

// Where one query's relevant memories were retrieved.
struct QueryRanks {
  std::vector<int> relevant_ranks;  // 1-based ranks of retrieved relevant memories, any order
  int relevant_count = 0;           // R: relevant memories in all (retrieved or not); >= 1
};

// recall@k as defined above; 0 for k < 1.
double RecallAtK(const QueryRanks& ranks, int k);
// Reciprocal rank of the first relevant memory; 0 when none was retrieved.
double ReciprocalRank(const QueryRanks& ranks);
// nDCG@k with binary gains; 0 when k < 1 or relevant_count < 1.
double NdcgAtK(const QueryRanks& ranks, int k);

// Means over a query set, each with its bootstrap interval. Every metric resamples the queries
// with the same seed, so the intervals of one summary come from the same resamples.
struct RetrievalSummary {
  size_t queries = 0;
  std::vector<int> recall_ks;      // the k of each recall entry below
  std::vector<MeanWithCi> recall;  // recall@k for each k of recall_ks
  MeanWithCi mrr;                  // mean reciprocal rank (truncated at the search depth)
  int ndcg_k = 10;
  MeanWithCi ndcg;  // mean nDCG@ndcg_k
};

// Summarises `queries`. Empty `queries`: every mean 0 with interval [0, 0].
RetrievalSummary SummarizeRetrieval(std::span<const QueryRanks> queries, std::span<const int> recall_ks,
                                    int ndcg_k, const BootstrapOptions& bootstrap);

}  // namespace bulwark::eval
