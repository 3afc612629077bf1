// Linear: the dense layer y = x W^T + b that dominates a BERT forward pass (Q/K/V, attention
// output and both feed-forward products: about 90 % of the work at 256 tokens). W is [out, in]
// row-major, as PyTorch stores it, so every output is a dot product of two contiguous rows.
//
// Two kernels: Eigen's product (portable; SSE2 on a baseline x86-64 build) and a hand AVX2+FMA
// kernel compiled with a per-function target attribute (no global -mavx2 flag, so the library
// still runs on any x86-64 CPU), chosen at run time when CpuSupports(SimdLevel::kAvx2). The AVX2
// kernel blocks 4 rows of x against 3 rows of W (12 accumulators) over cache-sized panels of W and
// is about 2x faster on all-MiniLM-L6-v2 shapes. The two kernels sum in different orders, so their
// outputs differ in the last bits (about 1e-7 relative); each is deterministic.
#pragma once

#include "embed/bert/bert_weights.h"

namespace bulwark::bert {

enum class LinearKernel { kEigen, kAvx2 };

// kAvx2 when this CPU and OS support AVX2 and FMA, else kEigen. Detected once.
LinearKernel BestLinearKernel();

// *out = x * weight^T + bias (bias broadcast over rows). x: [n, k]; weight: [m, k]; bias: [m];
// out is resized to [n, m]. Precondition: kernel is kEigen or CPU supports it (BestLinearKernel).
void Linear(const RowMatrix& x, const RowMatrix& weight, const RowVector& bias, RowMatrix* out,
            LinearKernel kernel = BestLinearKernel());

}  // namespace bulwark::bert
