// EntryStore's in-memory index of one namespace (private to EntryStore's .cc files): vectors with
// state and kind, top-level metadata, the honeypot rows, and the lexical (BM25) index of hybrid
// ranking. The vector and metadata indexes hold the same rows; the lexical index holds only the
// active memories among them (never a honeypot, never a quarantined entry, so neither changes the
// lexical statistics of what callers can retrieve); active honeypots' tokens and vectors are kept apart
// for the observation.
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "index/bm25_index.h"
#include "index/vector_index.h"
#include "store/entry_store.h"
#include "store/metadata_index.h"

namespace bulwark {

struct EntryStore::NamespaceIndex {
  explicit NamespaceIndex(const Bm25Options& bm25) : lexical(bm25) {}
  std::unique_ptr<VectorIndex> vectors;
  MetadataIndex metadata;
  absl::flat_hash_set<int64_t> honeypots;  // the rows of kind honeypot among them
  Bm25Index lexical;                       // the active memories' tokens
  // The active honeypots' tokens, scored against `lexical`'s statistics for the honeypot
  // observation only (Bm25Index::ScoreDocument), so pots change no hit.
  absl::flat_hash_map<int64_t, std::vector<std::string>> pot_tokens;
  // Which active pots hold a token (each pot once per token): only those can score above 0, so
  // the observation scores only the pots that share a token with the query.
  absl::flat_hash_map<std::string, std::vector<int64_t>> pot_postings;
  // Sets (non-empty `tokens`) or erases (empty) the pot's tokens and postings.
  void SetPotTokens(int64_t row_id, std::vector<std::string> tokens) {
    if (auto old = pot_tokens.find(row_id); old != pot_tokens.end()) {
      for (const std::string& t : old->second) {
        auto posting = pot_postings.find(t);
        if (posting == pot_postings.end()) continue;
        std::erase(posting->second, row_id);
        if (posting->second.empty()) pot_postings.erase(posting);
      }
      pot_tokens.erase(old);
    }
    if (tokens.empty()) return;
    for (const std::string& t : tokens) {
      std::vector<int64_t>& posting = pot_postings[t];
      if (posting.empty() || posting.back() != row_id) posting.push_back(row_id);
    }
    pot_tokens[row_id] = std::move(tokens);
  }
  // The active honeypots' vectors (also in `vectors`, where searches never rank them): the
  // observation scores these few rows instead of scanning the namespace a second time. Null until
  // the namespace has an active pot.
  std::unique_ptr<VectorIndex> pot_vectors;
};

}  // namespace bulwark
