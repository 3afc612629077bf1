// CredentialCache: API keys authenticated in the last `ttl`, so a key that sends every request
// costs a hash lookup instead of a database query and a hash comparison. Keys are held only as
// their SHA-256 digests. A revocation made through the API clears the cache at once (Clear());
// one made offline with `bulwark principals revoke` takes effect within `ttl` (default 1 s).
// Memory is bounded: at most `max_entries` keys; a full cache starts over. Thread-safe.
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/synchronization/mutex.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "auth/principal_registry.h"

namespace bulwark::server {

class CredentialCache {
 public:
  // ttl_us <= 0 disables the cache (Find never hits).
  explicit CredentialCache(int64_t ttl_us = 1'000'000, size_t max_entries = 10'000);

  // The principal `api_key` authenticated as, if that happened less than ttl ago (`now_us` is a
  // monotonic clock in microseconds).
  std::optional<Principal> Find(std::string_view api_key, int64_t now_us);
  void Insert(std::string_view api_key, const Principal& principal, int64_t now_us);
  void Clear();

 private:
  struct Cached {
    Principal principal;
    int64_t expires_us = 0;
  };
  const int64_t ttl_us_;
  const size_t max_entries_;
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, Cached> entries_ ABSL_GUARDED_BY(mu_);  // by SHA-256 hex of the key
};

}  // namespace bulwark::server
