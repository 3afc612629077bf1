// The stored vector's two forms (vector_codec.h): lossless round trips of sparse and dense vectors,
// the form chosen, and refusal of every malformed packed value.
#include "storage/sqlite/vector_codec.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "testing/status_matchers.h"

namespace bulwark::sqlite_rows {
namespace {

using testing::IsOk;
using testing::StatusIs;

std::vector<uint32_t> BitsOf(const std::vector<float>& v) {
  std::vector<uint32_t> bits;
  for (float f : v) bits.push_back(std::bit_cast<uint32_t>(f));
  return bits;
}

// A vector of dimension d with about `zero_share` of its components exactly +0.0.
std::vector<float> Sparse(size_t d, double zero_share, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::bernoulli_distribution zero(zero_share);
  std::vector<float> v(d);
  for (float& f : v) f = zero(rng) ? 0.0f : value(rng);
  return v;
}

void ExpectRoundTrip(const std::vector<float>& v) {
  const std::string stored = EncodeStoredVector(v);
  std::vector<float> back = {42.0f};
  ASSERT_THAT(DecodeStoredVector(stored, &back), IsOk()) << "d = " << v.size();
  EXPECT_EQ(BitsOf(back), BitsOf(v)) << "d = " << v.size();
}

TEST(VectorCodecTest, SparseVectorsArePackedAndComeBackBitForBit) {
  for (size_t d : {1u, 7u, 8u, 9u, 384u, 385u, 1000u}) {
    const std::vector<float> v = Sparse(d, 0.5, static_cast<uint32_t>(d));
    const std::string stored = EncodeStoredVector(v);
    if (d >= 9) {
      EXPECT_LT(stored.size(), d * sizeof(float)) << d;
      EXPECT_EQ(stored.size() % 4, 1u) << d;
    }
    ExpectRoundTrip(v);
  }
  // The lexical embedder's case: d = 384, about half zero -> well under the raw 1,536 bytes.
  EXPECT_LT(EncodeStoredVector(Sparse(384, 0.5, 1)).size(), 900u);
}

TEST(VectorCodecTest, DenseVectorsStayRaw) {
  const std::vector<float> v = Sparse(384, 0.0, 3);
  const std::string stored = EncodeStoredVector(v);
  EXPECT_EQ(stored.size(), 384 * sizeof(float));
  ExpectRoundTrip(v);
  ExpectRoundTrip({});
}

TEST(VectorCodecTest, SpecialValuesSurvive) {
  std::vector<float> v(64, 0.0f);
  v[1] = -0.0f;  // not all-zero bits: kept as a value
  v[2] = std::numeric_limits<float>::quiet_NaN();
  v[3] = std::bit_cast<float>(uint32_t{0x7fc01234});  // a NaN with a payload
  v[4] = std::numeric_limits<float>::infinity();
  v[5] = std::numeric_limits<float>::denorm_min();
  ASSERT_LT(EncodeStoredVector(v).size(), v.size() * sizeof(float));
  ExpectRoundTrip(v);
}

TEST(VectorCodecTest, RawBytesOfEarlierVersionsAreRead) {
  const std::vector<float> v = {0.0f, 0.6f, 0.0f, 0.8f};
  const std::string raw(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
  std::vector<float> back;
  ASSERT_THAT(DecodeStoredVector(raw, &back), IsOk());
  EXPECT_EQ(back, v);
}

TEST(VectorCodecTest, MalformedPackedValuesAreRefused) {
  const std::string good = EncodeStoredVector(Sparse(384, 0.5, 5));
  ASSERT_EQ(good.size() % 4, 1u);
  std::vector<float> out = {1.0f};
  auto refused = [&](const std::string& bytes) {
    out = {1.0f};
    const absl::Status s = DecodeStoredVector(bytes, &out);
    EXPECT_THAT(s, StatusIs(absl::StatusCode::kDataLoss)) << bytes.size();
    EXPECT_TRUE(out.empty());
  };
  refused(good.substr(0, good.size() - 4));  // a value missing: length no longer matches
  refused(good.substr(0, good.size() - 2));  // 3 and 2 mod 4: neither form (0 mod 4 is raw)
  refused(good.substr(0, good.size() - 3));
  refused(std::string(1, '\0'));  // shorter than its header
  std::string more_bits = good;
  more_bits[2] = static_cast<char>(more_bits[2] ^ 0x01);  // one more or one fewer value than stored
  refused(more_bits);
  std::string huge = good;
  huge[0] = '\xff';
  huge[1] = '\xff';  // d = 65535: the bitmap alone is longer than the value
  refused(huge);
  // d = 9 has 7 unused bits in its bitmap's second byte; a set one is refused.
  std::vector<float> nine(9, 0.0f);
  nine[0] = 1.0f;
  std::string stored = EncodeStoredVector(nine);
  ASSERT_EQ(stored.size() % 4, 1u);
  std::string stray = stored;
  stray[3] = static_cast<char>(stray[3] | 0x80);
  refused(stray);
  // Non-zero padding (d = 9, one value: 2 + 2 + 4 = 8 bytes, padded by 1).
  ASSERT_EQ(stored.size(), 9u);
  std::string padded = stored;
  padded.back() = '\x01';
  refused(padded);
}

}  // namespace
}  // namespace bulwark::sqlite_rows
