// Scalar, AVX2+FMA and AVX-512 inner-product kernels with run-time dispatch.
//
// The SIMD kernels carry GCC/Clang `target` attributes, so only they use the wider instructions and
// the rest of the library stays baseline x86-64. Every kernel scores R rows per pass over the query
// (R = 4, then R = 1 for the remainder) with two accumulators per row; the per-row sequence of
// operations is the same for every R, which makes `dot` and `dot_rows` bit-identical.
#include "index/inner_product.h"

#include <cstdint>

#include "index/simd_target.h"

namespace bulwark {
namespace {

// ---------------------------------------------------------------------------------------------
// Scalar reference: one float accumulator, in index order.

float DotScalar(const float* a, const float* b, size_t dim) {
  float sum = 0.0f;
  for (size_t i = 0; i < dim; ++i) sum += a[i] * b[i];
  return sum;
}

void DotRowsScalar(const float* query, const float* const* rows, size_t count, size_t dim, float* scores) {
  for (size_t r = 0; r < count; ++r) scores[r] = DotScalar(query, rows[r], dim);
}

#if BULWARK_X86

#define BULWARK_TARGET_AVX2 __attribute__((target("avx2,fma")))
#define BULWARK_TARGET_AVX512 __attribute__((target("avx512f")))

// Rows scored per pass over the query by `dot_rows`.
constexpr int kRowsPerPass = 4;

// ---------------------------------------------------------------------------------------------
// AVX2 + FMA: 8 floats per register, 16 per step (two accumulators per row), then one 8-float
// step, then a masked tail of fewer than 8 floats.

BULWARK_TARGET_AVX2 inline float HorizontalSum(__m256 v) {
  __m128 sum = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  __m128 shuffled = _mm_movehdup_ps(sum);
  sum = _mm_add_ps(sum, shuffled);
  shuffled = _mm_movehl_ps(shuffled, sum);
  return _mm_cvtss_f32(_mm_add_ss(sum, shuffled));
}

// Mask for _mm256_maskload_ps: loading 8 ints from kTailMask + 8 - n enables the first n lanes.
alignas(64) constexpr int32_t kTailMask[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

// scores[r] = <query, rows[r]> for r < R. Lines of next[r] are prefetched when kPrefetch.
template <int R, bool kPrefetch>
BULWARK_TARGET_AVX2 inline void DotBlockAvx2(const float* query, const float* const* rows,
                                             const float* const* next, size_t dim, float* scores) {
  __m256 acc0[R];
  __m256 acc1[R];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    acc0[r] = _mm256_setzero_ps();
    acc1[r] = _mm256_setzero_ps();
  }
  size_t i = 0;
  for (; i + 16 <= dim; i += 16) {
    const __m256 q0 = _mm256_loadu_ps(query + i);
    const __m256 q1 = _mm256_loadu_ps(query + i + 8);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      if constexpr (kPrefetch) {
        // One 64-byte line per 16 floats: the line of the next row at the same offset.
        _mm_prefetch(reinterpret_cast<const char*>(next[r] + i), _MM_HINT_T0);
      }
      acc0[r] = _mm256_fmadd_ps(q0, _mm256_loadu_ps(rows[r] + i), acc0[r]);
      acc1[r] = _mm256_fmadd_ps(q1, _mm256_loadu_ps(rows[r] + i + 8), acc1[r]);
    }
  }
  if (i + 8 <= dim) {
    const __m256 q0 = _mm256_loadu_ps(query + i);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) acc0[r] = _mm256_fmadd_ps(q0, _mm256_loadu_ps(rows[r] + i), acc0[r]);
    i += 8;
  }
  if (i < dim) {
    const __m256i mask = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kTailMask + 8 - (dim - i)));
    const __m256 q0 = _mm256_maskload_ps(query + i, mask);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) acc1[r] = _mm256_fmadd_ps(q0, _mm256_maskload_ps(rows[r] + i, mask), acc1[r]);
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) scores[r] = HorizontalSum(_mm256_add_ps(acc0[r], acc1[r]));
}

BULWARK_TARGET_AVX2 float DotAvx2(const float* a, const float* b, size_t dim) {
  float score;
  DotBlockAvx2<1, false>(a, &b, &b, dim, &score);
  return score;
}

BULWARK_TARGET_AVX2 void DotRowsAvx2(const float* query, const float* const* rows, size_t count, size_t dim,
                                     float* scores) {
  size_t r = 0;
  for (; r + kRowsPerPass <= count; r += kRowsPerPass) {
    // Prefetch the next group; the last group "prefetches" itself, which is harmless.
    const float* const* next = r + 2 * kRowsPerPass <= count ? rows + r + kRowsPerPass : rows + r;
    DotBlockAvx2<kRowsPerPass, true>(query, rows + r, next, dim, scores + r);
  }
  for (; r < count; ++r) DotBlockAvx2<1, false>(query, rows + r, rows + r, dim, scores + r);
}

// ---------------------------------------------------------------------------------------------
// AVX-512F: 16 floats per register, 32 per step (two accumulators per row, i.e. two cache lines of
// each row), then one 16-float step, then a masked tail of fewer than 16 floats.

