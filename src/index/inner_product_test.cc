// Every inner-product kernel (scalar, AVX2, AVX-512; the SIMD ones skipped on CPUs without them)
// against a double-precision reference, for lengths that exercise every main-loop/tail split.
#include "index/inner_product.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace bulwark {
namespace {

// Lengths around every SIMD width (8, 16, 32 floats) plus the embedding sizes we use.
const std::vector<size_t> kLengths = {0,  1,  2,  3,  4,  5,  7,   8,   9,   15,  16,  17,  23,   31,  32,
                                      33, 47, 48, 63, 64, 65, 100, 127, 383, 384, 385, 768, 1000, 1536};

double ReferenceDot(const float* a, const float* b, size_t dim) {
  double sum = 0;
  for (size_t i = 0; i < dim; ++i) sum += static_cast<double>(a[i]) * b[i];
  return sum;
}

double AbsDot(const float* a, const float* b, size_t dim) {
  double sum = 0;
  for (size_t i = 0; i < dim; ++i) sum += std::fabs(static_cast<double>(a[i]) * b[i]);
  return sum;
}

std::vector<float> RandomVector(size_t dim, std::mt19937& rng) {
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> v(dim);
  for (float& x : v) x = uniform(rng);
  return v;
}

class InnerProductTest : public testing::TestWithParam<SimdLevel> {
 protected:
  void SetUp() override {
    if (!CpuSupports(GetParam())) GTEST_SKIP() << "CPU lacks " << ToString(GetParam());
  }
  const InnerProductKernels& kernels() const { return KernelsFor(GetParam()); }
};

TEST(SimdLevelTest, ScalarAlwaysSupportedAndBestIsSupported) {
  EXPECT_TRUE(CpuSupports(SimdLevel::kScalar));
  EXPECT_TRUE(CpuSupports(BestSimdLevel()));
  EXPECT_EQ(KernelsFor(BestSimdLevel()).level, BestSimdLevel());
  if (CpuSupports(SimdLevel::kAvx512)) {
    EXPECT_EQ(BestSimdLevel(), SimdLevel::kAvx512);
  }
}

TEST_P(InnerProductTest, KernelsReportTheirLevel) { EXPECT_EQ(kernels().level, GetParam()); }

// Higham's bound for a float dot product: |error| <= dim * u * sum |a_i b_i| with u = 2^-24; we
// allow dim * FLT_EPSILON (= 2u) plus a denormal-sized floor.
TEST_P(InnerProductTest, DotMatchesDoubleReference) {
  std::mt19937 rng(42);
  for (size_t dim : kLengths) {
    for (int trial = 0; trial < 5; ++trial) {
      // Offset by `trial` floats so the vectors are not 64-byte aligned.
      std::vector<float> a = RandomVector(dim + trial, rng);
      std::vector<float> b = RandomVector(dim + trial, rng);
      const float* pa = a.data() + trial;
      const float* pb = b.data() + trial;
      const double want = ReferenceDot(pa, pb, dim);
      const double tolerance = dim * FLT_EPSILON * AbsDot(pa, pb, dim) + 1e-30;
      EXPECT_NEAR(kernels().dot(pa, pb, dim), want, tolerance) << "dim " << dim << " trial " << trial;
    }
  }
}

// Small integers make every partial sum exact, so any dropped, doubled or misplaced element shows.
TEST_P(InnerProductTest, DotIsExactOnSmallIntegers) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> small(-4, 4);
  for (size_t dim : kLengths) {
    std::vector<float> a(dim), b(dim);
    for (size_t i = 0; i < dim; ++i) {
      a[i] = static_cast<float>(small(rng));
      b[i] = static_cast<float>(small(rng));
    }
    EXPECT_EQ(kernels().dot(a.data(), b.data(), dim),
              static_cast<float>(ReferenceDot(a.data(), b.data(), dim)))
        << "dim " << dim;
  }
}

// dot_rows must give exactly dot's result whatever the row count (4-row blocks plus remainder)
// and wherever the rows are.
TEST_P(InnerProductTest, DotRowsIsBitIdenticalToDot) {
  std::mt19937 rng(3);
  for (size_t dim : {1ul, 7ul, 16ul, 17ul, 33ul, 384ul, 385ul}) {
    for (size_t count : {0ul, 1ul, 2ul, 3ul, 4ul, 5ul, 7ul, 8ul, 9ul, 13ul, 64ul}) {
      const std::vector<float> query = RandomVector(dim, rng);
      std::vector<std::vector<float>> storage;
      std::vector<const float*> rows;
      for (size_t r = 0; r < count; ++r) storage.push_back(RandomVector(dim, rng));
      for (size_t r = 0; r < count; ++r)
        rows.push_back(storage[(r * 5) % count].data());  // shuffled, repeats
      std::vector<float> scores(count + 1, -12345.0f);
      kernels().dot_rows(query.data(), rows.data(), count, dim, scores.data());
      for (size_t r = 0; r < count; ++r) {
        EXPECT_EQ(scores[r], kernels().dot(query.data(), rows[r], dim)) << "dim " << dim << " row " << r;
        EXPECT_NEAR(scores[r], ReferenceDot(query.data(), rows[r], dim),
                    dim * FLT_EPSILON * AbsDot(query.data(), rows[r], dim) + 1e-30);
      }
      EXPECT_EQ(scores[count], -12345.0f) << "wrote past the last score";
    }
  }
}

// Vectors that end exactly at an inaccessible page: the masked tails must not touch it.
TEST_P(InnerProductTest, DoesNotReadPastTheEnd) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* region = mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(region, MAP_FAILED);
  char* guard = static_cast<char*>(region) + page;
  ASSERT_EQ(mprotect(guard, page, PROT_NONE), 0);
  float* end = reinterpret_cast<float*>(guard);
  for (size_t dim = 1; dim <= 70; ++dim) {
    float* v = end - dim;
    for (size_t i = 0; i < dim; ++i) v[i] = 1.0f;
    const float* rows[5] = {v, v, v, v, v};
    float scores[5];
    EXPECT_EQ(kernels().dot(v, v, dim), static_cast<float>(dim));
    kernels().dot_rows(v, rows, 5, dim, scores);
    for (float s : scores) EXPECT_EQ(s, static_cast<float>(dim));
  }
  munmap(region, 2 * page);
}

INSTANTIATE_TEST_SUITE_P(AllLevels, InnerProductTest,
                         testing::Values(SimdLevel::kScalar, SimdLevel::kAvx2, SimdLevel::kAvx512),
                         [](const testing::TestParamInfo<SimdLevel>& info) {
                           return std::string(ToString(info.param));
                         });

}  // namespace
}  // namespace bulwark
