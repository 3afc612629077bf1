// ||W v||^2 for lower-triangular W (see triangular_norm.h).
#include "gate/triangular_norm.h"

#include "index/inner_product.h"

#ifdef __x86_64__
#include <immintrin.h>
#endif

namespace bulwark {

size_t PackedTriangularFloats(size_t padded) {
  const size_t n = padded / 16;
  return 256 * n * (n + 1) / 2;
}

void PackLowerTriangular(const float* w, size_t d, float* packed) {
  const size_t padded = (d + 15) / 16 * 16;
  float* tile = packed;
  for (size_t b = 0; b < padded; b += 16) {
    for (size_t c = 0; c <= b; c += 16, tile += 256) {
      for (size_t i = 0; i < 16; ++i) {
        for (size_t j = 0; j < 16; ++j) {
          const size_t row = b + i, column = c + j;
          tile[16 * i + j] = (row < d && column <= row) ? w[row * d + column] : 0.0f;
        }
      }
    }
  }
}

double TriangularSquaredNormScalar(const float* packed, const float* v, size_t padded) {
  double total = 0;
  const float* tile = packed;
  for (size_t b = 0; b < padded; b += 16) {
    double p[16] = {};
    for (size_t c = 0; c <= b; c += 16, tile += 256) {
      for (size_t i = 0; i < 16; ++i) {
        for (size_t j = 0; j < 16; ++j) p[i] += double(tile[16 * i + j]) * v[c + j];
      }
    }
    for (double x : p) total += x * x;
  }
  return total;
}

#ifdef __x86_64__
namespace {

#define BULWARK_TARGET_AVX512 __attribute__((target("avx512f")))

// GCC 12 warns about the deliberately undefined pass-through operand inside its own
// _mm512_shuffle_f32x4 (a false positive of -Wmaybe-uninitialized).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

// 16 accumulators -> one vector whose 16 lanes are their 16 horizontal sums, in some order (only
// the sum of squares is wanted). Each level halves the width of the partial sums per row and
// packs twice as many rows per register.
BULWARK_TARGET_AVX512 inline __m512 SumsOf16(const __m512* a) {
  __m512 t[8], u[4], w[2];
  for (int i = 0; i < 8; ++i) {  // 256-bit halves: rows i and i+8, 8 partials each
    t[i] =
        _mm512_add_ps(_mm512_shuffle_f32x4(a[i], a[i + 8], 0x44), _mm512_shuffle_f32x4(a[i], a[i + 8], 0xEE));
  }
  for (int i = 0; i < 4; ++i) {  // 128-bit quarters: four rows, 4 partials each
    u[i] =
        _mm512_add_ps(_mm512_shuffle_f32x4(t[i], t[i + 4], 0x88), _mm512_shuffle_f32x4(t[i], t[i + 4], 0xDD));
  }
  for (int i = 0; i < 2; ++i) {  // pairs of lanes: eight rows, 2 partials each
    w[i] = _mm512_add_ps(_mm512_shuffle_ps(u[i], u[i + 2], 0x44), _mm512_shuffle_ps(u[i], u[i + 2], 0xEE));
  }
  return _mm512_add_ps(_mm512_shuffle_ps(w[0], w[1], 0x88), _mm512_shuffle_ps(w[0], w[1], 0xDD));
}

// Block row b (rows [b, b+16)) has tiles for the columns [0, b+16) only: 16 rows per load of v,
// the tiles read in storage order.
BULWARK_TARGET_AVX512 double TriangularSquaredNormAvx512(const float* packed, const float* v, size_t padded) {
  __m512 total = _mm512_setzero_ps();
  const float* tile = packed;
  for (size_t b = 0; b < padded; b += 16) {
    __m512 acc[16];
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i) acc[i] = _mm512_setzero_ps();
    for (size_t c = 0; c <= b; c += 16, tile += 256) {
      const __m512 q = _mm512_load_ps(v + c);
#pragma GCC unroll 16
      for (int i = 0; i < 16; ++i) acc[i] = _mm512_fmadd_ps(_mm512_load_ps(tile + 16 * i), q, acc[i]);
    }
    const __m512 sums = SumsOf16(acc);
    total = _mm512_fmadd_ps(sums, sums, total);
  }
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, total);
  double sum = 0;
  for (float x : lanes) sum += x;
  return sum;
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

const TriangularSquaredNormKernel kAvx512 = {&TriangularSquaredNormAvx512};

}  // namespace
#endif

const TriangularSquaredNormKernel* Avx512TriangularSquaredNorm() {
#ifdef __x86_64__
  if (CpuSupports(SimdLevel::kAvx512)) return &kAvx512;
#endif
  return nullptr;
}

const TriangularSquaredNormKernel& BestTriangularSquaredNorm() {
  static const TriangularSquaredNormKernel kScalar = {&TriangularSquaredNormScalar};
  static const TriangularSquaredNormKernel* best = Avx512TriangularSquaredNorm();
  return best != nullptr ? *best : kScalar;
}

}  // namespace bulwark
