// LatencyHistogram: a fixed-bucket histogram of durations that any thread may update without a
// lock (one relaxed atomic increment per bucket, count and sum), for latencies measured deep in
// the store (the write gate's screening) and read at /metrics scrape time.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

namespace bulwark {

class LatencyHistogram {
 public:
  // Upper bounds in seconds (+Inf implicit): 10 us .. 10 s, as /metrics' stage histograms.
  static constexpr std::array<double, 14> kBounds = {1e-5,   2.5e-5, 5e-5, 1e-4,   2.5e-4, 5e-4, 1e-3,
                                                     2.5e-3, 5e-3,   1e-2, 2.5e-2, 0.1,    1.0,  10.0};

  struct Snapshot {
    std::array<int64_t, kBounds.size()> buckets{};  // non-cumulative; above the last bound: count - sum
    int64_t count = 0;
    double sum_seconds = 0;
  };

  void Observe(double seconds) {
    size_t bucket = 0;
    while (bucket < kBounds.size() && seconds > kBounds[bucket]) ++bucket;
    if (bucket < kBounds.size()) buckets_[bucket].fetch_add(1, std::memory_order_relaxed);
    count_.fetch_add(1, std::memory_order_relaxed);
    sum_ns_.fetch_add(static_cast<int64_t>(seconds * 1e9), std::memory_order_relaxed);
  }

  // The counts now (each read on its own: a concurrent Observe may show in count and not yet in
  // its bucket, which Prometheus tolerates).
  Snapshot Take() const {
    Snapshot s;
    for (size_t i = 0; i < kBounds.size(); ++i) s.buckets[i] = buckets_[i].load(std::memory_order_relaxed);
    s.count = count_.load(std::memory_order_relaxed);
    s.sum_seconds = static_cast<double>(sum_ns_.load(std::memory_order_relaxed)) / 1e9;
    return s;
  }

 private:
  std::array<std::atomic<int64_t>, kBounds.size()> buckets_{};
  std::atomic<int64_t> count_{0};
  std::atomic<int64_t> sum_ns_{0};
};

}  // namespace bulwark
