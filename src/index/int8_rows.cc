// Int8Rows: quantization of rows and queries with measured residuals, and the block kernels
// (portable scalar, AVX-512 VNNI) that turn int8 dot products into float32 score bounds. The
// derivation of the bound is in int8_rows.h; both kernels evaluate the same formula.
#include "index/int8_rows.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "index/simd_target.h"

namespace bulwark {
namespace {

// Magnitudes beyond this are not quantized (products of two such values, summed over 2^16
// coordinates, stay far below FLT_MAX = 2^128).
constexpr double kMaxBoundedMagnitude = 0x1p50;
// Relative and absolute widening of every bound (see int8_rows.h).
constexpr float kRelativeSlack = 0x1p-18f;
constexpr float kAbsoluteSlack = 0x1p-100f;
// How many blocks ahead the VNNI kernel prefetches the query's lines.
constexpr size_t kPrefetchBlocks = 3;
// Covers the rounding of the double-precision sums of squares behind the stored norms.
constexpr double kNormSlack = 1.0 + 0x1p-30;

// The smallest float >= v (v >= 0, finite).
float RoundUp(double v) {
  float f = static_cast<float>(v);
  if (static_cast<double>(f) < v) f = std::nextafter(f, std::numeric_limits<float>::infinity());
  return f;
}

// Max |v_i|, or +inf if some value is not finite.
double MaxMagnitude(std::span<const float> v) {
  double max = 0;
  for (float x : v) {
    if (!std::isfinite(x)) return std::numeric_limits<double>::infinity();
    max = std::max(max, static_cast<double>(std::fabs(x)));
  }
  return max;
}

// The bounds of one row from its integer dot product (the scalar kernel; the VNNI kernel evaluates
// the same operations 16 rows at a time).
inline void RowBounds(int32_t dot, float scale, float row_norm, float err_norm, const Int8Query& q,
                      float* lower, float* upper) {
  const float approx = static_cast<float>(dot) * (scale * q.scale);
  const float eps = row_norm * q.row_term + err_norm * q.err_term;
  const float wide = eps * (1.0f + kRelativeSlack) + std::fabs(approx) * kRelativeSlack + kAbsoluteSlack;
  *lower = approx - wide;
  *upper = approx + wide;
}

#if BULWARK_X86
#define BULWARK_TARGET_VNNI __attribute__((target("avx512f,avx512vnni")))

// acc[m] lane l += w * (byte m of lane l of each listed line), i.e. row 16m+l of the block: the
// weight w sits in byte m of every 32-bit lane of the broadcast, the other three bytes are zero.
BULWARK_TARGET_VNNI inline void AccumulateVnni(const int8_t* block, const int8_t* prefetch,
                                               const uint32_t* dims, const uint32_t* weights, size_t count,
                                               __m512i* acc) {
  for (size_t j = 0; j < count; ++j) {
    _mm_prefetch(
        reinterpret_cast<const char*>(prefetch + static_cast<size_t>(dims[j]) * Int8Rows::kBlockRows),
        _MM_HINT_T0);
    const __m512i line = _mm512_load_si512(block + static_cast<size_t>(dims[j]) * Int8Rows::kBlockRows);
    const uint32_t w = weights[j];
    acc[0] = _mm512_dpbusd_epi32(acc[0], _mm512_set1_epi32(static_cast<int>(w)), line);
    acc[1] = _mm512_dpbusd_epi32(acc[1], _mm512_set1_epi32(static_cast<int>(w << 8)), line);
    acc[2] = _mm512_dpbusd_epi32(acc[2], _mm512_set1_epi32(static_cast<int>(w << 16)), line);
    acc[3] = _mm512_dpbusd_epi32(acc[3], _mm512_set1_epi32(static_cast<int>(w << 24)), line);
  }
}

// Integer dot products of 64 rows, four registers of 16 consecutive rows each, then the bounds;
// returns the mask of rows whose upper bound is not below `threshold` (NaN included).
BULWARK_TARGET_VNNI uint64_t BlockBoundsVnni(const int8_t* block, const int8_t* prefetch, const Int8Query& q,
                                             const float* scales, const float* row_norms,
                                             const float* err_norms, float threshold, float* lower,
                                             float* upper) {
  __m512i pos[4], neg[4];
  for (int m = 0; m < 4; ++m) pos[m] = neg[m] = _mm512_setzero_si512();
  AccumulateVnni(block, prefetch, q.dims.data(), q.weights.data(), q.positive, pos);
  AccumulateVnni(block, prefetch, q.dims.data() + q.positive, q.weights.data() + q.positive,
                 q.dims.size() - q.positive, neg);

  const __m512 query_scale = _mm512_set1_ps(q.scale);
  const __m512 row_term = _mm512_set1_ps(q.row_term);
  const __m512 err_term = _mm512_set1_ps(q.err_term);
  const __m512 widen = _mm512_set1_ps(1.0f + kRelativeSlack);
  const __m512 relative = _mm512_set1_ps(kRelativeSlack);
  const __m512 absolute = _mm512_set1_ps(kAbsoluteSlack);
  const __m512 tau = _mm512_set1_ps(threshold);
  uint64_t reaching = 0;
  for (int m = 0; m < 4; ++m) {
    const size_t r = 16 * static_cast<size_t>(m);
    // The zero-masked conversion sidesteps a GCC 12 -Wuninitialized false positive in the unmasked one.
    const __m512 dot = _mm512_maskz_cvtepi32_ps(0xffff, _mm512_sub_epi32(pos[m], neg[m]));
    const __m512 approx = _mm512_mul_ps(dot, _mm512_mul_ps(_mm512_loadu_ps(scales + r), query_scale));
    const __m512 eps = _mm512_add_ps(_mm512_mul_ps(_mm512_loadu_ps(row_norms + r), row_term),
                                     _mm512_mul_ps(_mm512_loadu_ps(err_norms + r), err_term));
    const __m512 wide = _mm512_add_ps(
        _mm512_add_ps(_mm512_mul_ps(eps, widen), _mm512_mul_ps(_mm512_abs_ps(approx), relative)), absolute);
    const __m512 high = _mm512_add_ps(approx, wide);
    _mm512_storeu_ps(lower + r, _mm512_sub_ps(approx, wide));
    _mm512_storeu_ps(upper + r, high);
    reaching |= static_cast<uint64_t>(_mm512_cmp_ps_mask(high, tau, _CMP_NLT_UQ)) << r;
  }
  return reaching;
}
#endif  // BULWARK_X86

}  // namespace

Int8Rows::Int8Rows(size_t dimension, bool use_vnni)
    : dimension_(dimension), use_vnni_(use_vnni && CpuHasVnni()), gamma_([dimension] {
        const double g = static_cast<double>(dimension + 8) * 0x1p-24;
        return RoundUp(g / (1.0 - g));
      }()) {}

bool Int8Rows::CpuHasVnni() {
#if BULWARK_X86
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vnni");
#else
  return false;
#endif
}

void Int8Rows::Reserve(size_t rows) {
  const size_t blocks = (rows + kBlockRows - 1) / kBlockRows;
  lines_.reserve(blocks * dimension_);
  scales_.reserve(blocks * kBlockRows);
  row_norms_.reserve(blocks * kBlockRows);
  err_norms_.reserve(blocks * kBlockRows);
}

namespace {
template <typename T>
std::span<const std::byte> Bytes(const std::vector<T>& v) {
  return std::as_bytes(std::span<const T>(v));
}
template <typename T>
std::span<std::byte> MutableBytes(std::vector<T>& v) {
  return std::as_writable_bytes(std::span<T>(v));
}
}  // namespace

Int8Rows::ConstArrays Int8Rows::Arrays() const {
  return {Bytes(lines_), Bytes(scales_), Bytes(row_norms_), Bytes(err_norms_)};
}

Int8Rows::MutableArrays Int8Rows::ResizeForRestore(size_t rows, size_t capacity) {
  Clear();
  Reserve(std::max(rows, capacity));
  const size_t blocks = (rows + kBlockRows - 1) / kBlockRows;
  EnsureBlocks(blocks);
  size_ = rows;
  return {MutableBytes(lines_), MutableBytes(scales_), MutableBytes(row_norms_), MutableBytes(err_norms_)};
}

void Int8Rows::EnsureBlocks(size_t blocks) {
  lines_.resize(blocks * dimension_, Line{});
  scales_.resize(blocks * kBlockRows, 0.0f);
  row_norms_.resize(blocks * kBlockRows, 0.0f);
  err_norms_.resize(blocks * kBlockRows, 0.0f);
}

void Int8Rows::Append(std::span<const float> vector) {
  EnsureBlocks(size_ / kBlockRows + 1);
  Encode(size_, vector);
  ++size_;
}

void Int8Rows::Set(size_t position, std::span<const float> vector) { Encode(position, vector); }

void Int8Rows::Clear() {
  size_ = 0;
  EnsureBlocks(0);
}

void Int8Rows::Encode(size_t position, std::span<const float> vector) {
  Line* block = lines_.data() + position / kBlockRows * dimension_;
  const size_t lane = Lane(position % kBlockRows);
  const double max = MaxMagnitude(vector);
  float scale = 0, row_norm = 0, err_norm = 0;
  if (!(max <= kMaxBoundedMagnitude)) {
    row_norm = std::numeric_limits<float>::infinity();  // never bounded: always scored exactly
    for (size_t j = 0; j < dimension_; ++j) block[j].bytes[lane] = 0;
  } else {
    // scale is 0 for a zero row and for one so tiny that max / 127 underflows; then every code is
    // 0 and the residual is the row itself.
    scale = static_cast<float>(max / 127.0);
    int64_t codes2 = 0;
    double err2 = 0;
    for (size_t j = 0; j < dimension_; ++j) {
      const double x = vector[j];
      const double code = scale > 0 ? std::clamp(std::nearbyint(x / scale), -127.0, 127.0) : 0.0;
      block[j].bytes[lane] = static_cast<int8_t>(code);
      codes2 += static_cast<int64_t>(code * code);
      const double err = x - code * scale;  // exact: scale has 24 significant bits, code 8
      err2 += err * err;
    }
    row_norm = RoundUp(static_cast<double>(scale) * std::sqrt(static_cast<double>(codes2)) * kNormSlack);
    err_norm = RoundUp(std::sqrt(err2) * kNormSlack);
  }
  scales_[position] = scale;
  row_norms_[position] = row_norm;
  err_norms_[position] = err_norm;
}

void Int8Rows::RemoveBySwap(size_t hole) {
  const size_t last = size_ - 1;
  Line* last_block = lines_.data() + last / kBlockRows * dimension_;
  const size_t last_lane = Lane(last % kBlockRows);
  if (hole != last) {
    Line* hole_block = lines_.data() + hole / kBlockRows * dimension_;
    const size_t hole_lane = Lane(hole % kBlockRows);
    for (size_t j = 0; j < dimension_; ++j) hole_block[j].bytes[hole_lane] = last_block[j].bytes[last_lane];
    scales_[hole] = scales_[last];
    row_norms_[hole] = row_norms_[last];
    err_norms_[hole] = err_norms_[last];
  }
  for (size_t j = 0; j < dimension_; ++j) last_block[j].bytes[last_lane] = 0;
  scales_[last] = row_norms_[last] = err_norms_[last] = 0;
  --size_;
  EnsureBlocks(blocks());  // drops a block that became empty
}

Int8Query Int8Rows::PrepareQuery(std::span<const float> query) const {
  Int8Query q;
  const double max = MaxMagnitude(query);
  if (!(max <= kMaxBoundedMagnitude)) return q;
  q.usable = true;
  if (max > 0) q.scale = static_cast<float>(max / 255.0);
  // Positive coordinates fill the lists from the front, negative ones from the back.
  const size_t nonzero =
      static_cast<size_t>(std::count_if(query.begin(), query.end(), [](float x) { return x != 0; }));
  q.dims.resize(nonzero);
  q.weights.resize(nonzero);
  size_t front = 0, back = nonzero;
  double query2 = 0, residual2 = 0;
  for (size_t j = 0; j < query.size(); ++j) {
    const double x = query[j];
    if (x == 0) continue;  // most coordinates of a lexical query
    query2 += x * x;
    // Round half up (floor(v + 0.5): inlined, unlike nearbyint); any rounding is fine, since the
    // residual is measured.
    const double magnitude = q.scale > 0 ? std::min(std::floor(std::fabs(x) / q.scale + 0.5), 255.0) : 0.0;
    const double residual = x - std::copysign(magnitude * q.scale, x);  // exact, as in Append
    residual2 += residual * residual;
    if (magnitude == 0) continue;
    const size_t slot = x > 0 ? front++ : --back;
    q.dims[slot] = static_cast<uint32_t>(j);
    q.weights[slot] = static_cast<uint32_t>(magnitude);
  }
  // Close the gap left by coordinates whose magnitude rounded to 0.
  q.dims.erase(q.dims.begin() + static_cast<ptrdiff_t>(front), q.dims.begin() + static_cast<ptrdiff_t>(back));
  q.weights.erase(q.weights.begin() + static_cast<ptrdiff_t>(front),
                  q.weights.begin() + static_cast<ptrdiff_t>(back));
  q.positive = front;
  const double query_norm = std::sqrt(query2) * kNormSlack;
  const double gamma = gamma_;
  q.row_term = RoundUp((std::sqrt(residual2) * kNormSlack + gamma * query_norm) * kNormSlack);
  q.err_term = RoundUp((1.0 + gamma) * query_norm * kNormSlack);
  return q;
}

uint64_t Int8Rows::Bounds(const Int8Query& q, size_t block, float threshold, float* lower,
                          float* upper) const {
  const size_t first = block * kBlockRows;
  const Line* lines = lines_.data() + block * dimension_;
  // Rows past size() in the last block are never reported.
  const size_t rows = std::min(kBlockRows, size_ - first);
  const uint64_t existing = rows == kBlockRows ? ~uint64_t{0} : (uint64_t{1} << rows) - 1;
#if BULWARK_X86
  if (use_vnni_) {
    // The lines of the block after next are fetched meanwhile: the query's lines are scattered
    // over the block, which the hardware prefetchers do not follow.
    const size_t ahead = std::min(block + kPrefetchBlocks, blocks() - 1);
    return existing & BlockBoundsVnni(lines[0].bytes, lines_[ahead * dimension_].bytes, q,
                                      scales_.data() + first, row_norms_.data() + first,
                                      err_norms_.data() + first, threshold, lower, upper);
  }
#endif
  int32_t dots[kBlockRows] = {};
  for (size_t j = 0; j < q.dims.size(); ++j) {
    const int8_t* line = lines[q.dims[j]].bytes;
    const int32_t w =
        j < q.positive ? static_cast<int32_t>(q.weights[j]) : -static_cast<int32_t>(q.weights[j]);
    for (size_t r = 0; r < kBlockRows; ++r) dots[r] += w * line[Lane(r)];
  }
  uint64_t reaching = 0;
  for (size_t r = 0; r < kBlockRows; ++r) {
    RowBounds(dots[r], scales_[first + r], row_norms_[first + r], err_norms_[first + r], q, &lower[r],
              &upper[r]);
    reaching |= static_cast<uint64_t>(!(upper[r] < threshold)) << r;
  }
  return existing & reaching;
}

}  // namespace bulwark
