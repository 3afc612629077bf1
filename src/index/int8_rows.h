// Int8Rows: a compact int8 copy of FlatIndex's float rows that bounds every row's float32 score,
// so an exact top-k needs float32 scores only for the rows that can still reach the top k
// (doc/index.md, "Bounded int8 pre-scan").
//
// Quantization. Row x (d floats) is stored as codes c_i = round(x_i / s) in [-127, 127] with one
// scale s = max_i |x_i| / 127 per row, so x = s*c + e with a residual e that is measured, not
// assumed: the row keeps r1 >= s*||c||_2 and r2 >= ||e||_2 (both rounded up). A query q is split
// the same way into magnitudes m_i = round(|q_i| / t) in [0, 255] (t = max |q_i| / 255), signs,
// and a residual f, with ||f||_2 and ||q||_2 computed exactly enough to round up.
//
// Bound. With t_x = sum_i q_i x_i and a_x = s*t * sum_i sign_i m_i c_i (exact integer arithmetic):
//   |t_x - a_x| <= s*||c||*||f|| + ||e||*||q||                       (Cauchy-Schwarz, twice)
// and any float32 summation of q_i x_i (FlatIndex's kernels, whatever their order) is within
//   gamma * ||q|| * ||x||,  gamma = (d+8)u / (1-(d+8)u),  u = 2^-24,   ||x|| <= r1 + r2
// of t_x. So the float32 score lies in [a_x - eps_x, a_x + eps_x] with
//   eps_x = r1*(||f|| + gamma*||q||) + r2*(1+gamma)*||q||,
// widened by 2^-18 relative plus 2^-100 absolute to cover the rounding of this float arithmetic
// itself and underflow. Rows with a non-finite value or a value beyond 2^50 in magnitude (where
// products could overflow) get the bounds [-inf, +inf]: they are always scored exactly.
//
// Layout. Rows are grouped in blocks of kBlockRows = 64 positions. A block is d lines of 64 bytes,
// line j holding coordinate j of the block's 64 rows, so a query touches only the lines of its
// nonzero coordinates (a lexical query has about 50 of 384) and each line feeds 64 rows. Within a
// line, row r of the block sits at byte 4*(r % 16) + r / 16: one AVX-512 VNNI multiply-add per
// byte lane of the query weight then yields 16 consecutive rows in one register.
//
// Thread safety: as FlatIndex. Mutations must not run concurrently with anything; const calls may.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <span>
#include <vector>

namespace bulwark {

// A query prepared for Int8Rows::Bounds. Build it with Int8Rows::PrepareQuery.
struct Int8Query {
  // False when the query has a non-finite value or one beyond 2^50 in magnitude; Bounds must not
  // be used then (the caller scores every row exactly).
  bool usable = false;
  // Coordinates with a nonzero weight: the `positive` ones with q_i > 0 first, then those with
  // q_i < 0; weights[j] is the magnitude m of dims[j], 1 .. 255.
  std::vector<uint32_t> dims;
  std::vector<uint32_t> weights;
  size_t positive = 0;
  float scale = 0;     // t
  float row_term = 0;  // multiplies r1: ||f|| + gamma*||q||, rounded up
  float err_term = 0;  // multiplies r2: (1+gamma)*||q||, rounded up
};

class Int8Rows {
 public:
  static constexpr size_t kBlockRows = 64;

  // Rows of `dimension` floats; `use_vnni` selects the AVX-512 VNNI kernel (the caller checks
  // Int8Rows::CpuHasVnni()), otherwise the portable scalar kernel computes the same bounds.
  Int8Rows(size_t dimension, bool use_vnni);

  // True if this CPU and OS run AVX-512F + AVX-512 VNNI.
  static bool CpuHasVnni();

  size_t size() const { return size_; }
  bool uses_vnni() const { return use_vnni_; }

  // Preallocates room for `rows` rows. Throws std::bad_alloc (the caller maps it to a status).
  void Reserve(size_t rows);
  // Appends row `vector` (dimension() floats) at position size().
  void Append(std::span<const float> vector);
  // Replaces the row at `position` (< size()) with `vector`.
  void Set(size_t position, std::span<const float> vector);
  // Drops every row.
  void Clear();
  // Moves the last row to position `hole` (overwriting it) and drops the last position: the
  // swap-remove of FlatIndex::Remove. Precondition: hole < size().
  void RemoveBySwap(size_t hole);

  Int8Query PrepareQuery(std::span<const float> query) const;

  // Bounds on the float32 score of the rows of block `block` (positions 64*block .. 64*block+63)
  // against the query: lower[r] <= score <= upper[r] for every row r that exists; positions past
  // size() get unspecified values. NaN marks a bound that is not known (the caller treats it as
  // -inf for lower and +inf for upper). Returns the bit mask of existing rows r whose upper[r] is
  // not below `threshold` (bit r; NaN counts as reaching it). Precondition: query.usable.
  uint64_t Bounds(const Int8Query& query, size_t block, float threshold, float* lower, float* upper) const;

  size_t blocks() const { return (size_ + kBlockRows - 1) / kBlockRows; }

  // The arrays behind the rows, for index snapshots (store/index_snapshot.h): `lines` holds
  // blocks() * dimension lines of kBlockRows bytes, each of the others blocks() * kBlockRows floats
  // (positions past size() zero).
  struct ConstArrays {
    std::span<const std::byte> lines, scales, row_norms, err_norms;
  };
  struct MutableArrays {
    std::span<std::byte> lines, scales, row_norms, err_norms;
  };
  ConstArrays Arrays() const;
  // Drops every row, then makes the arrays those of `rows` rows, all zero, and returns them for the
  // caller to fill with what Arrays() of rows of the same dimension held (with room for
  // `capacity` >= rows rows). Throws std::bad_alloc (the caller maps it to a status).
  MutableArrays ResizeForRestore(size_t rows, size_t capacity);

 private:
  struct alignas(64) Line {
    int8_t bytes[kBlockRows];
  };

  // Byte offset of row r within a line (see the layout note above).
  static size_t Lane(size_t r) { return 4 * (r % 16) + r / 16; }
  void EnsureBlocks(size_t blocks);
  // Writes the codes, scale and norms of `vector` at `position` (its block must exist).
  void Encode(size_t position, std::span<const float> vector);

  const size_t dimension_;
  const bool use_vnni_;
  const float gamma_;  // float32 dot-product error factor for this dimension, see above
  size_t size_ = 0;
  // blocks() * dimension_ lines; lines of positions >= size_ are zero.
  std::vector<Line> lines_;
  // By position, each padded to a multiple of kBlockRows with zeros.
  std::vector<float> scales_;     // s
  std::vector<float> row_norms_;  // r1 >= s*||c||, +inf for a row that cannot be bounded
  std::vector<float> err_norms_;  // r2 >= ||e||
};

}  // namespace bulwark
