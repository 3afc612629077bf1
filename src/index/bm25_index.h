// Bm25Index: an in-memory Okapi BM25 lexical index over pre-tokenized documents (issue #19: a
// lexical ranking to fuse with the vector ranking). The store keeps one per namespace over its
// active memories (store/lexical_rows.h; `retrieval: hybrid`); the retrieval evaluation
// (`bulwark-lab eval retrieval --ranking bm25|rrf`) builds its own.
//
// Callers tokenize (index/lexical_tokenizer.h for the store; LexicalEmbedder::Tokens in the
// evaluation). A removed document leaves nothing behind: its postings go, and a term no other
// document has is erased (a purged entry's words do not stay in memory). Scoring, with the Lucene form of the
// IDF (Robertson & Zaragoza 2009, "The Probabilistic Relevance Framework: BM25 and Beyond",
// Eq. 3.26, plus 1 inside the log so IDF is never negative):
//   idf(t)      = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))
//   score(d, q) = sum over distinct t in q of idf(t) * tf(t, d) * (k1 + 1)
//                 / (tf(t, d) + k1 * (1 - b + b * |d| / avgdl))
// N documents, df(t) documents containing t, |d| tokens of d, avgdl the mean |d|.
//
// Top-k with max-score pruning (Turtle & Flood 1995, "Query evaluation: strategies and
// optimizations", IP&M 31(6); the "essential terms" form of Mallia et al. 2019): each term keeps
// its largest tf and its shortest document, so its contribution to any document is at most
// ub(t) = idf(t) * score(max tf, min |d|). Terms are added best bound first; once the bounds of
// the terms left sum to less than the k-th best (partial) score so far, no document missing from
// the accumulator can enter the top k and the rest of the postings (the common words') are not
// read. The candidates that can still reach the top k are then scored exactly, term by term in
// query order, as exhaustive scoring adds them, so the top k, its scores (bit for bit) and its tie
// order are those of scoring every posting (bm25_index_test compares them on random corpora).
//
// Thread safety: not synchronized; Add against everything else is the caller's to serialize;
// concurrent Search calls are safe (each thread ranks in accumulators of its own, kept between
// calls: 9 bytes per document of the largest index it has ranked).
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/functional/function_ref.h>
#include <absl/status/status.h>
#include <absl/status/statusor.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bulwark {

struct Bm25Options {
  double k1 = 1.2;  // term-frequency saturation; >= 0
  double b = 0.75;  // length normalization; in [0, 1]
};

struct Bm25Hit {
  int64_t id = 0;
  double score = 0;
};

class Bm25Index {
 public:
  // Options outside their ranges are clamped into them.
  explicit Bm25Index(Bm25Options options = {});

  // Adds a document. InvalidArgument if `id` was already added (nothing changes then). A document
  // with no tokens is kept (it counts in N and avgdl) but never matches.
  [[nodiscard]] absl::Status Add(int64_t id, std::span<const std::string> tokens);
  // Removes a document and every posting of it. NotFound if `id` is not in the index.
  [[nodiscard]] absl::Status Remove(int64_t id);
  bool Contains(int64_t id) const { return position_by_id_.contains(id); }

  // The at most `k` documents with a positive score for `query_tokens` that `accept` (if set)
  // accepts, best first; equal scores to the lower id. Empty for k <= 0, an empty index or no
  // matching term. `query_weights`, if not empty, holds one weight >= 0 per query token that
  // multiplies that term's contribution (a repeated token counts once, with its first weight;
  // Robertson & Zaragoza 2009 Eq. 3.9's query-term weighting); empty means 1 for every token.
  using Accept = bool (*)(const void* context, int64_t id);
  std::vector<Bm25Hit> Search(std::span<const std::string> query_tokens, int k, Accept accept = nullptr,
                              const void* context = nullptr,
                              std::span<const double> query_weights = {}) const;
  // Search without pruning: every posting of every query term is scored. The same result as
  // Search; kept as the reference for tests and benchmarks.
  std::vector<Bm25Hit> SearchExhaustive(std::span<const std::string> query_tokens, int k,
                                        Accept accept = nullptr, const void* context = nullptr,
                                        std::span<const double> query_weights = {}) const;

  // The score `doc_tokens` would have as a document of this index, with the index's statistics (N,
  // df, avgdl) as they are, without adding it: a document scored this way changes no other
  // document's score (the store scores honeypots so, for the honeypot observation only).
  double ScoreDocument(std::span<const std::string> doc_tokens, std::span<const std::string> query_tokens,
                       std::span<const double> query_weights = {}) const;

  // The at most `k` documents of this index with a positive score for `query_tokens`, each scored
  // as ScoreDocument of `statistics` would score it (with `statistics`' N, df and avgdl; this
  // index's own only hold its documents' term frequencies and lengths), best first, equal scores to
  // the lower id. The store keeps its honeypots in such an index and ranks them against the
  // memories' statistics for the honeypot observation (issue #13 point 4): one pass over the
  // postings of the query's terms instead of one ScoreDocument (a term map) per pot. `floor` > 0:
  // only documents scoring at least `floor` (the observation's k_obs-th memory score, below which
  // no pot can enter it), so the max-score pruning skips the rest from the start.
  std::vector<Bm25Hit> SearchWithStatisticsOf(const Bm25Index& statistics,
                                              std::span<const std::string> query_tokens, int k,
                                              std::span<const double> query_weights = {},
                                              double floor = 0) const;
  // The distinct terms of document `id` with the number of documents holding each (its df), in
  // no particular order; empty if `id` is not in the index. For query expansion from feedback
  // documents (store/query_feedback.h); reads what Add keeps, stores nothing new.
  std::vector<std::pair<std::string_view, uint32_t>> DocumentTerms(int64_t id) const;
  // idf(t) of the header's formula for a term `df` of this index's documents hold.
  double Idf(uint32_t df) const;

