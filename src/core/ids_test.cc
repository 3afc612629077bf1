#include "core/ids.h"

#include <gtest/gtest.h>

#include <set>

namespace bulwark {
namespace {

class FakeEnv : public Env {
 public:
  int64_t now_us = 1'700'000'000'000'000;
  uint8_t next = 0;
  int64_t NowMicros() override { return now_us; }
  void RandomBytes(std::span<uint8_t> out) override {
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
