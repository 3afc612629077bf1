// Int8Rows: the property exactness rests on -- every row's float32 score, as each float kernel
// computes it, lies within the row's [lower, upper] -- on data built to stress quantization
// (dynamic range, tiny and huge values, sparse rows and queries, zeros, non-finite values), for
// both int8 kernels, and after swap-removes.
#include "index/int8_rows.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "index/inner_product.h"

namespace bulwark {
namespace {

using Rows = std::vector<std::vector<float>>;

// Data shapes, each a generator of one vector.
enum class Shape { kUniform, kSparse, kSpiky, kTiny, kHuge, kMixedScales, kTernary };

std::vector<float> MakeVector(Shape shape, size_t dim, std::mt19937& rng) {
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> v(dim, 0.0f);
  switch (shape) {
    case Shape::kUniform:
      for (float& x : v) x = uniform(rng);
      break;
    case Shape::kSparse:  // a lexical embedding: a few dozen nonzero coordinates
      for (int i = 0; i < 40; ++i) v[rng() % dim] += uniform(rng);
      break;
    case Shape::kSpiky:  // one large coordinate, the rest tiny: quantization rounds them all to 0
      for (float& x : v) x = uniform(rng) * 1e-4f;
      v[rng() % dim] = 50.0f * uniform(rng);
      break;
    case Shape::kTiny:  // near the bottom of the float range, subnormals included
      for (float& x : v) x = uniform(rng) * 1e-38f;
      break;
    case Shape::kHuge:  // up to the largest magnitude that is still quantized (2^50)
      for (float& x : v) x = uniform(rng) * 0x1p50f;
      break;
    case Shape::kMixedScales:
      for (float& x : v) x = uniform(rng) * std::ldexp(1.0f, static_cast<int>(rng() % 40) - 20);
      break;
    case Shape::kTernary:  // exact integer scores
      for (float& x : v) x = static_cast<float>(static_cast<int>(rng() % 3) - 1);
      break;
  }
  return v;
}

// Checks lower <= kernel score <= upper for every row, every float kernel the CPU has.
void ExpectBoundsHold(const Int8Rows& int8, const Rows& rows, const std::vector<float>& query,
                      const std::string& context) {
  const Int8Query prepared = int8.PrepareQuery(query);
  ASSERT_TRUE(prepared.usable) << context;
  std::vector<float> lower(Int8Rows::kBlockRows), upper(Int8Rows::kBlockRows);
  for (size_t block = 0; block < int8.blocks(); ++block) {
    const float threshold = static_cast<float>(block % 3) - 1.0f;  // -1, 0, 1
    const uint64_t reaching = int8.Bounds(prepared, block, threshold, lower.data(), upper.data());
    for (size_t r = 0; r < Int8Rows::kBlockRows; ++r) {
      const bool exists = block * Int8Rows::kBlockRows + r < rows.size();
      EXPECT_EQ((reaching >> r) & 1, exists && !(upper[r] < threshold) ? 1u : 0u) << context << " row " << r;
      if (!exists) continue;
      const std::vector<float>& row = rows[block * Int8Rows::kBlockRows + r];
      for (SimdLevel level : {SimdLevel::kScalar, SimdLevel::kAvx2, SimdLevel::kAvx512}) {
        if (!CpuSupports(level)) continue;
        const float score = KernelsFor(level).dot(query.data(), row.data(), row.size());
        // NaN means "unknown" and is allowed; a known bound must hold.
        EXPECT_TRUE(std::isnan(lower[r]) || lower[r] <= score)
            << context << " row " << block * Int8Rows::kBlockRows + r << " " << ToString(level) << ": lower "
            << lower[r] << " > score " << score;
        EXPECT_TRUE(std::isnan(upper[r]) || score <= upper[r])
            << context << " row " << block * Int8Rows::kBlockRows + r << " " << ToString(level) << ": score "
            << score << " > upper " << upper[r];
      }
    }
  }
}

class Int8RowsTest : public testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    if (GetParam() && !Int8Rows::CpuHasVnni()) GTEST_SKIP() << "CPU lacks AVX-512 VNNI";
  }
  bool vnni() const { return GetParam(); }
};

TEST_P(Int8RowsTest, BoundsHoldOnEveryShape) {
  std::mt19937 rng(7);
  const std::vector<Shape> shapes = {Shape::kUniform, Shape::kSparse,      Shape::kSpiky,  Shape::kTiny,
                                     Shape::kHuge,    Shape::kMixedScales, Shape::kTernary};
  for (size_t dim : {1ul, 7ul, 64ul, 384ul, 1000ul}) {
    for (Shape row_shape : shapes) {
      Int8Rows int8(dim, vnni());
      EXPECT_EQ(int8.uses_vnni(), vnni());
      Rows rows;
      for (int i = 0; i < 150; ++i) {  // two full blocks and a partial one
        rows.push_back(MakeVector(row_shape, dim, rng));
        int8.Append(rows.back());
      }
      for (Shape query_shape : shapes) {
        const std::string context = "dim " + std::to_string(dim) + " rows " +
                                    std::to_string(static_cast<int>(row_shape)) + " query " +
                                    std::to_string(static_cast<int>(query_shape));
        ExpectBoundsHold(int8, rows, MakeVector(query_shape, dim, rng), context);
      }
    }
  }
}

