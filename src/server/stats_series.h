// StatsSeries: a small in-memory time series of the service's counters for the dashboard's health
// screen (GET /v1/admin/stats, doc/dashboard.md). The browser gets numbers as JSON; it never
// parses Prometheus text.
//
// Time is cut into fixed windows (10 s by default). Every answered request adds its latency to the
// open window; when a window has ended, the next Observe or Tick closes it: the window's sample
// holds the *change* of each cumulative counter over the window (taken from a snapshot callback
// called once per closed window) and the p50/p99 of the window's request latencies. The last
// `capacity` samples are kept in a ring (360 x 10 s = one hour), so memory is bounded whatever
// the traffic or the idle time. Windows without any request are closed with zero deltas (at most
// `capacity` of them are generated after a long idle time).
//
// Thread-safe: one mutex; the snapshot callback runs under it (it must not call back in).
#pragma once

#include <absl/synchronization/mutex.h>

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gate/query_gate.h"
#include "server/metrics.h"

namespace bulwark::server {

// Cumulative counters at one instant (all since the process started).
struct StatsCounters {
  int64_t requests = 0;
  std::array<int64_t, kRejectReasonCount> rejects{};
  int64_t entries_added = 0;
  int64_t quarantined = 0;
  int64_t released = 0;
  int64_t rejected = 0;
  int64_t signature_failures = 0;
  int64_t withheld_candidates = 0;
  std::array<int64_t, kGateDecisionCount> gate_decisions{};
  int64_t honeypot_blocks = 0;    // sessions or principals the honeypot monitor blocked
  int64_t honeypot_refusals = 0;  // searches refused as session_blocked

  // {"requests", "rejects": {reason: n}, "entries_added", ..., "gate_decisions": {decision: n}}.
  nlohmann::json ToJson() const;
};

// One closed window.
struct StatsSample {
  int64_t start_us = 0;  // window start (wall clock, microseconds since the epoch)
  StatsCounters delta;   // change of every counter over the window
  int64_t latency_count = 0;
  double p50_seconds = 0;  // upper bound of the latency bucket holding the median; 0 if no request
  double p99_seconds = 0;
};

class StatsSeries {
 public:
  using Snapshot = std::function<StatsCounters()>;

  // `interval_us` >= 1; `capacity` >= 1 windows kept. `snapshot` reads the current counters.
  StatsSeries(int64_t interval_us, size_t capacity, Snapshot snapshot);

  // Adds one request's latency to the window holding `now_us` (closing ended windows first).
  void Observe(int64_t now_us, double seconds);
  // Closes every window that ended before `now_us`.
  void Tick(int64_t now_us);

  // The closed windows, oldest first (at most `capacity`).
  std::vector<StatsSample> Samples() const;
  // {"interval_s", "capacity", "windows": [{"start_us", "requests_per_s", "p50_ms", "p99_ms",
  //  "requests", "rejects": {...}, ...}]}, oldest first.
  nlohmann::json ToJson() const;

  // The upper bound of the bucket holding quantile `q` (0 < q <= 1) of `buckets` (counts per
  // Metrics::kLatencyBuckets bound, the last one for +Inf, which reports the largest finite bound).
  static double Quantile(const std::array<int64_t, Metrics::kLatencyBuckets.size() + 1>& buckets,
                         int64_t count, double q);

 private:
  void CloseEndedWindows(int64_t now_us) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Push(StatsSample sample) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const int64_t interval_us_;
  const size_t capacity_;
  const Snapshot snapshot_;

  mutable absl::Mutex mu_;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  int64_t window_start_us_ ABSL_GUARDED_BY(mu_) = 0;
  StatsCounters at_window_start_ ABSL_GUARDED_BY(mu_);
  std::array<int64_t, Metrics::kLatencyBuckets.size() + 1> buckets_{};  // guarded by mu_
  int64_t latency_count_ ABSL_GUARDED_BY(mu_) = 0;
  std::deque<StatsSample> samples_ ABSL_GUARDED_BY(mu_);
};

}  // namespace bulwark::server
