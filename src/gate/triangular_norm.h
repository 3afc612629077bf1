// TriangularSquaredNorm: ||W v||^2 for a lower-triangular W, the Mahalanobis distance of the query
// gate (W = L^-1, Sigma = L L^T; gate_model.h). A plain scalar loop and an AVX-512 kernel that
// scores 16 rows per pass with 16 independent accumulators and sums them with one 4-level
// transposition instead of 16 horizontal reductions; runtime dispatch like the index's kernels.
#pragma once

#include <cstddef>

namespace bulwark {

// Layout both kernels require: `rows[i]` (i < padded) points to row i of W, 64-byte aligned, with
// at least `padded` readable floats, zero above the diagonal; `v` is 64-byte aligned with `padded`
// floats; padded = d rounded up to a multiple of 16, and rows and entries of v beyond d are zero.
struct TriangularSquaredNormKernel {
  double (*squared_norm)(const float* const* rows, const float* v, size_t padded);
};

// The scalar reference (double accumulation).
double TriangularSquaredNormScalar(const float* const* rows, const float* v, size_t padded);

// The fastest kernel this CPU runs (AVX-512 if available), chosen once.
const TriangularSquaredNormKernel& BestTriangularSquaredNorm();
// The AVX-512 kernel, or null if this CPU lacks AVX-512F (tests compare it to the scalar one).
const TriangularSquaredNormKernel* Avx512TriangularSquaredNorm();

}  // namespace bulwark
