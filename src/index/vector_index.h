// VectorIndex: exact or approximate inner-product top-k over the vectors of one namespace.
//
// Rows are identified by a caller-chosen 64-bit row id (the store uses the storage row id). Each
// row carries its entry's State and Kind so a search can filter without touching storage.
#pragma once

#include <absl/status/status.h>
#include <absl/status/statusor.h>

#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "bulwark/entry.h"

namespace bulwark {

// Bit sets over State and Kind. A row passes the filter when both of its bits are set.
struct IndexFilter {
  uint32_t states = 1u << static_cast<int>(State::kActive);
  uint32_t kinds = 1u << static_cast<int>(Kind::kMemory);
  bool Accepts(State s, Kind k) const {
    return ((states >> static_cast<int>(s)) & 1u) && ((kinds >> static_cast<int>(k)) & 1u);
  }
};

struct IndexHit {
  int64_t row_id = 0;
  float score = 0;  // inner product with the query
};

class VectorIndex {
 public:
  virtual ~VectorIndex() = default;

  virtual int dimension() const = 0;
  // Number of rows held, whatever their state.
  virtual size_t size() const = 0;

  // Adds a row. InvalidArgument if the vector's size is not dimension(); AlreadyExists if the
  // row id is present.
  [[nodiscard]] virtual absl::Status Add(int64_t row_id, std::span<const float> vector, State state,
                                         Kind kind) = 0;
  // Changes a row's state (quarantine, release, delete, ...). NotFound if absent.
  [[nodiscard]] virtual absl::Status SetState(int64_t row_id, State state) = 0;
  // Removes a row. NotFound if absent.
  [[nodiscard]] virtual absl::Status Remove(int64_t row_id) = 0;
  // The row's state and kind as indexed; nullopt if the row is not indexed.
  virtual std::optional<std::pair<State, Kind>> StateOf(int64_t row_id) const = 0;

  // The k rows with the highest inner product with `query` among rows the filter accepts, best
  // first; ties broken by lower row id. Fewer than k when fewer rows pass. InvalidArgument if the
  // query's size is not dimension() or k < 0.
  [[nodiscard]] virtual absl::StatusOr<std::vector<IndexHit>> Search(std::span<const float> query, int k,
                                                                     const IndexFilter& filter) const = 0;
  // Like Search, restricted to the rows whose ids are in `row_ids` (ids not in the index are
  // ignored, a repeated id counts once): the k best of those rows that pass the filter.
  [[nodiscard]] virtual absl::StatusOr<std::vector<IndexHit>> SearchRows(
      std::span<const float> query, int k, const IndexFilter& filter,
      std::span<const int64_t> row_ids) const = 0;
  // Search, plus in `*side` (best first) the `side_k` best rows that `side_filter` accepts among
  // those scoring at least the k-th hit returned (among all, when fewer than k are returned): what
  // Search(query, side_k, side_filter) returns, cut there. One pass where the index can: a side row
  // that low can be skipped like a main row (the honeypot observation ranks the pots beside the
  // memories: a pot below the k_obs-th memory cannot enter it). Same errors as Search (side_k < 0
  // too); `*side` is cleared first. This default searches twice.
  [[nodiscard]] virtual absl::StatusOr<std::vector<IndexHit>> SearchWithSide(
      std::span<const float> query, int k, const IndexFilter& filter, int side_k,
      const IndexFilter& side_filter, std::vector<IndexHit>* side) const {
    side->clear();
    absl::StatusOr<std::vector<IndexHit>> side_hits = Search(query, side_k, side_filter);
    if (!side_hits.ok()) return side_hits.status();
    *side = *std::move(side_hits);
    absl::StatusOr<std::vector<IndexHit>> hits = Search(query, k, filter);
    if (hits.ok() && k > 0 && hits->size() == static_cast<size_t>(k)) {
      const float last = hits->back().score;
      std::erase_if(*side, [last](const IndexHit& h) { return h.score < last; });
    }
    return hits;
  }
};

}  // namespace bulwark
