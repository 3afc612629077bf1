// Bm25Index: an in-memory Okapi BM25 lexical index over pre-tokenized documents (issue #19: a
// lexical ranking to fuse with the vector ranking). Not wired into MemoryStore::Search; the
// retrieval evaluation (`bulwark-lab eval retrieval --ranking bm25|rrf`) uses it.
//
// Callers tokenize; to "tokenize like the lexical embedder" pass LexicalEmbedder::Tokens(text)
// (lowercased ASCII words, optionally WordNet-canonicalized). Scoring, with the Lucene form of the
// IDF (Robertson & Zaragoza 2009, "The Probabilistic Relevance Framework: BM25 and Beyond",
// Eq. 3.26, plus 1 inside the log so IDF is never negative):
//   idf(t)      = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))
//   score(d, q) = sum over distinct t in q of idf(t) * tf(t, d) * (k1 + 1)
//                 / (tf(t, d) + k1 * (1 - b + b * |d| / avgdl))
// N documents, df(t) documents containing t, |d| tokens of d, avgdl the mean |d|.
//
// Thread safety: not synchronized; Add against everything else is the caller's to serialize;
// concurrent Search calls are safe.
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/status/status.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
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

  // The at most `k` documents with a positive score for `query_tokens`, best first; equal scores
  // in the order the documents were added. Empty for k <= 0, an empty index or no matching term.
  std::vector<Bm25Hit> Search(std::span<const std::string> query_tokens, int k) const;

  size_t size() const { return ids_.size(); }

 private:
  struct Posting {
    uint32_t doc = 0;  // position in ids_
    uint32_t tf = 0;
  };
  Bm25Options options_;
  std::vector<int64_t> ids_;
  std::vector<uint32_t> lengths_;
  uint64_t total_length_ = 0;
  absl::flat_hash_map<int64_t, uint32_t> position_by_id_;
  absl::flat_hash_map<std::string, std::vector<Posting>> postings_;
};

}  // namespace bulwark
