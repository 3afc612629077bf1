// ExpirySweeper: purges expired entries and forgets old idempotency records (issue #15 point 1).
//
// An entry whose "bulwark.expires_at_us" (store/entry_keys.h) has passed is never returned by
// search, get or list from that instant on, sweeper or not; the sweeper then erases it for good:
// a purge through the store (text, metadata and embedding gone from the entry and every history
// event; the history keeps a signed "purge" event by actor "bulwark:expiry" with detail
// {"reason": "expired"}). It also deletes idempotency records older than the retention window, after
// which a retried add with the same Idempotency-Key stores again. `bulwark serve` runs one on a
// schedule (--expiry-sweep-ms); SweepOnce is the unit the schedule repeats.
#pragma once

#include <absl/status/statusor.h>
#include <absl/synchronization/mutex.h>

#include <cstdint>
#include <functional>
#include <string_view>
#include <thread>

#include "bulwark/env.h"
#include "store/memory_store.h"

namespace bulwark {

// How long an idempotency record answers a retry: 24 hours.
inline constexpr int64_t kIdempotencyRetentionUs = int64_t{24} * 3600 * 1'000'000;
// The actor of the sweeper's purge events.
inline constexpr char kExpiryActor[] = "bulwark:expiry";

struct SweepResult {
  int64_t purged = 0;               // expired entries purged
  int64_t idempotency_deleted = 0;  // idempotency records past retention
};

class ExpirySweeper {
 public:
  struct Options {
    int interval_ms = 60'000;  // between sweeps of the background thread; >= 10
    int batch = 1000;          // entries purged per sweep at most
    // Set: only the entries of namespaces it accepts are purged (a replica of a replica group
    // sweeps the namespaces it leads; doc/scale-out.md). Empty: every namespace.
    std::function<bool(std::string_view)> sweeps;
  };
  // `store` and `env` must outlive the sweeper.
  ExpirySweeper(MemoryStore* store, Env* env, const Options& options);
  ~ExpirySweeper();  // stops the thread
  ExpirySweeper(const ExpirySweeper&) = delete;
  ExpirySweeper& operator=(const ExpirySweeper&) = delete;

  // One sweep: purges up to `batch` entries expired at the env's now (an entry another writer
  // purged meanwhile is skipped) and deletes idempotency records older than the retention.
  // Returns what it did; the store's first error otherwise (what it purged before stays purged).
  [[nodiscard]] absl::StatusOr<SweepResult> SweepOnce();

  // Starts the background thread (sweeps every interval_ms; errors are logged, never fatal); Stop
  // ends it and waits. Both idempotent.
  void Start();
  void Stop();

 private:
  void Run();

  MemoryStore* store_;
  Env* env_;
  const Options options_;
  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace bulwark
