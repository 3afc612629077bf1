// FlatIndex: the exact VectorIndex. It scans every row that passes the filter, so a search costs
// one pass over the stored vectors (bound by memory bandwidth from about 10^5 rows of 384 floats).
//
// Layout (doc/index.md): vectors live in one contiguous, 64-byte aligned, row-major float array;
// each row occupies `stride` floats (the dimension rounded up to a multiple of 16, zero padded) so
// every row starts on a cache line. Parallel arrays by position hold the row id and the State and
// Kind bytes; a hash map takes a row id to its position. Remove moves the last row into the hole
// (swap-remove), so positions are not stable and are never exposed. In ScanMode::kInt8Bounded an
// Int8Rows copy, by the same positions, lets Search skip the float32 scoring of rows that provably
// cannot reach the top k.
//
// Thread safety: not internally synchronized. The owner serializes writers (Add, SetState, Remove,
// reserve) against everything else; any number of concurrent const calls (Search, size, ...) are
// safe. A search runs on the calling thread only.
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/status/status.h>
#include <absl/status/statusor.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <span>
#include <vector>

#include "bulwark/entry.h"
#include "index/inner_product.h"
#include "index/int8_rows.h"
#include "index/vector_index.h"

namespace bulwark {

// std::allocator with 64-byte alignment: one cache line, one AVX-512 register.
template <typename T>
struct CacheLineAllocator {
  using value_type = T;
  static constexpr std::align_val_t kAlignment{64};

  CacheLineAllocator() = default;
  template <typename U>
  CacheLineAllocator(const CacheLineAllocator<U>&) {}  // NOLINT(google-explicit-constructor)

  T* allocate(size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kAlignment)); }
  // Unsized: clang does not enable sized deallocation by default.
  void deallocate(T* p, size_t) { ::operator delete(p, kAlignment); }

  friend bool operator==(const CacheLineAllocator&, const CacheLineAllocator&) { return true; }
};

// How Search finds the exact top k. Both give identical results (same rows, same float32 scores).
enum class ScanMode {
  // Score every row that passes the filter in float32.
  kExact,
  // First bound every passing row's float32 score from a 4x smaller int8 copy (int8_rows.h), then
  // score in float32 only the rows whose upper bound reaches the k-th best lower bound. Costs
  // n * d bytes of extra memory plus 12 bytes per row.
  kInt8Bounded,
};

class FlatIndex final : public VectorIndex {
 public:
  // Largest accepted dimension; keeps row sizes and offsets far from overflow.
  static constexpr int kMaxDimension = 1 << 16;

