// Counters, histograms and their Prometheus text rendering (see metrics.h).
#include "server/metrics.h"

#include <absl/synchronization/mutex.h>

#include <charconv>
#include <cmath>
#include <sstream>

namespace bulwark::server {
namespace {

// Prometheus label values escape backslash, double quote and newline.
std::string Escape(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

// Shortest text that reads back as `v` ("0.0005", "10", "+Inf").
std::string FormatDouble(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buffer[400];  // fixed notation of any double fits
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), v, std::chars_format::fixed);
  return ec == std::errc() ? std::string(buffer, end) : "NaN";
}

void Header(std::ostringstream& out, std::string_view name, std::string_view help, std::string_view type) {
  out << "# HELP " << name << " " << help << "\n# TYPE " << name << " " << type << "\n";
}

constexpr std::string_view kEventNames[kEventCounterCount][2] = {
    {"bulwark_entries_added_total", "Entries acknowledged by POST /v1/memories."},
    {"bulwark_entries_quarantined_total", "Entries moved into quarantine."},
    {"bulwark_quarantine_released_total", "Quarantined entries released to active."},
    {"bulwark_quarantine_rejected_total", "Quarantined entries rejected (deleted)."},
    {"bulwark_search_withheld_candidates_total",
     "Search candidates withheld because they failed signature verification."},
};

}  // namespace

std::string_view ToString(RejectReason reason) {
  switch (reason) {
    case RejectReason::kUnauthenticated:
      return "unauthenticated";
    case RejectReason::kForbidden:
      return "forbidden";
    case RejectReason::kRateLimited:
      return "rate_limited";
    case RejectReason::kOverloaded:
      return "overloaded";
    case RejectReason::kBadRequest:
      return "bad_request";
    case RejectReason::kPayloadTooLarge:
      return "payload_too_large";
  }
  return "unknown";
}

void Metrics::ObserveRequest(std::string_view route, std::string_view method, int status, double seconds) {
  absl::MutexLock lock(&mu_);
  ++requests_[{std::string(route), std::string(method), status}];
  Add(latency_[std::string(route)], kLatencyBuckets, seconds);
}

void Metrics::Add(Histogram& h, const std::array<double, 14>& bounds, double seconds) {
  size_t bucket = 0;
  while (bucket < bounds.size() && seconds > bounds[bucket]) ++bucket;
  if (bucket < bounds.size()) ++h.buckets[bucket];
  ++h.count;
  h.sum += seconds;
}

void Metrics::ObserveSearchStages(const SearchStageTimes& stages) {
  absl::MutexLock lock(&mu_);
  const double times[] = {stages.embed,  stages.gate,    stages.index,
                          stages.verify, stages.observe, stages.smooth};
  for (size_t i = 0; i < stages_.size(); ++i) {
    if (times[i] > 0) Add(stages_[i], kStageBuckets, times[i]);
  }
}

void Metrics::RenderHistogram(std::ostream& out, std::string_view name, std::string_view label,
                              const Histogram& h, const std::array<double, 14>& bounds) {
  int64_t cumulative = 0;
  for (size_t i = 0; i < bounds.size(); ++i) {
    cumulative += h.buckets[i];
    out << name << "_bucket{" << label << (label.empty() ? "" : ",") << "le=\"" << FormatDouble(bounds[i])
        << "\"} " << cumulative << "\n";
  }
  out << name << "_bucket{" << label << (label.empty() ? "" : ",") << "le=\"+Inf\"} " << h.count << "\n";
  const std::string labels = label.empty() ? "" : "{" + std::string(label) + "}";
  out << name << "_sum" << labels << " " << FormatDouble(h.sum) << "\n";
  out << name << "_count" << labels << " " << h.count << "\n";
}

void Metrics::CountReject(RejectReason reason) {
  absl::MutexLock lock(&mu_);
  ++rejects_[static_cast<int>(reason)];
}

void Metrics::Count(EventCounter counter, int64_t n) {
  absl::MutexLock lock(&mu_);
  events_[static_cast<int>(counter)] += n;
}

