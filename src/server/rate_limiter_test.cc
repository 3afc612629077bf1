// Token buckets: burst, refill, Retry-After, independence of keys, bounded memory.
#include "server/rate_limiter.h"

#include <gtest/gtest.h>

namespace bulwark::server {
namespace {

constexpr int64_t kSecond = 1'000'000;

TEST(RateLimiterTest, AllowsBurstThenRefuses) {
  RateLimiter limiter(/*rate_per_second=*/2, /*burst=*/3);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(limiter.Acquire("k", 0).allowed) << i;
  RateLimiter::Decision refused = limiter.Acquire("k", 0);
  EXPECT_FALSE(refused.allowed);
  EXPECT_NEAR(refused.retry_after_seconds, 0.5, 1e-9);  // one token at 2/s
}

TEST(RateLimiterTest, RefillsAtTheRate) {
  RateLimiter limiter(2, 1);
  EXPECT_TRUE(limiter.Acquire("k", 0).allowed);
  EXPECT_FALSE(limiter.Acquire("k", kSecond / 4).allowed);  // half a token
  EXPECT_TRUE(limiter.Acquire("k", kSecond / 2).allowed);
  EXPECT_FALSE(limiter.Acquire("k", kSecond / 2).allowed);
}

TEST(RateLimiterTest, NeverExceedsBurstAfterLongIdle) {
  RateLimiter limiter(100, 2);
  EXPECT_TRUE(limiter.Acquire("k", 0).allowed);
  const int64_t later = 3600 * kSecond;
  EXPECT_TRUE(limiter.Acquire("k", later).allowed);
  EXPECT_TRUE(limiter.Acquire("k", later).allowed);
  EXPECT_FALSE(limiter.Acquire("k", later).allowed);
}

TEST(RateLimiterTest, KeysAreIndependent) {
  RateLimiter limiter(1, 1);
  EXPECT_TRUE(limiter.Acquire("a", 0).allowed);
  EXPECT_FALSE(limiter.Acquire("a", 0).allowed);
  EXPECT_TRUE(limiter.Acquire("b", 0).allowed);
}

TEST(RateLimiterTest, TimeGoingBackwardsAddsNoTokens) {
  RateLimiter limiter(1, 1);
  EXPECT_TRUE(limiter.Acquire("k", 10 * kSecond).allowed);
  EXPECT_FALSE(limiter.Acquire("k", 0).allowed);
  EXPECT_FALSE(limiter.Acquire("k", 10 * kSecond).allowed);
}

// Work charged after a request takes the bucket into debt: the key waits until it is repaid, at
// most burst / rate seconds; another key is not affected; unknown keys are not created.
TEST(RateLimiterTest, ChargedWorkIsRepaidBeforeTheNextRequest) {
  RateLimiter limiter(/*rate_per_second=*/10, /*burst=*/5);
  ASSERT_TRUE(limiter.Acquire("heavy", 0).allowed);  // 4 tokens left
  limiter.Charge("heavy", 7, 0);                     // -3
  RateLimiter::Decision refused = limiter.Acquire("heavy", 0);
  EXPECT_FALSE(refused.allowed);
  EXPECT_NEAR(refused.retry_after_seconds, 0.4, 1e-9) << "from -3 to 1 token at 10/s";
  EXPECT_FALSE(limiter.Acquire("heavy", 300'000).allowed);
  EXPECT_TRUE(limiter.Acquire("heavy", 400'000).allowed);
  limiter.Charge("heavy", 1000, 400'000);  // the debt stops at -burst
  EXPECT_NEAR(limiter.Acquire("heavy", 400'000).retry_after_seconds, 0.6, 1e-9);
  EXPECT_TRUE(limiter.Acquire("light", 400'000).allowed);
  limiter.Charge("unknown", 3, 0);
  EXPECT_EQ(limiter.tracked_keys(), 2u);
}

TEST(RateLimiterTest, DisabledAllowsEverything) {
  RateLimiter limiter(0, 1);
  EXPECT_FALSE(limiter.enabled());
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(limiter.Acquire("k", 0).allowed);
}

TEST(RateLimiterTest, TableStaysBounded) {
  RateLimiter limiter(1, 1, /*max_keys=*/8);
  for (int i = 0; i < 1000; ++i) limiter.Acquire("key" + std::to_string(i), 0);
  EXPECT_LE(limiter.tracked_keys(), 8u);
  // A bucket still in use survives eviction of full ones.
  RateLimiter small(1, 2, 2);
  small.Acquire("hot", 0);
  small.Acquire("hot", 0);           // empty now
  small.Acquire("x", 10 * kSecond);  // refilled "hot" is full by now: evictable
  EXPECT_LE(small.tracked_keys(), 2u);
}

}  // namespace
}  // namespace bulwark::server
