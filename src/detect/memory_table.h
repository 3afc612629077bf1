// MemoryTable: the write gate's view of a store's active memories (issue #14 point 2), per
// namespace: each memory's id, writer (principal and source), slots (slot_extractor.h) and
// embedding, with a nearest-neighbour search fast enough to run on every write.
//
// The store's own vector index is exact (a scan of every row: about 1 ms at 10k entries of 384
// floats), far over the conflict detector's budget of 40 us per write. So the table keeps a 128-bit
// random-hyperplane signature of each embedding (SimHash, Charikar 2002: two unit vectors at angle
// theta differ in each bit with probability theta/pi), picks the rows of smallest Hamming distance
// to the query's signature (one pass of two popcounts per row), and ranks only those by exact
// cosine. A pair with cosine 0.7 (45 degrees) differs in 32 of 128 bits on average (sd 4.9); an
// unrelated pair (cosine 0.1, 84 degrees) in 60 (sd 5.6): near neighbours reach the candidate set.
//
// The write path fills the table (WriteDefenses::OnCommitted with accepted entries; the first
// write to a namespace loads its active entries), so it can hold memories that were deleted or
// quarantined since: the conflict detector asks the store whether its match is still active
// (StoreContext) before reporting it. Thread-safe (one shared mutex).
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/synchronization/mutex.h>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bulwark/entry.h"
#include "detect/slot_extractor.h"
#include "detect/subject_index.h"

namespace bulwark {

// What the write path tells the gate about an entry the store now holds as an active memory.
struct StoredMemory {
  std::string_view id;
  std::string_view principal;
  Source source = Source::kUser;
  std::string_view text;
  std::span<const float> embedding;  // L2-normalised
};

// One stored memory near a query, with its text (what the LLM judge quotes).
struct NearMemory {
  std::string id;
  std::string text;
  double similarity = 0;
};

// One stored memory near a query, with what a conflict report needs.
struct MemoryMatch {
  std::string id;
  std::string principal;
  Source source = Source::kUser;
  double similarity = 0;    // cosine of the embeddings; the subject overlap when by_subject
  SlotDiff diff;            // how the query's slots change this memory's
  bool by_subject = false;  // matched by subject words (SubjectContradicted), not by embedding
};

class MemoryTable {
 public:
  static constexpr size_t kSignatureWords = 2;  // 128 bits
  static constexpr size_t kCandidates = 32;     // rows ranked by exact cosine per query

  explicit MemoryTable(size_t dim);
  ~MemoryTable();

  // Adds (or replaces, same id) a memory of the namespace. Ignores an embedding of the wrong size.
  void Put(std::string_view name_space, const StoredMemory& memory);
  // Forgets a memory (absent: nothing happens).
  void Remove(std::string_view name_space, std::string_view id);
  // Memories held for the namespace.
  size_t size(std::string_view name_space) const;

  // The stored memories with cosine >= min_similarity to `embedding`, among the kCandidates of
  // smallest signature distance, best first, at most `limit`, whose slots `slots` contradict
  // (SlotDiff::contradicts) and whose text is not `text` (a repeated write is not a conflict).
  // Allocates only for matches.
  std::vector<MemoryMatch> Contradicted(std::string_view name_space, std::span<const float> embedding,
                                        std::string_view text, const TextSlots& slots, double min_similarity,
                                        size_t limit) const;
  // The stored memories about the same subject as a write of `terms` (SubjectIndex::TermsOf):
  // subject overlap >= min_overlap (subject_index.h), best first, at most `limit`, whose text is
  // not `text`, and that the write contradicts: a time, date, amount, number, e-mail, URL, phone or
  // account value replaced (a changed name alone does not count: names say whose or which thing
  // the text is about, so both texts naming people or places and none in common are about
  // different subjects and are skipped), or the polarity flipped. `similarity` is the overlap.
  std::vector<MemoryMatch> SubjectContradicted(std::string_view name_space, const SubjectIndex::Terms& terms,
                                               std::string_view text, const TextSlots& slots,
                                               double min_overlap, size_t limit) const;
  // The (at most `limit`) stored memories nearest to `embedding` among the signature candidates,
  // best first, leaving out any whose text is `text` (the write itself). Empty for an empty or
  // unknown namespace or an embedding of the wrong size.
  std::vector<NearMemory> Nearest(std::string_view name_space, std::span<const float> embedding,
                                  std::string_view text, size_t limit) const;
  // The highest cosine of a stored memory to `embedding` among the signature candidates (0 for
  // an empty namespace): calibration and tests.
  double NearestSimilarity(std::string_view name_space, std::span<const float> embedding) const;

  using Signature = std::array<uint64_t, kSignatureWords>;
  // The signature of an L2-normalised embedding of this table's dimension.
  Signature Sign(std::span<const float> embedding) const;

 private:
  struct Row {
    std::string id;
    std::string principal;
    Source source;
    std::string text;
    TextSlots slots;
    std::vector<float> embedding;
    uint32_t key = 0;  // stable across swap-removes: the subject index's row key
  };
  struct Namespace {
    std::vector<Signature> signatures;  // by row position
    std::vector<Row> rows;
    absl::flat_hash_map<std::string, size_t> position;   // id -> row position
    SubjectIndex subjects;                               // by Row::key
    absl::flat_hash_map<uint32_t, size_t> key_position;  // Row::key -> row position
    uint32_t next_key = 0;
  };
  // Positions of the (at most kCandidates) rows nearest in signature, into `out`.
  void Candidates(const Namespace& ns, const Signature& query, std::vector<uint32_t>* out) const;
  // Those candidates of `embedding` with exact cosine >= min_similarity, as (cosine, position),
  // best first. Requires mu_ (shared).
  using RankedCandidates = std::vector<std::pair<double, uint32_t>>;
  void RankCandidates(const Namespace& ns, std::span<const float> embedding, double min_similarity,
                      RankedCandidates* out) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  double Cosine(std::span<const float> a, std::span<const float> b) const;

  const size_t dim_;
  std::vector<float> planes_;             // kSignatureWords * 64 hyperplanes of dim_ floats, row-major
  std::vector<const float*> plane_rows_;  // their starts, for InnerProductKernels::dot_rows
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Namespace> namespaces_ ABSL_GUARDED_BY(mu_);
};

}  // namespace bulwark
