// EntryStore's in-memory index of one namespace (private to EntryStore's .cc files): vectors with
// state and kind, top-level metadata, the honeypot rows, and the lexical (BM25) index of hybrid
// ranking. The vector and metadata indexes hold the same rows; the lexical index holds only the
// active memories among them (never a honeypot, never a quarantined entry, so neither changes the
// lexical statistics of what callers can retrieve); active honeypots' tokens are kept apart.
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>

#include <memory>
#include <string>
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
};

}  // namespace bulwark
