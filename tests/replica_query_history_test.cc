// MemSAD's query history H across three real `bulwark serve --replica-id` processes over one
// PostgreSQL store (issue #17 point 2; doc/scale-out.md, "The write gate's state on takeover";
// src/server/query_history_forwarding.h): searches of a namespace without pots served by a
// replica that holds but does not lead it reach the leader's H, so a copy of the query written
// through any replica is quarantined by memsad on the leader with the whole history behind it.
//
// With BULWARK_TEST_FORWARD_QUERY_HISTORY=false the replicas run with
// --forward-query-history=false and the test fails (the leader's H stays empty): the check that
// the test proves the forwarding.
#include <absl/strings/str_cat.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <future>
#include <iostream>
#include <map>
#include <set>
#include <thread>

#include "replica_group_test_base.h"
#include "service_harness.h"
#include "storage/postgresql/namespace_lease.h"
#include "storage/postgresql/rendezvous.h"
#include "storage/postgresql/testing/pg_test_environment.h"
#include "testing/temp_dir.h"

namespace bulwark {
namespace {

using ::bulwark::testing::Answer;
using ::bulwark::testing::ServerProcess;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

class ReplicaQueryHistoryTest : public ::bulwark::testing::ReplicaGroupTest {
 protected:
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(StartGroup("history")); }

