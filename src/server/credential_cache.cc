// Short-lived cache of authenticated API keys (see credential_cache.h).
#include "server/credential_cache.h"

#include <absl/synchronization/mutex.h>

#include "core/hex.h"

namespace bulwark::server {

CredentialCache::CredentialCache(int64_t ttl_us, size_t max_entries)
    : ttl_us_(ttl_us), max_entries_(max_entries) {}

std::optional<Principal> CredentialCache::Find(std::string_view api_key, int64_t now_us) {
  if (ttl_us_ <= 0) return std::nullopt;
  const std::string digest = Sha256Hex(api_key);
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(digest);
  if (it == entries_.end()) return std::nullopt;
  if (now_us >= it->second.expires_us) {
    entries_.erase(it);
    return std::nullopt;
  }
  return it->second.principal;
}

void CredentialCache::Insert(std::string_view api_key, const Principal& principal, int64_t now_us) {
  if (ttl_us_ <= 0) return;
  const std::string digest = Sha256Hex(api_key);
  absl::MutexLock lock(&mu_);
  if (entries_.size() >= max_entries_) entries_.clear();
  entries_[digest] = {principal, now_us + ttl_us_};
}

void CredentialCache::Clear() {
  absl::MutexLock lock(&mu_);
  entries_.clear();
}

}  // namespace bulwark::server
