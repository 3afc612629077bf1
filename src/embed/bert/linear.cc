// The Eigen and AVX2+FMA kernels of Linear (see linear.h) and the run-time choice between them.
#include "embed/bert/linear.h"

#include <algorithm>
#include <cstdint>

#include "index/inner_product.h"
#include "index/simd_target.h"

namespace bulwark::bert {
namespace {

void LinearEigen(const RowMatrix& x, const RowMatrix& weight, const RowVector& bias, RowMatrix* out) {
  out->noalias() = x * weight.transpose();
  out->rowwise() += bias;
}

#if BULWARK_X86

#define BULWARK_BERT_AVX2 __attribute__((target("avx2,fma")))

// Rows of W per panel: 48 rows of 1536 floats (the feed-forward's widest input) are 288 KiB, so a
// panel stays in L2 while every row block of x streams past it.
constexpr int64_t kPanelRows = 48;

BULWARK_BERT_AVX2 inline float SumLanes(__m256 v) {
  __m128 sum = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  __m128 shuffled = _mm_movehdup_ps(sum);
  sum = _mm_add_ps(sum, shuffled);
  shuffled = _mm_movehl_ps(shuffled, sum);
  return _mm_cvtss_f32(_mm_add_ss(sum, shuffled));
}

// out[r * ldo + c] = <x row r, w row c> for r < R, c < C, rows of k floats; 8 floats per step,
// then a scalar tail of k % 8. The small loops must be fully unrolled so that the R x C
// accumulators live in registers: without the pragmas GCC keeps them on the stack and the kernel
// is slower than Eigen's.
template <int R, int C>
BULWARK_BERT_AVX2 inline void DotBlock(const float* x, int64_t ldx, const float* w, int64_t ldw, int64_t k,
                                       float* out, int64_t ldo) {
  __m256 acc[R][C];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) acc[r][c] = _mm256_setzero_ps();
  }
  int64_t i = 0;
  for (; i + 8 <= k; i += 8) {
    __m256 wv[C];
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) wv[c] = _mm256_loadu_ps(w + c * ldw + i);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const __m256 xv = _mm256_loadu_ps(x + r * ldx + i);
#pragma GCC unroll 4
      for (int c = 0; c < C; ++c) acc[r][c] = _mm256_fmadd_ps(xv, wv[c], acc[r][c]);
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) {
      float sum = SumLanes(acc[r][c]);
      for (int64_t j = i; j < k; ++j) sum += x[r * ldx + j] * w[c * ldw + j];
      out[r * ldo + c] = sum;
    }
  }
}

// Columns [c0, c1) of out for rows [r0, r0 + R): blocks of 3 columns, then single columns.
template <int R>
BULWARK_BERT_AVX2 void RowBlock(const float* x, int64_t k, const float* w, int64_t c0, int64_t c1, float* out,
                                int64_t m) {
  int64_t c = c0;
  for (; c + 3 <= c1; c += 3) DotBlock<R, 3>(x, k, w + c * k, k, k, out + c, m);
  for (; c < c1; ++c) DotBlock<R, 1>(x, k, w + c * k, k, k, out + c, m);
}

// out[n, m] = x[n, k] * w[m, k]^T, all row-major and contiguous.
BULWARK_BERT_AVX2 void LinearAvx2(const float* x, int64_t n, int64_t k, const float* w, int64_t m,
                                  float* out) {
  for (int64_t c0 = 0; c0 < m; c0 += kPanelRows) {
    const int64_t c1 = std::min(m, c0 + kPanelRows);
    int64_t r = 0;
    for (; r + 4 <= n; r += 4) RowBlock<4>(x + r * k, k, w, c0, c1, out + r * m, m);
    for (; r < n; ++r) RowBlock<1>(x + r * k, k, w, c0, c1, out + r * m, m);
  }
}

#endif  // BULWARK_X86

}  // namespace

LinearKernel BestLinearKernel() {
  static const LinearKernel best = CpuSupports(SimdLevel::kAvx2) ? LinearKernel::kAvx2 : LinearKernel::kEigen;
  return best;
}

void Linear(const RowMatrix& x, const RowMatrix& weight, const RowVector& bias, RowMatrix* out,
            LinearKernel kernel) {
#if BULWARK_X86
  if (kernel == LinearKernel::kAvx2) {
    // Eigen stays outside the target-attributed code, so its instantiations are all baseline.
    out->resize(x.rows(), weight.rows());
    LinearAvx2(x.data(), x.rows(), x.cols(), weight.data(), weight.rows(), out->data());
    out->rowwise() += bias;
    return;
  }
#endif
  LinearEigen(x, weight, bias, out);
}

}  // namespace bulwark::bert
