// The AVX-512 ||W v||^2 kernel against the scalar reference, on random lower-triangular matrices of
// sizes around the 16-row block boundaries, and the scalar reference against a direct formula.
#include "gate/triangular_norm.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <vector>

namespace bulwark {
namespace {

// A padded, 64-byte aligned lower-triangular matrix and vector in the layout the kernels need.
struct Layout {
  explicit Layout(size_t d, uint32_t seed) : padded((d + 15) / 16 * 16) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> g(0, 1);
    storage = static_cast<float*>(std::aligned_alloc(64, padded * padded * sizeof(float)));
    vector = static_cast<float*>(std::aligned_alloc(64, padded * sizeof(float)));
    for (size_t r = 0; r < padded; ++r) {
      for (size_t c = 0; c < padded; ++c) storage[r * padded + c] = (r < d && c <= r) ? g(rng) : 0.0f;
      rows.push_back(storage + r * padded);
      vector[r] = r < d ? g(rng) : 0.0f;
    }
  }
  ~Layout() {
    std::free(storage);
    std::free(vector);
  }
  size_t padded;
  float* storage;
  float* vector;
  std::vector<const float*> rows;
};

TEST(TriangularNormTest, ScalarIsTheDirectSum) {
  Layout l(5, 1);
  double expected = 0;
  for (size_t r = 0; r < 5; ++r) {
    double p = 0;
    for (size_t c = 0; c <= r; ++c) p += double(l.rows[r][c]) * l.vector[c];
    expected += p * p;
  }
  EXPECT_DOUBLE_EQ(TriangularSquaredNormScalar(l.rows.data(), l.vector, l.padded), expected);
}

TEST(TriangularNormTest, Avx512MatchesScalar) {
  const TriangularSquaredNormKernel* avx512 = Avx512TriangularSquaredNorm();
  if (avx512 == nullptr) GTEST_SKIP() << "no AVX-512 on this CPU";
  for (size_t d : {1, 2, 15, 16, 17, 31, 33, 100, 384, 385, 1024}) {
    for (uint32_t seed : {1u, 2u, 3u}) {
      Layout l(d, seed * 100 + static_cast<uint32_t>(d));
      const double reference = TriangularSquaredNormScalar(l.rows.data(), l.vector, l.padded);
      const double fast = avx512->squared_norm(l.rows.data(), l.vector, l.padded);
      EXPECT_NEAR(fast, reference, 1e-5 * reference) << "d=" << d << " seed=" << seed;
    }
  }
  EXPECT_EQ(&BestTriangularSquaredNorm(), avx512);
}

}  // namespace
}  // namespace bulwark
