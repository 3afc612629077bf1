// The retrieval-quality experiment of `bulwark-lab eval retrieval` (issue #19, point 1): write a
// persona's memories and optional distractor memories into a store through the normal write path
// (AddBatch), run each labelled query through MemoryStore::Search (record_query = false), and
// summarise where the labelled relevant memories ranked (eval/retrieval_metrics.h: recall@k as
// "any relevant memory in the top k", MRR, nDCG@10 with binary gains), overall and per label
// group, with percentile bootstrap intervals over the queries.
//
// Labels file (data/retrieval/README.md): one JSON object per line,
//   {"query": "...", "relevant": ["<memory text>", ...], "group": "paraphrase"}
// where every relevant text is exactly the text of one of the memories; "group" is optional.
//
// Evaluation-only code: linked by bulwark-lab, never by the product binary.
#pragma once

#include <absl/status/statusor.h>

#include <cstddef>
#include <functional>
#include <istream>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bulwark/entry.h"
#include "embed/lexical_embedder.h"
#include "eval/bootstrap.h"
#include "eval/retrieval_metrics.h"
#include "store/memory_store.h"

namespace bulwark::eval {

// One labelled query.
struct LabelledQuery {
  std::string query;
  std::vector<std::string> relevant;  // distinct memory texts that answer the query; 1 .. 100
  std::string group = "all";          // the label group ("all" when the line has none)
};

struct LabelLimits {
  size_t max_line_bytes = 1 << 20;
  size_t max_queries = 100'000;
  size_t max_relevant = 100;  // relevant texts per query
};

// Parses a labels file. Blank lines are skipped. InvalidArgument naming the line ("line 4: ...")
// for a line that is not a JSON object, a missing or empty "query", a "relevant" that is not a
// non-empty array of distinct non-empty strings, a non-string or empty "group", an unknown field,
// a line over the limit, more queries than the limit, or a file with no query at all.
[[nodiscard]] absl::StatusOr<std::vector<LabelledQuery>> ParseRetrievalLabels(std::istream& in,
                                                                              const LabelLimits& limits = {});

// How the queries' rankings are made. kVector and kHybrid: MemoryStore::Search with the
// namespace's retrieval set to "vector" or "hybrid" (the product's two rankings; hybrid as
// configured by the store's StoreOptions::retrieval_config). kBm25: an in-memory BM25 index
// (index/bm25_index.h) over the same entries, tokenized by the lexical embedder. kRrf:
// reciprocal-rank fusion (rank_fusion.h) of the top fusion_depth of the vector ranking and kBm25,
// in the evaluation only.
enum class Ranking { kVector, kBm25, kRrf, kHybrid };
std::string_view ToString(Ranking ranking);
std::optional<Ranking> ParseRanking(std::string_view name);  // "vector", "bm25", "rrf", "hybrid""

struct RetrievalEvalConfig {
  std::string name_space = "retrieval-eval";
  std::string principal = "eval:retrieval";
  std::vector<int> recall_ks = {1, 5};  // each in 1 .. depth
  int ndcg_k = 10;                      // 1 .. depth
  int depth = 10;                       // results per search (MRR is truncated here); 1 .. 1000
  BootstrapOptions bootstrap;
  Ranking ranking = Ranking::kVector;
  // Tokenizer of the BM25 index (kBm25, kRrf; required then, not owned): LexicalEmbedder::Tokens.
  // kHybrid uses the store's own lexical index and tokenizer.
  const LexicalEmbedder* tokenizer = nullptr;
  int fusion_depth = 100;  // kRrf: candidates taken from each ranking; depth .. 1000
  double rrf_k = 60;       // kRrf: k of Cormack et al. 2009
};

// What happened to one query.
struct QueryOutcome {
  LabelledQuery label;
  QueryRanks ranks;
  std::vector<std::string> top;  // texts of the retrieved entries, best first (at most depth)
};

struct GroupSummary {
  std::string group;
  RetrievalSummary summary;
};

struct RetrievalEvalResult {
  size_t memories = 0;              // labelled-persona memories written
  size_t distractors = 0;           // distractor memories written
  size_t quarantined = 0;           // written entries the write gate quarantined (never retrieved)
  size_t quarantined_relevant = 0;  // of which texts some query labels relevant
  std::string embedder;             // the store's embedder fingerprint
  double build_seconds = 0;         // AddBatch of all entries (embedding, gate, signing, storage)
  double bm25_build_seconds = 0;    // tokenizing and indexing for BM25 (kBm25, kRrf)
  Ranking ranking = Ranking::kVector;
  double query_seconds = 0;  // all searches
  std::vector<QueryOutcome> queries;
  RetrievalSummary overall;
  std::vector<GroupSummary> groups;  // by group name
};

// Writes `memories` then `distractors` (one AddBatch) into `store`'s config.name_space, then runs
// every query. `progress`, if set, is called with (queries done, total). Errors:
//   InvalidArgument  a bad config (also: kBm25/kRrf without a tokenizer), no queries, no
//                    memories, or a relevant text that is not the text of any of `memories`
//                    (named with its query); nothing is written then;
//   any error of AddBatch or Search, unchanged.
[[nodiscard]] absl::StatusOr<RetrievalEvalResult> RunRetrievalEval(
    MemoryStore& store, std::span<const NewEntry> memories, std::span<const NewEntry> distractors,
    std::span<const LabelledQuery> queries, const RetrievalEvalConfig& config,
    const std::function<void(size_t, size_t)>& progress = {});

// {"overall": {"queries", "recall_at_1", "recall_at_1_ci": [lo, hi], ..., "mrr", "mrr_ci",
//  "ndcg_at_10", "ndcg_at_10_ci"}, "groups": {name: same}, "ranking": "vector|bm25|rrf",
//  "store": {"memories", "distractors", "entries", "quarantined", "quarantined_relevant",
//  "embedder"}, "timing": {"build_seconds", "bm25_build_seconds", "query_seconds"},
//  "queries": [{"query", "group", "relevant", "ranks", "top"}]} ("top": the first 3 texts).
nlohmann::json ToJson(const RetrievalEvalResult& result);
// The store line and one markdown table: the overall row, then one row per group.
std::string ToMarkdown(const RetrievalEvalResult& result);

}  // namespace bulwark::eval
