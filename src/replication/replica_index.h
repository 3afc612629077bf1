// ReplicaIndex: a follower's in-memory copy of the namespaces placed on its replica (issue #17
// point 2; doc/scale-out.md, "Replication"): per namespace, the verified entries (text, metadata, state)
// and their vectors in a FlatIndex (index/flat_index.h). The Follower (follower.h) fills it from
// the change feed, only with rows whose signature it checked; reads on this replica search it.
//
// Memory: a row's vector lives once (in the FlatIndex; the entry copy drops its embedding), so a
// replica holding R/N of the namespaces holds about R/N of the vectors (Memory()).
//
// Rollback: a row older (updated_at_us) than the version of it already held is refused
// (DataLoss): a replayed old row never replaces a newer one.
//
// Thread-safe: reads in parallel, changes serialized.
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/status/status.h>
#include <absl/status/statusor.h>
#include <absl/synchronization/mutex.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bulwark/entry.h"
#include "index/flat_index.h"
#include "storage/storage_backend.h"

namespace bulwark {

struct ReplicaHit {
  Entry entry;  // without its embedding
  float score = 0;
};

// Bytes the index holds (approximate: payloads, not allocator overhead).
struct ReplicaMemory {
  size_t namespaces = 0;
  size_t rows = 0;
  size_t vector_bytes = 0;  // rows * dimension * 4
  size_t text_bytes = 0;    // text, metadata, ids, principal, tag
};

class ReplicaIndex {
 public:
  // InvalidArgument for a dimension FlatIndex cannot hold.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<ReplicaIndex>> Create(int dimension);

  // Holds `row` (already verified by the caller), replacing the namespace's earlier version of the
  // entry. A deleted or purged row is dropped instead. InvalidArgument for a vector of another
  // dimension; DataLoss if the row is older than the version held (rollback).
  [[nodiscard]] absl::Status Put(const StoredRow& row);
  // Drops the entry if held.
  void Remove(std::string_view name_space, std::string_view id);

  std::optional<Entry> Get(std::string_view name_space, std::string_view id) const;
  // The k active memories of the namespace with the highest inner product with `query`, best
  // first. InvalidArgument for a query of another dimension or k < 0; an unknown namespace has none.
  [[nodiscard]] absl::StatusOr<std::vector<ReplicaHit>> Search(std::string_view name_space,
                                                               std::span<const float> query, int k) const;
  size_t size(std::string_view name_space) const;
  ReplicaMemory Memory() const;

 private:
  struct Held {
    int64_t row_id = 0;
    Entry entry;  // embedding and advisory report cleared
  };
  struct Namespace {
    std::unique_ptr<FlatIndex> vectors;
    absl::flat_hash_map<std::string, Held> by_id;
    absl::flat_hash_map<int64_t, std::string> id_by_row;
  };
  explicit ReplicaIndex(int dimension) : dimension_(dimension) {}
  void RemoveLocked(Namespace& ns, std::string_view id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const int dimension_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Namespace> namespaces_ ABSL_GUARDED_BY(mu_);
};

}  // namespace bulwark
