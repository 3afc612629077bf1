// The AVX-512 ||W v||^2 kernel against the scalar reference, on random lower-triangular matrices of
// sizes around the 16-row block boundaries, and the scalar reference against a direct formula.
#include "gate/triangular_norm.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <vector>

namespace bulwark {
namespace {

// A random d x d lower-triangular matrix, its packed copy and a vector, in the layout the kernels
// need (64-byte aligned, padded to 16).
struct Layout {
  explicit Layout(size_t d, uint32_t seed) : d(d), padded((d + 15) / 16 * 16), w(d * d, 0.0f) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> g(0, 1);
    // Entries above the diagonal are set too: packing must ignore them.
    for (float& x : w) x = g(rng);
    packed = static_cast<float*>(std::aligned_alloc(64, PackedTriangularFloats(padded) * sizeof(float)));
    PackLowerTriangular(w.data(), d, packed);
    vector = static_cast<float*>(std::aligned_alloc(64, padded * sizeof(float)));
    for (size_t r = 0; r < padded; ++r) vector[r] = r < d ? g(rng) : 0.0f;
  }
  ~Layout() {
    std::free(packed);
    std::free(vector);
  }
  // ||W v||^2 from the unpacked matrix, lower triangle only.
  double Direct() const {
    double total = 0;
    for (size_t r = 0; r < d; ++r) {
      double p = 0;
      for (size_t c = 0; c <= r; ++c) p += double(w[r * d + c]) * vector[c];
      total += p * p;
    }
    return total;
  }
  size_t d, padded;
  std::vector<float> w;
  float* packed;
  float* vector;
};

TEST(TriangularNormTest, PackedSizeIsTheTilesOfTheLowerTriangle) {
  EXPECT_EQ(PackedTriangularFloats(16), 256u);
  EXPECT_EQ(PackedTriangularFloats(32), 3 * 256u);
  EXPECT_EQ(PackedTriangularFloats(384), 300 * 256u);  // 24 block rows: 1 + 2 + ... + 24 tiles
}

TEST(TriangularNormTest, ScalarOnThePackedLayoutIsTheDirectSum) {
  for (size_t d : {1, 5, 16, 17, 40, 384}) {
    Layout l(d, 7 + static_cast<uint32_t>(d));
    const double direct = l.Direct();
    EXPECT_NEAR(TriangularSquaredNormScalar(l.packed, l.vector, l.padded), direct, 1e-12 * direct)
        << "d=" << d;
  }
}

TEST(TriangularNormTest, Avx512MatchesScalar) {
  const TriangularSquaredNormKernel* avx512 = Avx512TriangularSquaredNorm();
  if (avx512 == nullptr) GTEST_SKIP() << "no AVX-512 on this CPU";
  for (size_t d : {1, 2, 15, 16, 17, 31, 33, 100, 384, 385, 1024}) {
    for (uint32_t seed : {1u, 2u, 3u}) {
      Layout l(d, seed * 100 + static_cast<uint32_t>(d));
      const double reference = TriangularSquaredNormScalar(l.packed, l.vector, l.padded);
      const double fast = avx512->squared_norm(l.packed, l.vector, l.padded);
      EXPECT_NEAR(fast, reference, 1e-5 * reference) << "d=" << d << " seed=" << seed;
    }
  }
  EXPECT_EQ(&BestTriangularSquaredNorm(), avx512);
}

}  // namespace
}  // namespace bulwark
