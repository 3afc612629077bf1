// The credential cache: hits within the TTL, expiry, Clear, bounded size, disabled mode.
#include "server/credential_cache.h"

#include <gtest/gtest.h>

namespace bulwark::server {
namespace {

Principal Named(const std::string& name) {
  Principal p;
  p.name = name;
  return p;
}

TEST(CredentialCacheTest, HitsUntilTheTtlRunsOut) {
  CredentialCache cache(/*ttl_us=*/1000);
  EXPECT_FALSE(cache.Find("k", 0).has_value());
  cache.Insert("k", Named("alice"), 0);
  ASSERT_TRUE(cache.Find("k", 999).has_value());
  EXPECT_EQ(cache.Find("k", 999)->name, "alice");
  EXPECT_FALSE(cache.Find("k", 1000).has_value());
  EXPECT_FALSE(cache.Find("other", 0).has_value());
}

TEST(CredentialCacheTest, ClearForgetsEverything) {
  CredentialCache cache(1'000'000);
  cache.Insert("a", Named("a"), 0);
  cache.Insert("b", Named("b"), 0);
  cache.Clear();
  EXPECT_FALSE(cache.Find("a", 1).has_value());
  EXPECT_FALSE(cache.Find("b", 1).has_value());
}

TEST(CredentialCacheTest, BoundedAndDisableable) {
  CredentialCache small(1'000'000, /*max_entries=*/2);
  small.Insert("a", Named("a"), 0);
  small.Insert("b", Named("b"), 0);
  small.Insert("c", Named("c"), 0);  // full: starts over
  EXPECT_FALSE(small.Find("a", 1).has_value());
  EXPECT_TRUE(small.Find("c", 1).has_value());
  CredentialCache off(0);
  off.Insert("a", Named("a"), 0);
  EXPECT_FALSE(off.Find("a", 0).has_value());
}

}  // namespace
}  // namespace bulwark::server
