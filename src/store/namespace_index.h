// EntryStore's in-memory index of one namespace (private to EntryStore's .cc files): vectors with
// state and kind, top-level metadata, the honeypot rows, and the lexical (BM25) index of hybrid
// ranking (the last two built on first use, see below). The vector and metadata indexes hold the same rows;
// the lexical index holds only the active memories among them (never a honeypot, never a quarantined entry,
// so neither changes the lexical statistics of what callers can retrieve); active honeypots' tokens and
// vectors are kept apart for the observation.
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "index/bm25_index.h"
#include "index/vector_index.h"
#include "store/entry_store.h"
#include "store/index_snapshot.h"
#include "store/metadata_index.h"

namespace bulwark {

struct EntryStore::NamespaceIndex {
  explicit NamespaceIndex(const Bm25Options& bm25) : lexical(bm25), pot_lexical(bm25) {}
  std::unique_ptr<VectorIndex> vectors;
  MetadataIndex metadata;
  absl::flat_hash_set<int64_t> honeypots;  // the rows of kind honeypot among them
  Bm25Index lexical;                       // the active memories' tokens
  // The active honeypots' tokens (same BM25 options as `lexical`), ranked against `lexical`'s
  // statistics for the honeypot observation only (Bm25Index::SearchWithStatisticsOf), so pots
  // change no hit; one pass over the postings of the query's terms scores every pot.
  Bm25Index pot_lexical;
  // Sets (non-empty `tokens`) or erases (empty) the pot's tokens.
  void SetPotTokens(int64_t row_id, const std::vector<std::string>& tokens) {
    pot_lexical.Remove(row_id).IgnoreError();                            // it may be absent
    if (!tokens.empty()) pot_lexical.Add(row_id, tokens).IgnoreError();  // a fresh id: cannot fail
  }
  // The active honeypots' vectors (also in `vectors`, where searches never rank them): the
  // observation scores these few rows instead of scanning the namespace a second time. Null until
  // the namespace has an active pot.
  std::unique_ptr<VectorIndex> pot_vectors;
  // The active honeypots (as `pot_vectors` holds them, and `vectors` with this filter).
  static constexpr IndexFilter kPotFilter{StateBit(State::kActive), 1u << static_cast<int>(Kind::kHoneypot)};
  // The k best pots for `query` (best first; empty without pots) as far as an observation of depth
  // k can need them: `scanned` when it is not null and every row of it is in pot_vectors, else
  // pot_vectors' own search. `scanned` is what the search's own scan of `vectors` found with
  // kPotFilter (VectorIndex::SearchWithSide, main k >= the observation's depth): the same rows and
  // scores down to the k-th memory hit (a pot below it cannot enter the observation: on equal
  // scores the memory ranks first), unless `vectors` holds a pot that failed verification, which
  // pot_vectors never holds.
  std::vector<IndexHit> BestPots(std::span<const float> query, size_t k,
                                 const std::vector<IndexHit>* scanned) const {
    if (!pot_vectors) return {};
    if (scanned != nullptr && std::all_of(scanned->begin(), scanned->end(), [&](const IndexHit& h) {
          return pot_vectors->StateOf(h.row_id).has_value();
        })) {
      return *scanned;
    }
    auto found = pot_vectors->Search(query, static_cast<int>(k), kPotFilter);
    return found.ok() ? *std::move(found) : std::vector<IndexHit>();  // the caller checked the dimension
  }
  // The side indexes `lexical` and `metadata` of a namespace that had rows at open are built on
  // first use (EntryStore::EnsureSideIndexes: the first hybrid search, the first filtered search),
  // not by the open; until then they are empty and writes leave them alone. A namespace first
  // indexed after the open has both (empty, then kept up to date) from the start.
  bool lexical_built = false;
  bool metadata_built = false;
  // The BM25 index the open's snapshot holds for this namespace, not read yet (a vector-ranked
  // namespace never reads it): the first use restores it (EntryStore::RestoreLexicalLocked) and
  // replays the rows in `lexical_changed`, every row indexed, re-indexed or unindexed since the
  // snapshot's seq (the open's catch-up included). Dropped when too many rows changed (then the
  // index is built from the rows, as without a snapshot).
  std::optional<SnapshotLexicalSection> lexical_in_snapshot;
  absl::flat_hash_set<int64_t> lexical_changed;
  // Notes a row changed while the BM25 index waits in the snapshot.
  void NoteLexicalChange(int64_t row_id) {
    if (!lexical_in_snapshot.has_value()) return;
    lexical_changed.insert(row_id);
    if (lexical_changed.size() > std::max<size_t>(1'000, vectors->size() / 4)) {
      lexical_in_snapshot.reset();  // a replay would cost about what a build does
      lexical_changed = {};
    }
  }
};

}  // namespace bulwark
