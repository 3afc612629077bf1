// Token buckets per API key (see rate_limiter.h).
#include "server/rate_limiter.h"

#include <absl/synchronization/mutex.h>

#include <algorithm>

#include "core/strings.h"

namespace bulwark::server {

RateLimiter::RateLimiter(double rate_per_second, double burst, size_t max_keys)
    : rate_(rate_per_second), burst_(std::max(1.0, burst)), max_keys_(std::max<size_t>(1, max_keys)) {}

size_t RateLimiter::tracked_keys() const {
  absl::MutexLock lock(&mu_);
  return buckets_.size();
}

void RateLimiter::EvictLocked(int64_t now_us) {
  absl::erase_if(buckets_, [&](const auto& item) {
    const double elapsed_s = static_cast<double>(std::max<int64_t>(0, now_us - item.second.last_us)) / 1e6;
    return item.second.tokens + elapsed_s * rate_ >= burst_;
  });
  if (buckets_.size() < max_keys_) return;
  auto oldest = std::min_element(buckets_.begin(), buckets_.end(), [](const auto& a, const auto& b) {
    return a.second.last_us < b.second.last_us;
  });
  buckets_.erase(oldest);
}

RateLimiter::Decision RateLimiter::Acquire(std::string_view key, int64_t now_us) {
  if (!enabled()) return {};
  absl::MutexLock lock(&mu_);
  auto it = buckets_.find(ToAbsl(key));
  if (it == buckets_.end()) {
    if (buckets_.size() >= max_keys_) EvictLocked(now_us);
    it = buckets_.emplace(std::string(key), Bucket{burst_, now_us}).first;
  }
  Bucket& bucket = it->second;
  const int64_t elapsed_us = std::max<int64_t>(0, now_us - bucket.last_us);
  bucket.tokens = std::min(burst_, bucket.tokens + static_cast<double>(elapsed_us) / 1e6 * rate_);
  bucket.last_us = std::max(bucket.last_us, now_us);
  if (bucket.tokens >= 1.0) {
    bucket.tokens -= 1.0;
    return {};
  }
  return {false, (1.0 - bucket.tokens) / rate_};
}

void RateLimiter::Charge(std::string_view key, double tokens, int64_t now_us) {
  if (!enabled() || !(tokens > 0)) return;
  absl::MutexLock lock(&mu_);
  auto it = buckets_.find(ToAbsl(key));
  if (it == buckets_.end()) return;
  Bucket& bucket = it->second;
  const int64_t elapsed_us = std::max<int64_t>(0, now_us - bucket.last_us);
  bucket.tokens = std::min(burst_, bucket.tokens + static_cast<double>(elapsed_us) / 1e6 * rate_);
  bucket.last_us = std::max(bucket.last_us, now_us);
  bucket.tokens = std::max(-burst_, bucket.tokens - tokens);
}

}  // namespace bulwark::server