  // An empty index of `dimension`-float vectors that uses the widest kernels the CPU supports, and
  // ScanMode::kInt8Bounded where the CPU has AVX-512 VNNI (kExact otherwise).
  // InvalidArgument unless 1 <= dimension <= kMaxDimension.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<FlatIndex>> Create(int dimension);
  // Same, with the float kernels of `level` (tests and benchmarks compare levels), and kInt8Bounded
  // only if `level` is kAvx512 and the CPU has VNNI. FailedPrecondition if the CPU does not
  // support `level`.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<FlatIndex>> Create(int dimension, SimdLevel level);
  // Same, with the scan mode forced. kInt8Bounded uses the AVX-512 VNNI int8 kernel when `level` is
  // kAvx512 and the CPU has VNNI, otherwise the portable scalar int8 kernel (slower than a float
  // scan; for tests).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<FlatIndex>> Create(int dimension, SimdLevel level,
                                                                         ScanMode mode);

  int dimension() const override { return dimension_; }
  size_t size() const override { return row_ids_.size(); }
  SimdLevel simd_level() const { return kernels_->level; }
  ScanMode scan_mode() const { return int8_ ? ScanMode::kInt8Bounded : ScanMode::kExact; }

  // Preallocates room for `rows` rows in total, so Adds up to that size do not reallocate (a
  // growing vector briefly holds two copies of the data). ResourceExhausted if that much memory
  // cannot be allocated; the index is unchanged then.
  [[nodiscard]] absl::Status Reserve(size_t rows);

  // VectorIndex. Add also returns InvalidArgument for a State or Kind outside its enumerators
  // (SetState likewise). Search follows the VectorIndex contract; a NaN score (possible only when
  // inputs hold NaN or infinities, or products overflow) ranks as -infinity and is returned so.
  [[nodiscard]] absl::Status Add(int64_t row_id, std::span<const float> vector, State state,
                                 Kind kind) override;
  [[nodiscard]] absl::Status SetState(int64_t row_id, State state) override;
  [[nodiscard]] absl::Status Remove(int64_t row_id) override;
  std::optional<std::pair<State, Kind>> StateOf(int64_t row_id) const override;
  [[nodiscard]] absl::StatusOr<std::vector<IndexHit>> Search(std::span<const float> query, int k,
                                                             const IndexFilter& filter) const override;
  // A small set of rows (under 1/16 of the index) is scored directly in float32; a larger one is
  // searched like Search with the other rows masked out.
  [[nodiscard]] absl::StatusOr<std::vector<IndexHit>> SearchRows(
      std::span<const float> query, int k, const IndexFilter& filter,
      std::span<const int64_t> row_ids) const override;
  // One pass for both: the rows whose int8 upper bound reaches the main scan's tau (or every row's
  // float score) are offered to the top k of `filter` and to the top side_k of `side_filter`.
  [[nodiscard]] absl::StatusOr<std::vector<IndexHit>> SearchWithSide(
      std::span<const float> query, int k, const IndexFilter& filter, int side_k,
      const IndexFilter& side_filter, std::vector<IndexHit>* side) const override;

  // --- Index snapshots (store/index_snapshot.h): the arrays by position, as they are. ---
  size_t stride() const { return stride_; }
  struct ConstParts {
    std::span<const float> rows;  // size() * stride() floats, padding zero
    std::span<const int64_t> row_ids;
    std::span<const uint8_t> states, kinds;
    const Int8Rows* int8 = nullptr;  // null in ScanMode::kExact
  };
  ConstParts Parts() const;
  struct MutableParts {
    std::span<float> rows;
    std::span<int64_t> row_ids;
    std::span<uint8_t> states, kinds;
    // Empty spans in ScanMode::kExact.
    Int8Rows::MutableArrays int8;
  };
  // Restoring: drops every row, makes the index hold `rows` rows with every array zero (with room
  // for `capacity` >= rows rows, as Reserve) and returns the arrays for the caller to fill with
  // what Parts() of an index of the same dimension held. Then FinishRestore must be called before
  // any other call. ResourceExhausted if the memory cannot be had (the index is empty then).
  [[nodiscard]] absl::StatusOr<MutableParts> StartRestore(size_t rows, size_t capacity);
  // Checks the filled arrays and builds the row id map; `int8_filled`: the int8 arrays were filled
  // too (else, in kInt8Bounded mode, they are encoded from the rows here). InvalidArgument for a
  // state or kind outside its enumerators or a repeated row id: the index is empty then.
  [[nodiscard]] absl::Status FinishRestore(bool int8_filled);

 private:
  FlatIndex(int dimension, SimdLevel level, ScanMode mode);

  // The second top-k of a scan (SearchWithSide): the k >= 1 best rows `filter` accepts, into *hits.
  struct Side {
    size_t k = 0;
    IndexFilter filter;
    std::vector<IndexHit>* hits = nullptr;
  };

  // Checks the query and k; OK when a search may proceed.
  absl::Status CheckSearch(std::span<const float> query, int k) const;
  // Search over the rows that pass `filter` and, if `mask` is not null, have mask[position] == 1:
  // the bounded scan when it applies, else the exact scan. With `side`, the same pass also fills
  // side->hits (the rows side->filter accepts, same mask).
  std::vector<IndexHit> Scan(std::span<const float> query, size_t k, const IndexFilter& filter,
                             const uint8_t* mask, const Side* side = nullptr) const;
  // The two strategies behind Scan (see ScanMode); same preconditions, same results.
  std::vector<IndexHit> ExactScan(std::span<const float> query, size_t k, const IndexFilter& filter,
                                  const uint8_t* mask, const Side* side) const;
  std::vector<IndexHit> BoundedScan(std::span<const float> query, const Int8Query& prepared, size_t k,
                                    const IndexFilter& filter, const uint8_t* mask, const Side* side) const;
  uint32_t Passes(size_t position, const IndexFilter& filter, const uint8_t* mask) const {
    // Bits 0..31 of each word; State and Kind values are < 32 (checked on Add and SetState).
    return (filter.states >> states_[position]) & (filter.kinds >> kinds_[position]) & 1u &
           (mask == nullptr ? 1u : mask[position]);
  }

  const float* RowData(size_t position) const { return data_.data() + position * stride_; }
  float* RowData(size_t position) { return data_.data() + position * stride_; }

  const int dimension_;
  const size_t stride_;  // floats per stored row: dimension_ rounded up to a multiple of 16
  const InnerProductKernels* const kernels_;

  // By position, all of length size(); data_ holds size() * stride_ floats, padding zeroed.
  std::vector<float, CacheLineAllocator<float>> data_;
  std::vector<int64_t> row_ids_;
  std::vector<uint8_t> states_;                     // static_cast<uint8_t>(State)
  std::vector<uint8_t> kinds_;                      // static_cast<uint8_t>(Kind)
  absl::flat_hash_map<int64_t, size_t> positions_;  // row id -> position
  std::unique_ptr<Int8Rows> int8_;                  // by position as above; null in kExact mode
};

}  // namespace bulwark
