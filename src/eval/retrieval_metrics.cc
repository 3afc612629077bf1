// Ranking metrics of the retrieval evaluation (see retrieval_metrics.h).
#include "eval/retrieval_metrics.h"

#include <algorithm>
#include <cmath>

namespace bulwark::eval {
namespace {

// The discount of rank r (1-based): 1 / log2(r + 1).
double Discount(int rank) { return 1.0 / std::log2(static_cast<double>(rank) + 1.0); }

MeanWithCi Bootstrapped(std::span<const QueryRanks> queries, double (*metric)(const QueryRanks&, int), int k,
                        const BootstrapOptions& bootstrap) {
  std::vector<double> values;
  values.reserve(queries.size());
  for (const QueryRanks& q : queries) values.push_back(metric(q, k));
  return BootstrapMeanCi(values, bootstrap);
}

double ReciprocalRankIgnoringK(const QueryRanks& ranks, int /*k*/) { return ReciprocalRank(ranks); }

}  // namespace

double RecallAtK(const QueryRanks& ranks, int k) {
  for (int r : ranks.relevant_ranks) {
    if (r >= 1 && r <= k) return 1.0;
  }
  return 0.0;
}

double ReciprocalRank(const QueryRanks& ranks) {
  int best = 0;
  for (int r : ranks.relevant_ranks) {
    if (r >= 1 && (best == 0 || r < best)) best = r;
  }
  return best == 0 ? 0.0 : 1.0 / static_cast<double>(best);
}

double NdcgAtK(const QueryRanks& ranks, int k) {
  if (k < 1 || ranks.relevant_count < 1) return 0.0;
  double dcg = 0;
  for (int r : ranks.relevant_ranks) {
    if (r >= 1 && r <= k) dcg += Discount(r);
  }
  double ideal = 0;
  for (int i = 1; i <= std::min(ranks.relevant_count, k); ++i) ideal += Discount(i);
  return dcg / ideal;
}

RetrievalSummary SummarizeRetrieval(std::span<const QueryRanks> queries, std::span<const int> recall_ks,
                                    int ndcg_k, const BootstrapOptions& bootstrap) {
  RetrievalSummary summary;
  summary.queries = queries.size();
  summary.recall_ks.assign(recall_ks.begin(), recall_ks.end());
  for (int k : recall_ks) summary.recall.push_back(Bootstrapped(queries, &RecallAtK, k, bootstrap));
  summary.mrr = Bootstrapped(queries, &ReciprocalRankIgnoringK, 0, bootstrap);
  summary.ndcg_k = ndcg_k;
  summary.ndcg = Bootstrapped(queries, &NdcgAtK, ndcg_k, bootstrap);
  return summary;
}

}  // namespace bulwark::eval