  // How many postings the calling thread's last Search, SearchExhaustive or SearchWithStatisticsOf
  // read while accumulating (exact scoring of the candidates aside): what pruning saves, for tests
  // and benchmarks.
  static size_t PostingsReadByLastSearch();
  // Gives back the spare capacity of the postings lists (they grow by doubling while documents are
  // added): called once a bulk load is done.
  void ShrinkToFit();

  size_t size() const { return position_by_id_.size(); }
  // Distinct terms held (for tests: a removed document's unique words are gone).
  size_t term_count() const { return term_ids_.size(); }

  // --- Index snapshots (store/index_snapshot.h): the postings as they are (bm25_index_image.cc). ---
  struct Posting {
    uint32_t doc = 0;  // slot: position in slot_ids()
    uint32_t tf = 0;
  };
  static constexpr int64_t kFreeSlot = -1;  // slot_ids() value of a removed document's slot
  // Document ids by slot (kFreeSlot for a free slot).
  std::span<const int64_t> slot_ids() const { return ids_; }
  // Postings held, over every term.
  size_t posting_count() const;
  // Calls `visit` once per term held, in term id order: its text and its postings (ascending slot).
  void ForEachTerm(
      absl::FunctionRef<void(std::string_view term, std::span<const Posting> postings)> visit) const;
  // An index with `options` holding what slot_ids() and ForEachTerm of another index held: terms
  // given as their byte lengths over the concatenated `names`, each with `counts[t]` postings, the
  // postings of term 0 first. Document lengths, N, avgdl and the terms' bounds are derived from
  // the postings, so every Search ranks as in the index they were taken from (and as in one that
  // Add built from the same documents: scores do not depend on slots or term ids). InvalidArgument
  // (nothing built) for a repeated id, a repeated term, a term without postings, a posting of a free or
  // missing slot, a tf of 0, postings not ascending, a document longer than 2^32 - 1 tokens, or counts that
  // do not add up to the postings.
  [[nodiscard]] static absl::StatusOr<Bm25Index> Restore(Bm25Options options, std::span<const int64_t> ids,
                                                         std::span<const uint32_t> name_lengths,
                                                         std::string_view names,
                                                         std::span<const uint32_t> counts,
                                                         std::span<const Posting> postings);

 private:
  // What bounds a term's contribution: its largest tf and the length of its shortest document.
  // Raised by Add; a Remove leaves them as they are (still bounds, only looser).
  struct TermBound {
    uint32_t max_tf = 0;
    uint32_t min_length = std::numeric_limits<uint32_t>::max();
  };
  // A distinct query term as ranking uses it.
  struct RankTerm {
    const std::vector<Posting>* postings = nullptr;
    double idf = 0;    // query weight * idf
    double bound = 0;  // no document's contribution from this term exceeds it
  };
  struct Scratch;  // per-thread accumulators of Rank (bm25_index.cc)
  static Scratch& ThreadScratch();

  // One term's contribution to a document's score (the summand of the header's formula).
  double Contribution(double idf, double tf, double length, double avgdl) const {
    const double norm = options_.k1 * (1 - options_.b + options_.b * length / avgdl);
    return idf * tf * (options_.k1 + 1) / (tf + norm);
  }
  // The distinct query terms this index holds with a positive weighted idf, in query order.
  std::vector<RankTerm> RankTerms(const Bm25Index& statistics, std::span<const std::string> query_tokens,
                                  std::span<const double> query_weights, double avgdl) const;
  // Pruned (prune) or exhaustive top-k of this index's documents against `statistics`.
  std::vector<Bm25Hit> Rank(const Bm25Index& statistics, std::span<const std::string> query_tokens, int k,
                            Accept accept, const void* context, std::span<const double> query_weights,
                            bool prune, double floor = 0) const;
  // Max-score accumulation (see the header paragraph) for documents scoring at least `floor`;
  // returns the bound of the terms not added.
  double AccumulateEssential(std::span<const RankTerm> terms, size_t k, Accept accept, const void* context,
                             double avgdl, double floor, Scratch* s, double* theta) const;
  // The k-th best accumulated score among accepted documents; 0 if fewer than k.
  double KthBest(size_t k, Accept accept, const void* context, Scratch* s) const;
  // The exact scores (query order) of s->candidates into s->acc (the partial scores are spent).
  void ScoreCandidates(std::span<const RankTerm> terms, double avgdl, Scratch* s) const;
  // The postings of `term`, or null if no document holds it.
  const std::vector<Posting>* PostingsOf(std::string_view term) const;
  // The id of `term`, given a new one (from free_terms_ first) if it has none.
  uint32_t TermId(std::string_view term);

  Bm25Options options_;
  std::vector<int64_t> ids_;                  // by slot; kFreeSlot once removed
  std::vector<uint32_t> lengths_;             // by slot
  std::vector<std::vector<uint32_t>> terms_;  // by slot: the ids of the document's distinct terms
  std::vector<uint32_t> free_slots_;
  uint64_t total_length_ = 0;
  absl::flat_hash_map<int64_t, uint32_t> position_by_id_;
  // Each distinct term is held once (a document holds 4-byte term ids, not copies of its words):
  // term -> id, and by id its postings and its text (to erase it when its last posting goes).
  absl::flat_hash_map<std::string, uint32_t> term_ids_;
  std::vector<std::vector<Posting>> postings_;  // by term id, ascending doc; empty for a free id
  std::vector<TermBound> bounds_;               // by term id
  std::vector<std::string> term_names_;         // by term id; empty for a free id
  std::vector<uint32_t> free_terms_;
};

}  // namespace bulwark
