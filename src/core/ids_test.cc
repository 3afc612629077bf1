#include "core/ids.h"

#include <gtest/gtest.h>

#include <set>

namespace bulwark {
namespace {

class FakeEnv : public Env {
 public:
  int64_t now_us = 1'700'000'000'000'000;
  uint8_t next = 0;
  int draws = 0;
  int64_t NowMicros() override { return now_us; }
  void RandomBytes(std::span<uint8_t> out) override {
    ++draws;
    for (auto& b : out) b = next++;
  }
};

TEST(IdGeneratorTest, IdsAreValidUniqueAndIncreasing) {
  FakeEnv env;
  IdGenerator ids(&env);
  std::string previous;
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    if (i % 100 == 0) env.now_us += 1000;  // some in the same millisecond, some not
    std::string id = ids.Next();
    EXPECT_TRUE(IsValidEntryId(id)) << id;
    EXPECT_GT(id, previous);
    EXPECT_TRUE(seen.insert(id).second);
    previous = id;
  }
}

TEST(IdGeneratorTest, ClockGoingBackKeepsOrder) {
  FakeEnv env;
  IdGenerator ids(&env);
  std::string a = ids.Next();
  env.now_us -= 10'000'000;
  std::string b = ids.Next();
  EXPECT_GT(b, a);
}

TEST(IdGeneratorTest, TimestampSortsAcrossMilliseconds) {
  FakeEnv env;
  IdGenerator ids(&env);
  env.next = 0xff;  // large random part
  std::string early = ids.Next();
  env.now_us += 1000;
  env.next = 0;  // small random part
  std::string late = ids.Next();
  EXPECT_GT(late, early);
}

// One CSPRNG call serves 16 milliseconds' random parts, each byte used once: the ids of 64
// milliseconds draw 4 times, and their random parts are consecutive 10-byte runs of the stream.
TEST(IdGeneratorTest, RandomPartsAreDrawnInBlocksAndNeverReused) {
  FakeEnv env;
  IdGenerator ids(&env);
  std::set<std::string> random_parts;
  for (int i = 0; i < 64; ++i) {
    env.now_us += 1000;
    const std::string id = ids.Next();
    EXPECT_TRUE(random_parts.insert(id.substr(10)).second) << id;
  }
  EXPECT_EQ(env.draws, 4);
  EXPECT_EQ(env.next, static_cast<uint8_t>(4 * 160));
  // The first id's random part is the stream's first 10 bytes, 00 01 .. 09.
  FakeEnv fresh;
  fresh.now_us = 1'700'000'000'000'000;
  IdGenerator first(&fresh);
  __uint128_t expected = static_cast<__uint128_t>(1'700'000'000'000ull) << 80;
  for (int i = 0; i < 10; ++i) expected |= static_cast<__uint128_t>(i) << (8 * (9 - i));
  std::string encoded(26, '0');
  for (int i = 25; i >= 0; --i) {
    encoded[i] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"[static_cast<int>(expected & 31)];
    expected >>= 5;
  }
  EXPECT_EQ(first.Next(), encoded);
}

TEST(IsValidEntryIdTest, RejectsMalformed) {
  EXPECT_FALSE(IsValidEntryId(""));
  EXPECT_FALSE(IsValidEntryId("01ARZ3NDEKTSV4RRFFQ69G5FA"));    // 25 chars
  EXPECT_FALSE(IsValidEntryId("01ARZ3NDEKTSV4RRFFQ69G5FAVX"));  // 27 chars
  EXPECT_FALSE(IsValidEntryId("01ARZ3NDEKTSV4RRFFQ69G5FAU"));   // U not in alphabet
  EXPECT_FALSE(IsValidEntryId("81ARZ3NDEKTSV4RRFFQ69G5FAV"));   // overflows 128 bits
  EXPECT_FALSE(IsValidEntryId("01arz3ndektsv4rrffq69g5fav"));   // lowercase
  EXPECT_TRUE(IsValidEntryId("01ARZ3NDEKTSV4RRFFQ69G5FAV"));
}

}  // namespace
}  // namespace bulwark
