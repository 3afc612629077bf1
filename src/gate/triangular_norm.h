// TriangularSquaredNorm: ||W v||^2 for a lower-triangular W, the Mahalanobis distance of the query
// gate (W = L^-1, Sigma = L L^T; gate_model.h). A plain scalar loop and an AVX-512 kernel that
// scores 16 rows per pass with 16 independent accumulators and sums them with one 4-level
// transposition instead of 16 horizontal reductions; runtime dispatch like the index's kernels.
// Both read W in a packed tile layout (below).
#pragma once

#include <cstddef>

namespace bulwark {

// The packed layout both kernels read: W's lower triangle in 16 x 16 tiles, block row by block
// row -- for b = 0, 16, ..., padded - 16 and then c = 0, 16, ..., b, the tile of rows [b, b+16) and
// columns [c, c+16), row-major (256 floats) -- so a kernel reads W once, front to back, as one
// stream the hardware prefetcher follows (16 separate row streams did not keep up). padded = d
// rounded up to a multiple of 16; entries beyond d and above the diagonal are zero. `packed` and
// `v` (padded floats, zero beyond d) are 64-byte aligned.
struct TriangularSquaredNormKernel {
  double (*squared_norm)(const float* packed, const float* v, size_t padded);
};

// Floats in the packed layout of a padded x padded lower triangle: 256 * n (n + 1) / 2, n = padded / 16.
size_t PackedTriangularFloats(size_t padded);
// Writes the lower triangle of the row-major d x d matrix `w` (what is above the diagonal is
// ignored) into `packed`, which holds PackedTriangularFloats(padded) floats.
void PackLowerTriangular(const float* w, size_t d, float* packed);

// The scalar reference (double accumulation).
double TriangularSquaredNormScalar(const float* packed, const float* v, size_t padded);

// The fastest kernel this CPU runs (AVX-512 if available), chosen once.
const TriangularSquaredNormKernel& BestTriangularSquaredNorm();
// The AVX-512 kernel, or null if this CPU lacks AVX-512F (tests compare it to the scalar one).
const TriangularSquaredNormKernel* Avx512TriangularSquaredNorm();

}  // namespace bulwark
