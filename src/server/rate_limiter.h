// RateLimiter: one token bucket per API key. A bucket holds at most `burst` tokens and refills at
// `rate_per_second`; each request takes one token, and a request that finds the bucket empty is
// refused with the time until the next token (the service answers 429 with Retry-After). Work
// beyond a plain request (large answers, long handlers: issue #18 point 9) is charged afterwards
// with Charge, which may take a bucket into debt (down to -burst): the key then waits until the
// debt is repaid, so one tenant's heavy searches cost it tokens instead of costing others time.
//
// Memory is bounded: at most `max_keys` buckets are kept. A full bucket is the same as no bucket,
// so when the table is full the limiter first drops full buckets, then the oldest-touched one.
// Time is passed in by the caller (monotonic microseconds), so tests drive it directly.
// Thread-safe.
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/synchronization/mutex.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace bulwark::server {

class RateLimiter {
 public:
  // rate_per_second <= 0 disables limiting (every Acquire succeeds). burst >= 1.
  RateLimiter(double rate_per_second, double burst, size_t max_keys = 100'000);

  struct Decision {
    bool allowed = true;
    double retry_after_seconds = 0;  // > 0 when refused: when the next token will be there
  };

  // Takes one token from `key`'s bucket at time `now_us`. A key seen for the first time starts
  // with a full bucket. Time going backwards is treated as no time passing.
  Decision Acquire(std::string_view key, int64_t now_us);

  // Takes `tokens` more from `key`'s bucket for work already done (never refuses; the bucket may go
  // down to -burst). Unknown keys and tokens <= 0 change nothing.
  void Charge(std::string_view key, double tokens, int64_t now_us);

  bool enabled() const { return rate_ > 0; }
  size_t tracked_keys() const;

 private:
  struct Bucket {
    double tokens = 0;
    int64_t last_us = 0;
  };
  void EvictLocked(int64_t now_us) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);  // requires mu_

  const double rate_;
  const double burst_;
  const size_t max_keys_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Bucket> buckets_ ABSL_GUARDED_BY(mu_);
};

}  // namespace bulwark::server
