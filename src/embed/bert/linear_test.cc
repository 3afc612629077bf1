// Tests of Linear: both kernels against a plain double-precision loop on shapes that exercise every
// edge of the AVX2 kernel's blocking (rows not a multiple of 4, columns not a multiple of 3 or of
// the panel, inner sizes not a multiple of 8), and on all-MiniLM-L6-v2's shapes.
#include "embed/bert/linear.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "index/inner_product.h"

namespace bulwark::bert {
namespace {

RowMatrix RandomMatrix(int rows, int cols, std::mt19937* rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  RowMatrix m(rows, cols);
  for (int i = 0; i < m.size(); ++i) m.data()[i] = normal(*rng);
  return m;
}

// Largest |Linear(kernel) - reference| relative to the row's magnitude sum(|x_j w_j|).
double WorstError(int n, int k, int m, LinearKernel kernel, std::mt19937* rng) {
  const RowMatrix x = RandomMatrix(n, k, rng), w = RandomMatrix(m, k, rng);
  const RowVector b = RandomMatrix(1, m, rng).row(0);
  RowMatrix out;
  Linear(x, w, b, &out, kernel);
  EXPECT_EQ(out.rows(), n);
  EXPECT_EQ(out.cols(), m);
  double worst = 0;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < m; ++j) {
      double sum = b[j], magnitude = std::abs(b[j]);
      for (int t = 0; t < k; ++t) {
        sum += double{x(i, t)} * w(j, t);
        magnitude += std::abs(double{x(i, t)} * w(j, t));
      }
      worst = std::max(worst, std::abs(out(i, j) - sum) / magnitude);
    }
  }
  return worst;
}

std::vector<LinearKernel> SupportedKernels() {
  std::vector<LinearKernel> kernels = {LinearKernel::kEigen};
  if (CpuSupports(SimdLevel::kAvx2)) kernels.push_back(LinearKernel::kAvx2);
  return kernels;
}

TEST(LinearTest, BestKernelIsAvx2ExactlyWhenTheCpuHasIt) {
  EXPECT_EQ(BestLinearKernel() == LinearKernel::kAvx2, CpuSupports(SimdLevel::kAvx2));
}

TEST(LinearTest, MatchesReferenceOnEdgeShapes) {
  std::mt19937 rng(5);
  for (LinearKernel kernel : SupportedKernels()) {
    for (int n : {1, 3, 4, 5, 9}) {
      for (int k : {1, 7, 8, 9, 17, 32}) {
        for (int m : {1, 2, 3, 4, 47, 48, 49, 100}) {
          EXPECT_LT(WorstError(n, k, m, kernel, &rng), 1e-6)
              << "kernel " << static_cast<int>(kernel) << " n " << n << " k " << k << " m " << m;
        }
      }
    }
  }
}

TEST(LinearTest, MatchesReferenceOnMiniLmShapes) {
  std::mt19937 rng(6);
  for (LinearKernel kernel : SupportedKernels()) {
    EXPECT_LT(WorstError(17, 384, 1152, kernel, &rng), 1e-6);  // Q, K, V
    EXPECT_LT(WorstError(17, 384, 1536, kernel, &rng), 1e-6);  // intermediate
    EXPECT_LT(WorstError(17, 1536, 384, kernel, &rng), 1e-6);  // output
  }
}

}  // namespace
}  // namespace bulwark::bert
