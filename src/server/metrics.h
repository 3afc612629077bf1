// Metrics: the service's counters and latency histograms, rendered in the Prometheus text
// exposition format (version 0.0.4) for GET /metrics.
//
// Labels are drawn from closed sets only: a route *template* ("/v1/memories/{id}"), an HTTP method,
// a status code, a fixed reject reason. No label ever carries a namespace, principal, id or any
// other caller-supplied string, so the metrics reveal nothing about tenants.
// Thread-safe; one mutex guards everything (its critical sections are a few increments).
#pragma once

#include <absl/synchronization/mutex.h>

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "core/latency_histogram.h"
#include "gate/query_gate.h"
#include "retrieval/defended_retriever.h"

namespace bulwark::server {

// Why a request was refused before or instead of reaching the store.
enum class RejectReason {
  kUnauthenticated,  // 401
  kForbidden,        // 403
  kRateLimited,      // 429
  kOverloaded,       // 503, shed by the connection queue
  kBadRequest,       // 400 (malformed, unknown field, wrong type, out of range)
  kPayloadTooLarge,  // 413
};
constexpr int kRejectReasonCount = 6;
std::string_view ToString(RejectReason reason);

// Counters of things that happened to entries through this server process.
enum class EventCounter {
  kEntriesAdded,              // entries acknowledged by POST /v1/memories
  kEntriesQuarantined,        // entries moved into quarantine (write-time verdict or an operator)
  kQuarantineReleased,        // quarantine -> active
  kQuarantineRejected,        // quarantine -> deleted
  kSearchWithheldCandidates,  // search candidates withheld because they failed verification
};
constexpr int kEventCounterCount = 5;

// One extra sample supplied at scrape time (gauges owned elsewhere, e.g. queue depth).
struct Sample {
  std::string name;  // full metric name
  std::string help;
  std::string type;  // "gauge" or "counter"
  double value = 0;
  std::string labels;  // rendered as name{labels}, e.g. version="0.1.0"; from closed sets only
};

class Metrics {
 public:
  // Upper bounds (seconds) of the latency histogram buckets; +Inf is implicit.
  static constexpr std::array<double, 14> kLatencyBuckets = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                             0.1,    0.25,  0.5,    1.0,   2.5,  5.0,   10.0};

  // Counts one answered request and its latency. `route` must be a route template or "unmatched".
  void ObserveRequest(std::string_view route, std::string_view method, int status, double seconds);
  void CountReject(RejectReason reason);
  void Count(EventCounter counter, int64_t n = 1);
  // Counts a query gate decision.
  void CountGateDecision(GateDecision decision);
  // Adds one search's time per stage (embed, gate, index, verify, observe, smooth) to the stage
  // histograms; stages that did not run (0 s) are not counted.
  void ObserveSearchStages(const SearchStageTimes& stages);

  int64_t requests_total() const;
  int64_t rejects(RejectReason reason) const;
  int64_t count(EventCounter counter) const;
  int64_t gate_decisions(GateDecision decision) const;

  // The whole exposition: the counters above plus `extra` samples and, when given, the write
  // gate's screening latency (bulwark_write_gate_seconds).
  std::string Render(const std::vector<Sample>& extra,
                     const LatencyHistogram::Snapshot* write_gate = nullptr) const;

 private:
  struct Histogram {
    std::array<int64_t, kLatencyBuckets.size()> buckets{};  // non-cumulative counts
    int64_t count = 0;
    double sum = 0;
  };
  static void Add(Histogram& h, const std::array<double, 14>& bounds, double seconds);
  static void RenderHistogram(std::ostream& out, std::string_view name, std::string_view label,
                              const Histogram& h, const std::array<double, 14>& bounds);

  mutable absl::Mutex mu_;
  std::map<std::tuple<std::string, std::string, int>, int64_t> requests_
      ABSL_GUARDED_BY(mu_);                                        // (route, method, status)
  std::map<std::string, Histogram> latency_ ABSL_GUARDED_BY(mu_);  // by route
  std::array<int64_t, kRejectReasonCount> rejects_ ABSL_GUARDED_BY(mu_){};
  std::array<int64_t, kEventCounterCount> events_ ABSL_GUARDED_BY(mu_){};
  std::array<int64_t, kGateDecisionCount> gate_decisions_ ABSL_GUARDED_BY(mu_){};
  // Search stages take microseconds: finer buckets than requests.
  static constexpr std::array<double, 14> kStageBuckets = {1e-5,   2.5e-5, 5e-5, 1e-4,   2.5e-4, 5e-4, 1e-3,
                                                           2.5e-3, 5e-3,   1e-2, 2.5e-2, 0.1,    1.0,  10.0};
  std::array<Histogram, 6> stages_ ABSL_GUARDED_BY(mu_){};  // embed, gate, index, verify, observe, smooth
};

}  // namespace bulwark::server