// Sum of the 16 lanes in a fixed order. Written with the zero-masked extract because GCC 12 warns
// (-Wuninitialized, a false positive) inside _mm512_reduce_add_ps and the unmasked shuffles.
BULWARK_TARGET_AVX512 inline float HorizontalSum(__m512 v) {
  const __m512d as_pd = _mm512_castps_pd(v);
  const __m256 sum8 = _mm256_add_ps(_mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xff, as_pd, 0)),
                                    _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xff, as_pd, 1)));
  __m128 sum = _mm_add_ps(_mm256_castps256_ps128(sum8), _mm256_extractf128_ps(sum8, 1));
  __m128 shuffled = _mm_movehdup_ps(sum);
  sum = _mm_add_ps(sum, shuffled);
  shuffled = _mm_movehl_ps(shuffled, sum);
  return _mm_cvtss_f32(_mm_add_ss(sum, shuffled));
}

template <int R, bool kPrefetch>
BULWARK_TARGET_AVX512 inline void DotBlockAvx512(const float* query, const float* const* rows,
                                                 const float* const* next, size_t dim, float* scores) {
  __m512 acc0[R];
  __m512 acc1[R];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    acc0[r] = _mm512_setzero_ps();
    acc1[r] = _mm512_setzero_ps();
  }
  size_t i = 0;
  for (; i + 32 <= dim; i += 32) {
    const __m512 q0 = _mm512_loadu_ps(query + i);
    const __m512 q1 = _mm512_loadu_ps(query + i + 16);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      if constexpr (kPrefetch) {
        _mm_prefetch(reinterpret_cast<const char*>(next[r] + i), _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char*>(next[r] + i + 16), _MM_HINT_T0);
      }
      acc0[r] = _mm512_fmadd_ps(q0, _mm512_loadu_ps(rows[r] + i), acc0[r]);
      acc1[r] = _mm512_fmadd_ps(q1, _mm512_loadu_ps(rows[r] + i + 16), acc1[r]);
    }
  }
  if (i + 16 <= dim) {
    const __m512 q0 = _mm512_loadu_ps(query + i);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) acc0[r] = _mm512_fmadd_ps(q0, _mm512_loadu_ps(rows[r] + i), acc0[r]);
    i += 16;
  }
  if (i < dim) {
    // Masked-off lanes are neither loaded nor able to fault.
    const __mmask16 mask = static_cast<__mmask16>((1u << (dim - i)) - 1u);
    const __m512 q0 = _mm512_maskz_loadu_ps(mask, query + i);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      acc1[r] = _mm512_fmadd_ps(q0, _mm512_maskz_loadu_ps(mask, rows[r] + i), acc1[r]);
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) scores[r] = HorizontalSum(_mm512_add_ps(acc0[r], acc1[r]));
}

BULWARK_TARGET_AVX512 float DotAvx512(const float* a, const float* b, size_t dim) {
  float score;
  DotBlockAvx512<1, false>(a, &b, &b, dim, &score);
  return score;
}

BULWARK_TARGET_AVX512 void DotRowsAvx512(const float* query, const float* const* rows, size_t count,
                                         size_t dim, float* scores) {
  size_t r = 0;
  for (; r + kRowsPerPass <= count; r += kRowsPerPass) {
    const float* const* next = r + 2 * kRowsPerPass <= count ? rows + r + kRowsPerPass : rows + r;
    DotBlockAvx512<kRowsPerPass, true>(query, rows + r, next, dim, scores + r);
  }
  for (; r < count; ++r) DotBlockAvx512<1, false>(query, rows + r, rows + r, dim, scores + r);
}

#endif  // BULWARK_X86

constexpr InnerProductKernels kScalarKernels{SimdLevel::kScalar, &DotScalar, &DotRowsScalar};
#if BULWARK_X86
constexpr InnerProductKernels kAvx2Kernels{SimdLevel::kAvx2, &DotAvx2, &DotRowsAvx2};
constexpr InnerProductKernels kAvx512Kernels{SimdLevel::kAvx512, &DotAvx512, &DotRowsAvx512};
#endif

}  // namespace

std::string_view ToString(SimdLevel level) {
  switch (level) {
    case SimdLevel::kScalar:
      return "scalar";
    case SimdLevel::kAvx2:
      return "avx2";
    case SimdLevel::kAvx512:
      return "avx512";
  }
  return "unknown";
}

bool CpuSupports(SimdLevel level) {
#if BULWARK_X86
  // libgcc's CPU model also checks (via XGETBV) that the OS saves the wider registers.
  __builtin_cpu_init();
  switch (level) {
    case SimdLevel::kScalar:
      return true;
    case SimdLevel::kAvx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case SimdLevel::kAvx512:
      return __builtin_cpu_supports("avx512f");
  }
  return false;
#else
  return level == SimdLevel::kScalar;
#endif
}

SimdLevel BestSimdLevel() {
  static const SimdLevel best = [] {
    if (CpuSupports(SimdLevel::kAvx512)) return SimdLevel::kAvx512;
    if (CpuSupports(SimdLevel::kAvx2)) return SimdLevel::kAvx2;
    return SimdLevel::kScalar;
  }();
  return best;
}

const InnerProductKernels& BestKernels() {
  static const InnerProductKernels& kernels = KernelsFor(BestSimdLevel());
  return kernels;
}

const InnerProductKernels& KernelsFor(SimdLevel level) {
#if BULWARK_X86
  switch (level) {
    case SimdLevel::kScalar:
      return kScalarKernels;
    case SimdLevel::kAvx2:
      return kAvx2Kernels;
    case SimdLevel::kAvx512:
      return kAvx512Kernels;
  }
#endif
  return kScalarKernels;
}

}  // namespace bulwark
