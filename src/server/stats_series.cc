// Windows of counter deltas and latency quantiles (see stats_series.h).
#include "server/stats_series.h"

#include <absl/synchronization/mutex.h>

#include <algorithm>
#include <string>

namespace bulwark::server {
namespace {

StatsCounters Minus(const StatsCounters& a, const StatsCounters& b) {
  StatsCounters d;
  d.requests = a.requests - b.requests;
  for (int i = 0; i < kRejectReasonCount; ++i) d.rejects[i] = a.rejects[i] - b.rejects[i];
  d.entries_added = a.entries_added - b.entries_added;
  d.quarantined = a.quarantined - b.quarantined;
  d.released = a.released - b.released;
  d.rejected = a.rejected - b.rejected;
  d.signature_failures = a.signature_failures - b.signature_failures;
  d.withheld_candidates = a.withheld_candidates - b.withheld_candidates;
  for (int i = 0; i < kGateDecisionCount; ++i)
    d.gate_decisions[i] = a.gate_decisions[i] - b.gate_decisions[i];
  d.honeypot_blocks = a.honeypot_blocks - b.honeypot_blocks;
  d.honeypot_refusals = a.honeypot_refusals - b.honeypot_refusals;
  return d;
}

}  // namespace

nlohmann::json StatsCounters::ToJson() const {
  nlohmann::json j(nlohmann::json::value_t::object);
  j["requests"] = requests;
  nlohmann::json& by_reason = j["rejects"] = nlohmann::json::object();
  for (int i = 0; i < kRejectReasonCount; ++i) {
    by_reason[std::string(ToString(static_cast<RejectReason>(i)))] = rejects[i];
  }
  j["entries_added"] = entries_added;
  j["quarantined"] = quarantined;
  j["released"] = released;
  j["rejected"] = rejected;
  j["signature_failures"] = signature_failures;
  j["withheld_candidates"] = withheld_candidates;
  nlohmann::json& gate = j["gate_decisions"] = nlohmann::json::object();
  for (int i = 0; i < kGateDecisionCount; ++i) {
    gate[std::string(ToString(static_cast<GateDecision>(i)))] = gate_decisions[i];
  }
  j["honeypot_blocks"] = honeypot_blocks;
  j["honeypot_refusals"] = honeypot_refusals;
  return j;
}

StatsSeries::StatsSeries(int64_t interval_us, size_t capacity, Snapshot snapshot)
    : interval_us_(std::max<int64_t>(1, interval_us)),
      capacity_(std::max<size_t>(1, capacity)),
      snapshot_(std::move(snapshot)) {}

double StatsSeries::Quantile(const std::array<int64_t, Metrics::kLatencyBuckets.size() + 1>& buckets,
                             int64_t count, double q) {
  if (count <= 0) return 0;
  const double rank = q * static_cast<double>(count);
  int64_t seen = 0;
  for (size_t i = 0; i < Metrics::kLatencyBuckets.size(); ++i) {
    seen += buckets[i];
    if (static_cast<double>(seen) >= rank) return Metrics::kLatencyBuckets[i];
  }
  return Metrics::kLatencyBuckets.back();
}

void StatsSeries::Push(StatsSample sample) {
  samples_.push_back(std::move(sample));
  while (samples_.size() > capacity_) samples_.pop_front();
}

void StatsSeries::CloseEndedWindows(int64_t now_us) {
  if (!started_) {
    started_ = true;
    window_start_us_ = now_us - now_us % interval_us_;
    at_window_start_ = snapshot_ ? snapshot_() : StatsCounters{};
    return;
  }
  if (now_us < window_start_us_ + interval_us_) return;
  // The window that was open: every counter change since it started, and its latencies.
  const StatsCounters now = snapshot_ ? snapshot_() : StatsCounters{};
  StatsSample closed;
  closed.start_us = window_start_us_;
  closed.delta = Minus(now, at_window_start_);
  closed.latency_count = latency_count_;
  closed.p50_seconds = Quantile(buckets_, latency_count_, 0.50);
  closed.p99_seconds = Quantile(buckets_, latency_count_, 0.99);
  Push(std::move(closed));
  at_window_start_ = now;
  buckets_ = {};
  latency_count_ = 0;
  // Windows without any request in between: zero deltas, at most `capacity_` of them.
  const int64_t ended = (now_us - window_start_us_) / interval_us_;  // >= 1
  const int64_t empty = std::min<int64_t>(ended - 1, static_cast<int64_t>(capacity_));
  const int64_t current_start = window_start_us_ + ended * interval_us_;
  for (int64_t i = empty; i >= 1; --i) {
    StatsSample idle;
    idle.start_us = current_start - i * interval_us_;
    Push(std::move(idle));
  }
  window_start_us_ = current_start;
}

void StatsSeries::Observe(int64_t now_us, double seconds) {
  absl::MutexLock lock(&mu_);
  CloseEndedWindows(now_us);
  size_t bucket = 0;
  while (bucket < Metrics::kLatencyBuckets.size() && seconds > Metrics::kLatencyBuckets[bucket]) ++bucket;
  ++buckets_[bucket];
  ++latency_count_;
}

void StatsSeries::Tick(int64_t now_us) {
  absl::MutexLock lock(&mu_);
  CloseEndedWindows(now_us);
}

std::vector<StatsSample> StatsSeries::Samples() const {
  absl::MutexLock lock(&mu_);
  return {samples_.begin(), samples_.end()};
}

nlohmann::json StatsSeries::ToJson() const {
  const std::vector<StatsSample> samples = Samples();
  nlohmann::json windows = nlohmann::json::array();
  const double interval_s = static_cast<double>(interval_us_) / 1e6;
  for (const StatsSample& s : samples) {
    nlohmann::json w = s.delta.ToJson();
    w["start_us"] = s.start_us;
    w["requests_per_s"] = static_cast<double>(s.delta.requests) / interval_s;
    w["latency_count"] = s.latency_count;
    w["p50_ms"] = s.p50_seconds * 1000;
    w["p99_ms"] = s.p99_seconds * 1000;
    windows.push_back(std::move(w));
  }
  nlohmann::json j(nlohmann::json::value_t::object);
  j["interval_s"] = interval_s;
  j["capacity"] = capacity_;
  j["windows"] = std::move(windows);
  return j;
}

}  // namespace bulwark::server
