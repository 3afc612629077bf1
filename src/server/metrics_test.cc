// Prometheus rendering: counters, cumulative histogram buckets, labels from closed sets.
#include "server/metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <ctime>

#include "server/process_metrics.h"

namespace bulwark::server {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(MetricsTest, CountsRequestsByRouteMethodAndCode) {
  Metrics m;
  m.ObserveRequest("/v1/memories/{id}", "GET", 200, 0.002);
  m.ObserveRequest("/v1/memories/{id}", "GET", 200, 0.002);
  m.ObserveRequest("/v1/memories/{id}", "GET", 404, 0.0001);
  EXPECT_EQ(m.requests_total(), 3);
  std::string text = m.Render({});
  EXPECT_THAT(
      text,
      HasSubstr("bulwark_http_requests_total{route=\"/v1/memories/{id}\",method=\"GET\",code=\"200\"} 2\n"));
  EXPECT_THAT(
      text,
      HasSubstr("bulwark_http_requests_total{route=\"/v1/memories/{id}\",method=\"GET\",code=\"404\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE bulwark_http_request_duration_seconds histogram\n"));
}

TEST(MetricsTest, HistogramBucketsAreCumulative) {
  Metrics m;
  m.ObserveRequest("r", "GET", 200, 0.0004);  // <= 0.0005
  m.ObserveRequest("r", "GET", 200, 0.003);   // <= 0.005
  m.ObserveRequest("r", "GET", 200, 100.0);   // only +Inf
  std::string text = m.Render({});
  EXPECT_THAT(text, HasSubstr("bulwark_http_request_duration_seconds_bucket{route=\"r\",le=\"0.0005\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("bulwark_http_request_duration_seconds_bucket{route=\"r\",le=\"0.005\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("bulwark_http_request_duration_seconds_bucket{route=\"r\",le=\"10\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("bulwark_http_request_duration_seconds_bucket{route=\"r\",le=\"+Inf\"} 3\n"));
  EXPECT_THAT(text, HasSubstr("bulwark_http_request_duration_seconds_count{route=\"r\"} 3\n"));
}

TEST(MetricsTest, RejectsEventsAndExtraSamples) {
  Metrics m;
  m.CountReject(RejectReason::kRateLimited);
  m.CountReject(RejectReason::kRateLimited);
  m.Count(EventCounter::kEntriesQuarantined, 3);
  EXPECT_EQ(m.rejects(RejectReason::kRateLimited), 2);
  EXPECT_EQ(m.count(EventCounter::kEntriesQuarantined), 3);
  std::string text = m.Render({{"bulwark_signature_failures_total", "Bad rows.", "counter", 7}});
  EXPECT_THAT(text, HasSubstr("bulwark_requests_rejected_total{reason=\"rate_limited\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("bulwark_requests_rejected_total{reason=\"unauthenticated\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("bulwark_entries_quarantined_total 3\n"));
  EXPECT_THAT(
      text,
      HasSubstr("# TYPE bulwark_signature_failures_total counter\nbulwark_signature_failures_total 7\n"));
}

TEST(MetricsTest, LabelValuesAreEscaped) {
  Metrics m;
  m.ObserveRequest("a\"b\\c\nd", "GET", 200, 0);
  EXPECT_THAT(m.Render({}), HasSubstr("route=\"a\\\"b\\\\c\\nd\""));
}

TEST(MetricsTest, GateDecisionsFromTheClosedSetOnly) {
  Metrics m;
  m.CountGateDecision(GateDecision::kReject);
  m.CountGateDecision(GateDecision::kReject);
  m.CountGateDecision(GateDecision::kPass);
  EXPECT_EQ(m.gate_decisions(GateDecision::kReject), 2);
  EXPECT_EQ(m.gate_decisions(GateDecision::kPass), 1);
  const std::string text = m.Render({});
  EXPECT_THAT(text, HasSubstr("# TYPE bulwark_query_gate_decisions_total counter\n"));
  EXPECT_THAT(text, HasSubstr("bulwark_query_gate_decisions_total{decision=\"reject\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("bulwark_query_gate_decisions_total{decision=\"no_gate\"} 0\n"));
  for (int i = 0; i < kGateDecisionCount; ++i) {
    EXPECT_EQ(ParseGateDecision(ToString(static_cast<GateDecision>(i))), static_cast<GateDecision>(i));
  }
}

// Issue #15 point 6: per-stage search latency, in microsecond buckets; stages that did not run are
// not counted.
TEST(MetricsTest, SearchStagesHaveTheirOwnHistograms) {
  Metrics m;
  m.ObserveSearchStages(
      {.embed = 0.00002, .gate = 0.00001, .index = 0.0004, .verify = 0.00003, .observe = 0, .smooth = 0});
  m.ObserveSearchStages({.embed = 0.00003,
                         .gate = 0.00001,
                         .index = 0.002,
                         .verify = 0.00004,
                         .observe = 0.00005,
                         .smooth = 0});
  const std::string text = m.Render({});
  EXPECT_THAT(text, HasSubstr("# TYPE bulwark_search_stage_seconds histogram\n"));
  EXPECT_THAT(text, HasSubstr("bulwark_search_stage_seconds_count{stage=\"embed\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("bulwark_search_stage_seconds_count{stage=\"observe\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("bulwark_search_stage_seconds_count{stage=\"smooth\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("bulwark_search_stage_seconds_bucket{stage=\"index\",le=\"0.0005\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("bulwark_search_stage_seconds_bucket{stage=\"index\",le=\"0.0025\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("bulwark_search_stage_seconds_bucket{stage=\"verify\",le=\"0.00005\"} 2\n"));
}

TEST(MetricsTest, WriteGateLatencyIsAnUnlabelledHistogram) {
  LatencyHistogram gate;
  gate.Observe(0.00004);
  gate.Observe(0.003);
  const LatencyHistogram::Snapshot snapshot = gate.Take();
  const std::string text = Metrics().Render({}, &snapshot);
  EXPECT_THAT(text, HasSubstr("# TYPE bulwark_write_gate_seconds histogram\n"));
  EXPECT_THAT(text, HasSubstr("bulwark_write_gate_seconds_bucket{le=\"0.00005\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("bulwark_write_gate_seconds_bucket{le=\"0.005\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("bulwark_write_gate_seconds_count 2\n"));
  EXPECT_THAT(text, HasSubstr("bulwark_write_gate_seconds_sum 0.00304"));
  EXPECT_THAT(Metrics().Render({}), Not(HasSubstr("bulwark_write_gate_seconds")));
}

TEST(ProcessMetricsTest, DescribeThisProcess) {
  const std::vector<Sample> samples = ProcessSamples();
  auto value = [&](const std::string& name) {
    for (const Sample& s : samples) {
      if (s.name == name) return s.value;
    }
    return -1.0;
  };
  EXPECT_GT(value("process_resident_memory_bytes"), 1 << 20);
  EXPECT_GE(value("process_virtual_memory_bytes"), value("process_resident_memory_bytes"));
  EXPECT_GT(value("process_open_fds"), 2);
  EXPECT_GE(value("process_max_fds"), value("process_open_fds"));
  EXPECT_GE(value("process_cpu_seconds_total"), 0);
  const double now = static_cast<double>(std::time(nullptr));
  EXPECT_LE(value("process_start_time_seconds"), now + 1);
  EXPECT_GT(value("process_start_time_seconds"), now - 3600) << "started within the hour";
  EXPECT_EQ(value("bulwark_build_info"), 1);
  Metrics m;
  EXPECT_THAT(m.Render(samples), ::testing::ContainsRegex("bulwark_build_info\\{version=\"[0-9.]+\"\\} 1\n"));
}

}  // namespace
}  // namespace bulwark::server