void Metrics::CountGateDecision(GateDecision decision) {
  absl::MutexLock lock(&mu_);
  ++gate_decisions_[static_cast<int>(decision)];
}

int64_t Metrics::gate_decisions(GateDecision decision) const {
  absl::MutexLock lock(&mu_);
  return gate_decisions_[static_cast<int>(decision)];
}

int64_t Metrics::requests_total() const {
  absl::MutexLock lock(&mu_);
  int64_t total = 0;
  for (const auto& [key, n] : requests_) total += n;
  return total;
}

int64_t Metrics::rejects(RejectReason reason) const {
  absl::MutexLock lock(&mu_);
  return rejects_[static_cast<int>(reason)];
}

int64_t Metrics::count(EventCounter counter) const {
  absl::MutexLock lock(&mu_);
  return events_[static_cast<int>(counter)];
}

std::string Metrics::Render(const std::vector<Sample>& extra,
                            const LatencyHistogram::Snapshot* write_gate) const {
  std::ostringstream out;
  absl::MutexLock lock(&mu_);

  Header(out, "bulwark_http_requests_total", "HTTP requests answered, by route template, method and status.",
         "counter");
  for (const auto& [key, n] : requests_) {
    const auto& [route, method, status] = key;
    out << "bulwark_http_requests_total{route=\"" << Escape(route) << "\",method=\"" << Escape(method)
        << "\",code=\"" << status << "\"} " << n << "\n";
  }

  Header(out, "bulwark_http_request_duration_seconds", "Time from routing to response, by route template.",
         "histogram");
  for (const auto& [route, h] : latency_) {
    RenderHistogram(out, "bulwark_http_request_duration_seconds", "route=\"" + Escape(route) + "\"", h,
                    kLatencyBuckets);
  }

  Header(out, "bulwark_search_stage_seconds",
         "Time of each stage of a search or answer: embed, gate, index (ranking), verify (reading the "
         "candidates back and checking their tags), observe (honeypot monitor), smooth.",
         "histogram");
  constexpr std::string_view kStageNames[] = {"embed", "gate", "index", "verify", "observe", "smooth"};
  for (size_t i = 0; i < stages_.size(); ++i) {
    RenderHistogram(out, "bulwark_search_stage_seconds", "stage=\"" + std::string(kStageNames[i]) + "\"",
                    stages_[i], kStageBuckets);
  }

  Header(out, "bulwark_requests_rejected_total", "Requests refused before reaching the store, by reason.",
         "counter");
  for (int i = 0; i < kRejectReasonCount; ++i) {
    out << "bulwark_requests_rejected_total{reason=\"" << ToString(static_cast<RejectReason>(i)) << "\"} "
        << rejects_[i] << "\n";
  }

  Header(out, "bulwark_query_gate_decisions_total",
         "Query gate decisions on searches and answers (no_gate: the namespace has no fitted gate).",
         "counter");
  for (int i = 0; i < kGateDecisionCount; ++i) {
    out << "bulwark_query_gate_decisions_total{decision=\"" << ToString(static_cast<GateDecision>(i))
        << "\"} " << gate_decisions_[i] << "\n";
  }

  for (int i = 0; i < kEventCounterCount; ++i) {
    Header(out, kEventNames[i][0], kEventNames[i][1], "counter");
    out << kEventNames[i][0] << " " << events_[i] << "\n";
  }

  if (write_gate != nullptr) {
    Header(out, "bulwark_write_gate_seconds",
           "Time the write gate took to screen one entry (every detector, text and metadata).", "histogram");
    Histogram h;
    h.buckets = write_gate->buckets;
    h.count = write_gate->count;
    h.sum = write_gate->sum_seconds;
    RenderHistogram(out, "bulwark_write_gate_seconds", "", h, LatencyHistogram::kBounds);
  }
  for (const Sample& s : extra) {
    Header(out, s.name, s.help, s.type);
    out << s.name << (s.labels.empty() ? "" : "{" + s.labels + "}") << " " << FormatDouble(s.value) << "\n";
  }
  return out.str();
}

}  // namespace bulwark::server