  std::vector<std::string> ReplicaFlags() const override {
    const char* forward = std::getenv("BULWARK_TEST_FORWARD_QUERY_HISTORY");
    return {"--replication-factor",    "2",
            "--lease-ttl-ms",          "2000",
            "--forward-query-history", forward != nullptr ? forward : "true"};
  }
  Answer On(const std::string& id, const std::string& method, const std::string& path,
            const json& body = nullptr) {
    auto client = replicas_.at(id)->Client();
    if (body.is_null()) return ::bulwark::testing::Send(*client, method, path, admin_, "");
    return ::bulwark::testing::SendJson(*client, method, path, admin_, body);
  }
  // The memsad verdict of a written entry (report.gate.detectors.memsad; {} if absent).
  static json MemsadOf(const json& entry) {
    return entry.value("report", json::object())
        .value("gate", json::object())
        .value("detectors", json::object())
        .value("memsad", json::object());
  }
  // The value of the /metrics sample `name` (no labels) on replica `id`; -1 if absent.
  double Metric(const std::string& id, const std::string& name) {
    const std::string text = On(id, "GET", "/metrics").body;
    const size_t at = text.find("\n" + name + " ");  // the sample, not its # HELP line
    return at == std::string::npos ? -1.0 : std::stod(text.substr(at + name.size() + 2));
  }
};

TEST_F(ReplicaQueryHistoryTest, SearchesServedByAFollowerFeedTheLeadersQueryHistory) {
  const std::vector<std::string> group = {"r1", "r2", "r3"};
  Answer first =
      On("r1", "POST", "/v1/memories", {{"namespace", "h"}, {"text", "The archive opens at nine"}});
  ASSERT_EQ(first.status, 201) << first.body;
  const std::string leader = Leader("h");
  ASSERT_FALSE(leader.empty());
  // The namespace's holders are its leader and one follower (R = 2); the third holds nothing of it.
  auto placement = RendezvousPlacement::Create(group);
  ASSERT_TRUE(placement.ok()) << placement.status();
  const std::vector<std::string> holders = placement->Place("h", 2);
  ASSERT_EQ(holders.size(), 2u);
  ASSERT_EQ(holders[0], leader) << "the first live replica of the placement leads";
  const std::string follower = holders[1];
  std::string third;
  for (const std::string& id : group) {
    if (id != leader && id != follower) third = id;
  }
  // The follower loads the new namespace at its next placement round; until then the honeypot
  // monitor's routing would send its reads to the leader (it cannot tell that h has no pots).
  Clock::time_point deadline = Clock::now() + std::chrono::seconds(10);
  auto holds = [&] {
    const json stats = On(follower, "GET", "/v1/admin/stats").json();
    const json replica = stats.value("replica", json::object());
    return replica.value("held_namespaces", std::set<std::string>{}).contains("h");
  };
  while (!holds() && Clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(holds()) << follower << " does not hold h";
  const std::string query = "what is the door code of the storage room";
  for (int q = 0; q < 64; ++q) {
    Answer s = On(follower, "POST", "/v1/memories/search", {{"namespace", "h"}, {"query", query}});
    ASSERT_EQ(s.status, 200) << s.body;
  }
  // The follower served them itself (a read of a namespace it holds) and sends them in batches.
  deadline = Clock::now() + std::chrono::seconds(10);
  while (Metric(leader, "bulwark_query_history_received_total") < 64 && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::cout << "leader " << leader << " received " << Metric(leader, "bulwark_query_history_received_total")
            << " queries; follower " << follower << " forwarded "
            << Metric(follower, "bulwark_query_history_forwarded_total") << ", dropped "
            << Metric(follower, "bulwark_query_history_forward_dropped_total") << "\n";
  // An API caller, even an admin, cannot feed H: the route takes the replicas' MAC, not an API key.
  Answer forged = On(leader, "POST", "/internal/v1/query-history", {{"queries", json::array()}});
  EXPECT_EQ(forged.status, 401) << forged.body;
  EXPECT_EQ(Metric(leader, "bulwark_query_history_refused_total"), 1);
  // A copy of the query written through the replica that does not hold the namespace.
  Answer copy = On(third, "POST", "/v1/memories", {{"namespace", "h"}, {"text", query}});
  ASSERT_EQ(copy.status, 201) << copy.body;
  const json entry = copy.json().value("entry", json::object());
  const json memsad = MemsadOf(entry);
  EXPECT_EQ(entry.value("state", ""), "quarantined") << memsad.dump();
  EXPECT_TRUE(memsad.value("flagged", false)) << memsad.dump();
  EXPECT_EQ(memsad.value("detail", json::object()).value("history_size", 0), 64) << memsad.dump();
  EXPECT_EQ(Metric(follower, "bulwark_query_history_forwarded_total"), 64);
  EXPECT_EQ(Metric(follower, "bulwark_query_history_forward_dropped_total"), 0);
  EXPECT_EQ(Leader("h"), leader) << "the leader did not change during the test";

  // Nobody leads h now (as after the group restarted, before anyone writes it): the follower's
  // next searches go to the preferred replica, which takes the free lease at their first batch,
  // as for a write forwarded to it, instead of refusing them until they are dropped.
  auto lease = leases_->Current("h");
  ASSERT_TRUE(lease.ok() && lease->has_value()) << lease.status();
  ASSERT_TRUE(leases_->Release("h", (*lease)->holder, (*lease)->epoch).ok());
  // The old leader's renewal (every ttl/3 = 667 ms) finds the lease gone and steps down.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  ASSERT_EQ(Leader("h"), "") << "h must have no leader before the searches";
  const double received = Metric(leader, "bulwark_query_history_received_total");
  const std::string other_query = "which courier collects the parcels on fridays";
  for (int q = 0; q < 64; ++q) {
    Answer s = On(follower, "POST", "/v1/memories/search", {{"namespace", "h"}, {"query", other_query}});
    ASSERT_EQ(s.status, 200) << s.body;
  }
  deadline = Clock::now() + std::chrono::seconds(10);
  while (Metric(leader, "bulwark_query_history_received_total") < received + 64 && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(Metric(follower, "bulwark_query_history_forward_dropped_total"), 0)
      << "queries of a namespace with no leader were dropped";
  EXPECT_EQ(Leader("h"), leader) << "the preferred replica took the free lease at the first batch";
  Answer other_copy = On(third, "POST", "/v1/memories", {{"namespace", "h"}, {"text", other_query}});
  ASSERT_EQ(other_copy.status, 201) << other_copy.body;
  const json other_entry = other_copy.json().value("entry", json::object());
  const json other_memsad = MemsadOf(other_entry);
  EXPECT_EQ(other_entry.value("state", ""), "quarantined") << other_memsad.dump();
  EXPECT_GE(other_memsad.value("detail", json::object()).value("history_size", 0), 64) << other_memsad.dump();
}

}  // namespace
}  // namespace bulwark
