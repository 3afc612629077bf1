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
};

}  // namespace bulwark