TEST_P(Int8RowsTest, BoundsAreTightForUnitVectors) {
  // Not a correctness property, but the point of the pre-scan: for 384-d unit vectors the bounds
  // must be far narrower than the spread of scores.
  std::mt19937 rng(3);
  Int8Rows int8(384, vnni());
  for (int i = 0; i < 64; ++i) {
    std::vector<float> v = MakeVector(Shape::kUniform, 384, rng);
    double norm = 0;
    for (float x : v) norm += static_cast<double>(x) * x;
    for (float& x : v) x = static_cast<float>(x / std::sqrt(norm));
    int8.Append(v);
  }
  std::vector<float> query = MakeVector(Shape::kUniform, 384, rng);
  double norm = 0;
  for (float x : query) norm += static_cast<double>(x) * x;
  for (float& x : query) x = static_cast<float>(x / std::sqrt(norm));
  std::vector<float> lower(64), upper(64);
  int8.Bounds(int8.PrepareQuery(query), 0, 0.0f, lower.data(), upper.data());
  for (int r = 0; r < 64; ++r) EXPECT_LT(upper[r] - lower[r], 0.02f) << r;
}

TEST_P(Int8RowsTest, ZeroAndNonFiniteValues) {
  const size_t dim = 5;
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Int8Rows int8(dim, vnni());
  const Rows rows = {{0, 0, 0, 0, 0},       {1, 2, 3, 4, 5},  {inf, 0, 0, 0, 0},   {nan, 1, 1, 1, 1},
                     {0x1p60f, 1, 0, 0, 0}, {-1, 0, 0, 0, 0}, {1e-45f, 0, 0, 0, 0}};
  for (const auto& row : rows) int8.Append(row);
  // Finite queries: finite rows are bounded, the others unknown or infinite (never excluded).
  for (const std::vector<float>& query : Rows{{1, 1, 1, 1, 1}, {0, 0, 0, 0, 0}, {0, 0, -3, 0, 0}}) {
    const Int8Query prepared = int8.PrepareQuery(query);
    ASSERT_TRUE(prepared.usable);
    std::vector<float> lower(64), upper(64);
    const uint64_t reaching =
        int8.Bounds(prepared, 0, std::numeric_limits<float>::max(), lower.data(), upper.data());
    EXPECT_EQ(reaching & 0b11100, 0b11100u);  // unbounded rows always reach
    EXPECT_EQ(reaching >> 7, 0u);             // rows that do not exist never do
    for (size_t r : {2ul, 3ul, 4ul}) {
      EXPECT_TRUE(std::isnan(lower[r]) || lower[r] == -inf) << r;
      EXPECT_TRUE(std::isnan(upper[r]) || upper[r] == inf) << r;
    }
    for (size_t r : {0ul, 1ul, 5ul, 6ul}) {
      const float score = KernelsFor(SimdLevel::kScalar).dot(query.data(), rows[r].data(), dim);
      EXPECT_LE(lower[r], score) << r;
      EXPECT_GE(upper[r], score) << r;
    }
  }
  // Queries that cannot be bounded are refused; the caller scans exactly.
  EXPECT_FALSE(int8.PrepareQuery(std::vector<float>{nan, 0, 0, 0, 0}).usable);
  EXPECT_FALSE(int8.PrepareQuery(std::vector<float>{0, -inf, 0, 0, 0}).usable);
  EXPECT_FALSE(int8.PrepareQuery(std::vector<float>{0, 0, 0x1p51f, 0, 0}).usable);
}

TEST_P(Int8RowsTest, RemoveBySwapKeepsPositionsConsistent) {
  std::mt19937 rng(21);
  const size_t dim = 33;
  Int8Rows int8(dim, vnni());
  Rows rows;
  for (int i = 0; i < 200; ++i) {
    rows.push_back(MakeVector(i % 2 ? Shape::kMixedScales : Shape::kSparse, dim, rng));
    int8.Append(rows.back());
  }
  // Remove like FlatIndex: the last row moves into the hole. Down through a block boundary.
  while (rows.size() > 60) {
    const size_t hole = rng() % rows.size();
    int8.RemoveBySwap(hole);
    rows[hole] = rows.back();
    rows.pop_back();
    ASSERT_EQ(int8.size(), rows.size());
    if (rows.size() % 23 == 0) {
      ExpectBoundsHold(int8, rows, MakeVector(Shape::kUniform, dim, rng),
                       "size " + std::to_string(rows.size()));
    }
  }
  EXPECT_EQ(int8.blocks(), 1u);
  for (int i = 0; i < 10; ++i) {
    rows.push_back(MakeVector(Shape::kUniform, dim, rng));
    int8.Append(rows.back());
  }
  ExpectBoundsHold(int8, rows, MakeVector(Shape::kSparse, dim, rng), "after re-adding");
}

INSTANTIATE_TEST_SUITE_P(Kernels, Int8RowsTest, testing::Bool(),
                         [](const testing::TestParamInfo<bool>& info) {
                           return std::string(info.param ? "vnni" : "scalar");
                         });

}  // namespace
}  // namespace bulwark
