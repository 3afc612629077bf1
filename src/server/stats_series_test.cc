// The dashboard's time series: window deltas, latency quantiles, idle windows, the bound.
#include "server/stats_series.h"

#include <gtest/gtest.h>

namespace bulwark::server {
namespace {

constexpr int64_t kSecond = 1'000'000;

TEST(StatsSeriesTest, ClosedWindowHoldsDeltasAndQuantiles) {
  StatsCounters counters;
  StatsSeries series(10 * kSecond, 360, [&] { return counters; });
  series.Tick(100 * kSecond);  // opens the window [100 s, 110 s)
  counters.requests = 5;
  counters.rejects[static_cast<int>(RejectReason::kUnauthenticated)] = 2;
  counters.quarantined = 1;
  counters.gate_decisions[static_cast<int>(GateDecision::kReject)] = 3;
  for (int i = 0; i < 99; ++i) series.Observe(101 * kSecond, 0.0004);  // bucket <= 0.5 ms
  series.Observe(102 * kSecond, 0.2);                                  // bucket <= 250 ms
  EXPECT_TRUE(series.Samples().empty());
  series.Tick(111 * kSecond);
  const std::vector<StatsSample> samples = series.Samples();
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].start_us, 100 * kSecond);
  EXPECT_EQ(samples[0].delta.requests, 5);
  EXPECT_EQ(samples[0].delta.rejects[static_cast<int>(RejectReason::kUnauthenticated)], 2);
  EXPECT_EQ(samples[0].delta.quarantined, 1);
  EXPECT_EQ(samples[0].latency_count, 100);
  EXPECT_DOUBLE_EQ(samples[0].p50_seconds, 0.0005);
  EXPECT_DOUBLE_EQ(samples[0].p99_seconds, 0.0005);
  const nlohmann::json j = series.ToJson();
  EXPECT_EQ(j["windows"][0]["gate_decisions"]["reject"], 3);
  EXPECT_DOUBLE_EQ(j["windows"][0]["requests_per_s"].get<double>(), 0.5);
  EXPECT_EQ(j["interval_s"], 10.0);
}

TEST(StatsSeriesTest, NextWindowCountsOnlyItsOwnChanges) {
  StatsCounters counters;
  StatsSeries series(10 * kSecond, 360, [&] { return counters; });
  series.Tick(0);
  counters.released = 4;
  series.Tick(10 * kSecond);
  counters.released = 5;
  series.Observe(15 * kSecond, 1.0);
  series.Tick(20 * kSecond);
  const std::vector<StatsSample> samples = series.Samples();
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].delta.released, 4);
  EXPECT_EQ(samples[1].delta.released, 1);
  EXPECT_DOUBLE_EQ(samples[1].p99_seconds, 1.0);
}

TEST(StatsSeriesTest, IdleTimeMakesEmptyWindowsAndStaysBounded) {
  StatsCounters counters;
  StatsSeries series(10 * kSecond, 6, [&] { return counters; });
  series.Tick(0);
  series.Tick(35 * kSecond);  // closes [0,10), [10,20), [20,30)
  std::vector<StatsSample> samples = series.Samples();
  ASSERT_EQ(samples.size(), 3u);
  EXPECT_EQ(samples[2].start_us, 20 * kSecond);
  EXPECT_EQ(samples[2].latency_count, 0);
  series.Tick(100'000 * kSecond);  // a long idle time: still at most 6 windows
  samples = series.Samples();
  ASSERT_EQ(samples.size(), 6u);
  EXPECT_EQ(samples.back().start_us, 100'000 * kSecond - 10 * kSecond);
  for (size_t i = 1; i < samples.size(); ++i) {
    EXPECT_EQ(samples[i].start_us - samples[i - 1].start_us, 10 * kSecond);
  }
}

TEST(StatsSeriesTest, QuantileOfEmptyWindowIsZeroAndOverflowIsLargestBound) {
  std::array<int64_t, Metrics::kLatencyBuckets.size() + 1> buckets{};
  EXPECT_EQ(StatsSeries::Quantile(buckets, 0, 0.5), 0);
  buckets.back() = 3;
  EXPECT_DOUBLE_EQ(StatsSeries::Quantile(buckets, 3, 0.99), Metrics::kLatencyBuckets.back());
}

}  // namespace
}  // namespace bulwark::server
