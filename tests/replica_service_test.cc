// Three real `bulwark serve --replica-id` processes over one PostgreSQL store (issue #17 points 2
// and 3; doc/scale-out.md, "Replicas in bulwark serve"), on 127.0.0.1 port 0 with a throwaway
// PostgreSQL cluster:
//   - a write sent to any replica is forwarded to the namespace's one leader, answers a version
//     token, and is readable with that token on every replica;
//   - tenancy holds through forwarding: a key of namespace a reaches nothing of namespace b;
//   - kill -9 of a leader during a bounded write load loses no acknowledged write, and another
//     replica takes the namespace over (the takeover time is printed);
//   - a leader paused (SIGSTOP) past its lease and resumed never forks the namespace: its late
//     write is refused or goes to the new leader, and the store's versions stay gap-free.
//   - placement (R = 2 of N = 3): each replica holds exactly the namespaces rendezvous hashing
//     places on it (/v1/admin/stats "replica"); a read on a replica that does not hold the
//     namespace is forwarded and sees the write it follows (read-your-writes); tenancy holds
//     through a forwarded read; a Mem0 add and an MCP add_memory on a non-leader reach the
//     leader; after kill -9 of a replica every namespace is still read, and the survivors take
//     its namespaces over.
#include <absl/strings/match.h>
#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <future>
#include <iostream>
#include <map>
#include <set>
#include <thread>

#include "honeypot/fit_test_data.h"
#include "replica_group_test_base.h"
#include "replication/version_checker.h"
#include "service_harness.h"
#include "storage/postgresql/change_feed.h"
#include "storage/postgresql/namespace_lease.h"
#include "storage/postgresql/pg_connection.h"
#include "storage/postgresql/rendezvous.h"
#include "storage/postgresql/testing/pg_test_environment.h"
#include "testing/temp_dir.h"

namespace bulwark {
namespace {

using ::bulwark::testing::Answer;
using ::bulwark::testing::ServerProcess;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr int kLeaseTtlMs = 2000;

// The replica ids holding each of `names` by the placement of R = 2 over r1, r2, r3.
std::map<std::string, std::set<std::string>> ExpectedHeld(const std::vector<std::string>& names,
                                                          const std::vector<std::string>& replicas) {
  std::map<std::string, std::set<std::string>> held;
  auto placement = RendezvousPlacement::Create(replicas);
  EXPECT_TRUE(placement.ok()) << placement.status();
  if (!placement.ok()) return held;
  for (const std::string& ns : names) {
    for (const std::string& id : placement->Place(ns, 2)) held[id].insert(ns);
  }
  return held;
}

class ReplicaServiceTest : public ::bulwark::testing::ReplicaGroupTest {
 protected:
  void SetUp() override {
    static int databases = 0;
    ASSERT_NO_FATAL_FAILURE(StartGroup(absl::StrCat("replicas", ++databases)));
  }

  // The per-key rate limit keeps its default rate with a burst that covers a test: a write's
  // retries through a takeover and the read-back of every write on each survivor, on a sanitizer
  // build whose handlers can cost several tokens each (HttpServer::ChargeWork), must not be
  // refused with 429 (rate limits are tested in server_test).
  std::vector<std::string> ReplicaFlags() const override {
    return {"--replication-factor",
            "2",
            "--lease-ttl-ms",
            std::to_string(kLeaseTtlMs),
            "--min-version-wait-ms",
            "3000",
            "--forward-timeout-ms",
            "3000",
            "--expiry-sweep-ms",
            "250",
            "--burst",
            "1000"};
  }
  Answer On(const std::string& id, const std::string& method, const std::string& path, const std::string& key,
            const json& body = nullptr, httplib::Headers headers = {}) {
    auto client = replicas_.at(id)->Client();
    if (body.is_null()) return ::bulwark::testing::Send(*client, method, path, key, "", std::move(headers));
    return ::bulwark::testing::SendJson(*client, method, path, key, body, std::move(headers));
  }
  std::string NewKey(const std::string& name, const std::string& ns) {
    Answer a = On("r1", "POST", "/v1/admin/principals", admin_,
                  {{"name", name}, {"role", "writer"}, {"namespaces", {ns}}, {"create_key", true}});
    EXPECT_EQ(a.status, 201) << a.body;
    return a.json().value("api_key", "");
  }
  // The whole store's history is gap-free and ordered (VersionChecker, kWholeStore).
  void ExpectGapFreeVersions() {
    auto feed = ChangeFeed::Open(url_);
    ASSERT_TRUE(feed.ok()) << feed.status();
    auto report = CheckStoreVersions(**feed);
    ASSERT_TRUE(report.ok()) << report.status();
    EXPECT_TRUE(report->ok()) << absl::StrJoin(report->problems, "; ");
    EXPECT_GT(report->events, 0);
  }
  // Reads entry `id` of `ns` on replica `on` with the write's token: 200 and the text.
  void ExpectReadable(const std::string& on, const std::string& ns, const std::string& id,
                      const std::string& token, const std::string& key) {
    Answer got = On(on, "GET", absl::StrCat("/v1/memories/", id, "?namespace=", ns), key, nullptr,
                    {{"Bulwark-Min-Version", token}});
    EXPECT_EQ(got.status, 200) << on << ": " << got.body;
  }

  // The "replica" member of `id`'s /v1/admin/stats once it holds exactly `want` (polled for up to
  // 15 s: placement follows the directory every lease ttl / 4); a test failure otherwise.
  json HeldBy(const std::string& id, const std::set<std::string>& want) {
    return HeldBy(id, [&want] { return want; });
  }
  // The same, for a set that may change while it is awaited (`want` is read at each poll).
  json HeldBy(const std::string& id, const std::function<std::set<std::string>()>& want) {
    const Clock::time_point deadline = Clock::now() + std::chrono::seconds(15);
    json replica;
    std::set<std::string> wanted;
    while (Clock::now() < deadline) {
      Answer stats = On(id, "GET", "/v1/admin/stats", admin_);
      replica = stats.json().value("replica", json::object());
      const std::set<std::string> held = replica.value("held_namespaces", std::set<std::string>{});
      wanted = want();
      if (held == wanted) return replica;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << id << " holds " << replica.dump() << ", not the " << json(wanted).dump()
                  << " placed on it";
    return replica;
  }
  // What `id` holds in a group of `live` replicas once placement settled: the namespaces of `names`
  // rendezvous places on it, and those it leads (a leader keeps what it writes until its lease
  // lapses).
  std::set<std::string> PlacedOrLed(const std::string& id, const std::vector<std::string>& names,
                                    const std::vector<std::string>& live) {
    std::set<std::string> want = ExpectedHeld(names, live)[id];
    for (const std::string& ns : names) {
      if (Leader(ns) == id) want.insert(ns);
    }
    return want;
  }
  // Writes `text` to `ns` through the replicas of `order` in turn, retrying 503s and lost
  // connections every 100 ms until `deadline`; the acknowledged write's (id, token), or empty
  // strings (with a test failure).
  std::pair<std::string, std::string> WriteWithRetry(const std::vector<std::string>& order,
                                                     const std::string& key, const std::string& ns,
                                                     const std::string& text, Clock::time_point deadline) {
    const Answer a = AddWithRetry(order, key, ns, text, deadline);
    if (a.status != 201) return {};
    return {a.json()["entry"].value("id", ""), a.header("Bulwark-Version")};
  }
  // The answer of that write: 201, or the last refusal (with a test failure).
  Answer AddWithRetry(const std::vector<std::string>& order, const std::string& key, const std::string& ns,
                      const std::string& text, Clock::time_point deadline) {
    Answer last;
    for (size_t attempt = 0; Clock::now() < deadline; ++attempt) {
      last =
          On(order[attempt % order.size()], "POST", "/v1/memories", key, {{"namespace", ns}, {"text", text}});
      if (last.status == 201) return last;
      if (last.status != 503 && last.status != 0) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << "write '" << text << "' not acknowledged: " << last.status << " " << last.body;
    return last;
  }
  // The write gate's memsad verdict of an admin's write of `text` into `ns` through `order`
  // (report.gate.detectors.memsad), with the entry's "state" added.
  json MemsadVerdict(const std::vector<std::string>& order, const std::string& ns, const std::string& text,
                     Clock::time_point deadline) {
    const json entry = AddWithRetry(order, admin_, ns, text, deadline).json().value("entry", json::object());
    json verdict = entry.value("report", json::object())
                       .value("gate", json::object())
                       .value("detectors", json::object())
                       .value("memsad", json::object());
    verdict["state"] = entry.value("state", "");
    return verdict;
  }
  // The history events named `event` of entry `id`, read in PostgreSQL: (actor, namespace) each.
  std::vector<std::pair<std::string, std::string>> EventsOf(const std::string& id, const std::string& event) {
    std::vector<std::pair<std::string, std::string>> out;
    auto conn = pg::PgConnection::Open(url_);
    EXPECT_TRUE(conn.ok()) << conn.status();
    if (!conn.ok()) return out;
    const std::vector<pg::PgParam> params = {pg::PgParam::Text(id), pg::PgParam::Text(event)};
    auto rows =
        (*conn)->Query("SELECT actor, namespace FROM history WHERE entry_id = $1 AND event = $2", params);
    EXPECT_TRUE(rows.ok()) << rows.status();
    if (!rows.ok()) return out;
    for (int r = 0; r < rows->rows(); ++r) out.emplace_back(rows->View(r, 0), rows->View(r, 1));
    return out;
  }

  // An MCP add_memory of `text` into n3 on replica `on`, in session "agent-7".
  Answer McpAdd(const std::string& on, const std::string& text, httplib::Headers headers = {}) {
    headers.emplace("Mcp-Session-Id", "agent-7");
    return On(on, "POST", "/mcp", admin_,
              {{"jsonrpc", "2.0"},
               {"id", 1},
               {"method", "tools/call"},
               {"params", {{"name", "add_memory"}, {"arguments", {{"namespace", "n3"}, {"text", text}}}}}},
              std::move(headers));
  }
  // The id an MCP add_memory answer names ("" if none).
  static std::string McpId(const Answer& a) {
    const json answer = a.json();
    return answer.value("result", json::object()).value("structuredContent", json::object()).value("id", "");
  }
  // The audit records of n3's adds, read after every replica flushed its audit queue (the audit
  // table is the store's, shared by the group).
  std::vector<json> AuditedAdds() {
    Answer audit;
    for (const char* id : {"r1", "r2", "r3"})
      audit = On(id, "GET", "/v1/audit?namespace=n3&limit=100", admin_);
    EXPECT_EQ(audit.status, 200) << audit.body;
    std::vector<json> adds;
    const json records = audit.json().value("records", json::array());
    for (const json& r : records) {
      if (r.value("operation", "") == "add") adds.push_back(r);
    }
    return adds;
  }
  // Issue #17 point 2 for MCP: an /mcp request from a browser page the endpoint allows (Origin) is
  // routed like any other, one it refuses is refused where it arrived, and a forwarded MCP add is
  // audited exactly as the same add made on the leader (one record, as an MCP call), no second
  // record written by the forwarding replica. `forwarded` was sent to `other` (not the leader).
  void ExpectMcpCallsRoutedAndAuditedAsOnTheLeader(const std::string& leader, const std::string& other,
                                                   const Answer& forwarded) {
    const Answer direct = McpAdd(leader, "The spare key is under the green pot");
    ASSERT_EQ(direct.status, 200) << direct.body;
    const Answer browser =
        McpAdd(other, "The spare key is under the red pot", {{"Origin", "http://localhost:5173"}});
    ASSERT_EQ(browser.status, 200) << browser.body;
    EXPECT_FALSE(browser.json()["result"].value("isError", false))
        << "routed to the leader: " << browser.body;
    EXPECT_TRUE(absl::StrContains(browser.body, "Stored memory")) << browser.body;
    EXPECT_EQ(McpAdd(other, "Never stored", {{"Origin", "https://evil.example"}}).status, 403);
    EXPECT_EQ(Leader("n3"), leader) << "the non-leader did not take the namespace";
    // A read tool from an allowed Origin on a replica that does not hold n3 is forwarded too.
    std::string away;
    for (const char* id : {"r1", "r2", "r3"}) {
      if (!ExpectedHeld({"n3"}, {"r1", "r2", "r3"})[id].contains("n3")) away = id;
    }
    Answer found =
        On(away, "POST", "/mcp", admin_,
           {{"jsonrpc", "2.0"},
            {"id", 2},
            {"method", "tools/call"},
            {"params",
             {{"name", "search_memories"}, {"arguments", {{"namespace", "n3"}, {"query", "red pot"}}}}}},
           {{"Origin", "http://127.0.0.1:5173"}, {"Bulwark-Min-Version", browser.header("Bulwark-Version")}});
    ASSERT_EQ(found.status, 200) << found.body;
    EXPECT_TRUE(absl::StrContains(found.body, McpId(browser))) << away << ": " << found.body;

    // One record per add, each the record the leader writes for its own MCP add (modulo seq, time, id).
    const std::vector<json> adds = AuditedAdds();
    std::map<std::string, json> by_id;
    for (const json& r : adds) {
      for (const json& id : r.value("returned_ids", json::array())) {
        EXPECT_FALSE(by_id.contains(id.get<std::string>()))
            << "a second record of " << id << ": " << r.dump();
        by_id[id.get<std::string>()] = r;
      }
    }
    auto without_time_and_ids = [](json r) {
      for (const char* field : {"seq", "at_us", "returned_ids"}) r.erase(field);
      return r;
    };
    ASSERT_TRUE(by_id.contains(McpId(direct))) << json(adds).dump();
    const json expected = without_time_and_ids(by_id[McpId(direct)]);
    EXPECT_EQ(expected["detail"]["mcp"].value("tool", ""), "add_memory") << expected.dump();
    EXPECT_EQ(expected.value("session", ""), "agent-7") << expected.dump();
    for (const Answer* a : {&forwarded, &browser}) {
      ASSERT_TRUE(by_id.contains(McpId(*a))) << McpId(*a) << " not audited: " << json(adds).dump();
      EXPECT_EQ(without_time_and_ids(by_id[McpId(*a)]), expected) << "forwarded through " << other;
    }
  }

  // The expiry sweeper runs on every replica (every 250 ms here) and purges only the namespaces its
  // replica leads: the expired memory `id` of `ns` gets one purge event, by the sweeper, logged by
  // the leader alone.
  void ExpectPurgedOnceByTheLeader(const std::string& id, const std::string& ns) {
    const Clock::time_point deadline = Clock::now() + std::chrono::seconds(10);
    std::vector<std::pair<std::string, std::string>> purges;
    while (Clock::now() < deadline && (purges = EventsOf(id, "purge")).empty()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ASSERT_EQ(purges.size(), 1u) << "the expired memory is purged once";
    EXPECT_EQ(purges[0], std::make_pair(std::string("bulwark:expiry"), ns));
    const std::string leader = Leader(ns);
    ASSERT_FALSE(leader.empty());
    for (const char* replica : {"r1", "r2", "r3"}) {
      EXPECT_EQ(absl::StrContains(replicas_.at(replica)->Stderr(), "expiry sweep purged 1 expired"),
                replica == leader)
          << replica << " (leader " << leader << ")";
    }
  }
  // A replica that joins the running group (r4; R = 2 of N = 4) loads the namespaces placed on it
  // and serves their reads with read-your-writes; the others drop the namespaces no longer placed
  // on them (unless they lead them: a leader keeps what it writes while it renews its lease).
  void ExpectAJoiningReplicaTakesItsPlace(const std::vector<std::string>& names) {
    replicas_["r4"] = Start("r4");
    ASSERT_NE(replicas_["r4"], nullptr) << "r4 did not start";
    const std::vector<std::string> group = {"r1", "r2", "r3", "r4"};
    const std::set<std::string> placed = ExpectedHeld(names, group)["r4"];
    ASSERT_FALSE(placed.empty()) << "rendezvous places some of the six on r4";
    for (const std::string& id : group) {
      json replica = HeldBy(id, [&] { return PlacedOrLed(id, names, group); });
      std::cout << id << " holds " << replica["held_namespaces"].dump() << " of 4 replicas\n";
    }
    const std::string ns = *placed.begin();
    Answer w = On("r4", "POST", "/v1/memories", admin_,
                  {{"namespace", ns}, {"text", absl::StrCat("The new replica of ", ns, " serves this")}});
    ASSERT_EQ(w.status, 201) << w.body;
    Answer s =
        On("r4", "POST", "/v1/memories/search", admin_, {{"namespace", ns}, {"query", "new replica serves"}},
           {{"Bulwark-Min-Version", w.header("Bulwark-Version")}});
    ASSERT_EQ(s.status, 200) << s.body;
    EXPECT_TRUE(absl::StrContains(s.body, w.json()["entry"].value("id", ""))) << s.body;
    const json held = HeldBy("r4", [&] { return PlacedOrLed("r4", names, group); });
    EXPECT_TRUE(held.value("held_namespaces", std::set<std::string>{}).contains(ns)) << "the read ran on r4";
  }
};

TEST_F(ReplicaServiceTest, AWriteOnAnyReplicaIsReadableWithItsTokenEverywhere) {
  const std::string alice = NewKey("alice", "a");
  const std::string bob = NewKey("bob", "b");
  std::vector<std::pair<std::string, std::string>> written;  // (id, token)
  for (const char* on : {"r1", "r2", "r3"}) {
    Answer a = On(on, "POST", "/v1/memories", alice,
                  {{"namespace", "a"}, {"text", absl::StrCat("The meeting room code on ", on, " is 42")}});
    ASSERT_EQ(a.status, 201) << on << ": " << a.body;
    const std::string token = a.header("Bulwark-Version");
    EXPECT_TRUE(absl::StartsWith(token, "bw1.")) << "a write answers its version token";
    written.emplace_back(a.json()["entry"].value("id", ""), token);
  }
  const std::string leader = Leader("a");
  EXPECT_FALSE(leader.empty()) << "one replica leads namespace a";
  for (const auto& [id, token] : written) {
    for (const char* on : {"r1", "r2", "r3"}) ExpectReadable(on, "a", id, token, alice);
  }
  // A search with the newest token sees all three on every replica.
  for (const char* on : {"r1", "r2", "r3"}) {
    Answer s =
        On(on, "POST", "/v1/memories/search", alice, {{"namespace", "a"}, {"query", "meeting room code"}},
           {{"Bulwark-Min-Version", written.back().second}});
    ASSERT_EQ(s.status, 200) << s.body;
    EXPECT_EQ(s.json()["hits"].size(), 3u) << on << ": " << s.body;
  }
  // Tenancy through forwarding: alice's key writes nothing into b, reads nothing of b, on any replica.
  for (const char* on : {"r1", "r2", "r3"}) {
    EXPECT_EQ(On(on, "POST", "/v1/memories", alice, {{"namespace", "b"}, {"text", "alice was here"}}).status,
              404);
    EXPECT_EQ(On(on, "POST", "/v1/memories/search", bob, {{"namespace", "a"}, {"query", "meeting"}}).status,
              404);
    EXPECT_EQ(On(on, "GET", absl::StrCat("/v1/memories/", written[0].first, "?namespace=a"), bob).status,
              404);
  }
  Answer b = On("r2", "POST", "/v1/memories/search", bob, {{"namespace", "b"}, {"query", "alice was here"}});
  ASSERT_EQ(b.status, 200) << b.body;
  EXPECT_TRUE(b.json()["hits"].empty()) << b.body;
  // A malformed token is the caller's mistake.
  EXPECT_EQ(On("r3", "GET", absl::StrCat("/v1/memories/", written[0].first, "?namespace=a"), alice, nullptr,
               {{"Bulwark-Min-Version", "bw1.!!"}})
                .status,
            400);
  ExpectGapFreeVersions();
}

TEST_F(ReplicaServiceTest, KillNineOfTheLeaderDuringWritesLosesNoAcknowledgedWrite) {
  const std::string key = NewKey("writer", "k");
  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(20);
  std::vector<std::pair<std::string, std::string>> acked;  // (id, token)
  auto first = WriteWithRetry({"r1"}, key, "k", "write 0", deadline);
  ASSERT_FALSE(first.first.empty());
  acked.push_back(first);
  const std::string leader = Leader("k");
  ASSERT_FALSE(leader.empty());
  // The write gate's state written through the leader (doc/scale-out.md, "The write gate's state on
  // takeover"): 64 searches fill its query history H, which the next write saves; a copy of the
  // query is then quarantined by memsad (a near-copy of a recent query).
  const std::string query = "what is the door code of the storage room";
  for (int q = 0; q < 64; ++q) {
    Answer s = On(leader, "POST", "/v1/memories/search", key, {{"namespace", "k"}, {"query", query}});
    ASSERT_EQ(s.status, 200) << s.body;
  }
  const json before = MemsadVerdict({leader}, "k", query, deadline);
  ASSERT_EQ(before.value("state", ""), "quarantined") << before.dump();
  ASSERT_TRUE(before.value("flagged", false)) << before.dump();
  ASSERT_EQ(before["detail"].value("history_size", 0), 64) << before.dump();
  std::vector<std::string> alive = {"r1", "r2", "r3"};
  Clock::time_point killed_at;
  double takeover_ms = -1;
  constexpr int kWrites = 30;
  for (int i = 1; i < kWrites && Clock::now() < deadline; ++i) {
    if (i == 10) {  // kill -9 of the leader in the middle of the load
      replicas_.at(leader)->Signal(SIGKILL);
      killed_at = Clock::now();
      std::erase(alive, leader);
    }
    std::vector<std::string> order = alive;
    std::rotate(order.begin(), order.begin() + i % order.size(), order.end());
    auto w = WriteWithRetry(order, key, "k", absl::StrCat("write ", i), deadline);
    if (w.first.empty()) break;
    acked.push_back(w);
    if (i == 10) takeover_ms = std::chrono::duration<double, std::milli>(Clock::now() - killed_at).count();
  }
  ASSERT_EQ(acked.size(), static_cast<size_t>(kWrites)) << "every write is acknowledged within the bound";
  const std::string successor = Leader("k");
  EXPECT_FALSE(successor.empty());
  EXPECT_NE(successor, leader);
  std::cout << "takeover after kill -9 of leader " << leader << ": " << takeover_ms << " ms (lease ttl "
            << kLeaseTtlMs << " ms); new leader " << successor << "\n";
  RecordProperty("takeover_ms", static_cast<int>(takeover_ms));
  // The new leader's gate decides as the old one did: H is the one the old leader saved.
  const json after = MemsadVerdict({successor}, "k", query, deadline);
  EXPECT_EQ(after.value("state", ""), "quarantined") << after.dump();
  EXPECT_TRUE(after.value("flagged", false)) << after.dump();
  EXPECT_EQ(after["detail"].value("history_size", 0), 64) << after.dump();
  EXPECT_NEAR(after.value("score", 0.0), before.value("score", 1.0), 1e-6) << after.dump();
  // 0 acknowledged writes lost: each is readable, with its token, on both survivors.
  for (const auto& [id, token] : acked) {
    for (const std::string& on : alive) ExpectReadable(on, "k", id, token, key);
  }
  ExpectGapFreeVersions();
}

TEST_F(ReplicaServiceTest, ALeaderPausedPastItsLeaseIsFencedAndNeverForks) {
  const std::string key = NewKey("writer", "p");
  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(20);
  ASSERT_FALSE(WriteWithRetry({"r1"}, key, "p", "before the pause", deadline).first.empty());
  const std::string zombie = Leader("p");
  ASSERT_FALSE(zombie.empty());
  std::vector<std::string> others;
  for (const char* id : {"r1", "r2", "r3"}) {
    if (id != zombie) others.push_back(id);
  }
  replicas_.at(zombie)->Signal(SIGSTOP);
  std::this_thread::sleep_for(std::chrono::milliseconds(kLeaseTtlMs + 500));
  auto taken = WriteWithRetry(others, key, "p", "after the takeover", deadline);
  ASSERT_FALSE(taken.first.empty());
  const std::string successor = Leader("p");
  ASSERT_FALSE(successor.empty());
  EXPECT_NE(successor, zombie);

  // A write that reaches the paused leader waits in its socket; resumed, the old leader must not
  // commit it as leader: it is refused (fenced, 503) or sent to the new leader.
  auto late = std::async(std::launch::async, [&] {
    return On(zombie, "POST", "/v1/memories", key, {{"namespace", "p"}, {"text", "the late write"}});
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  replicas_.at(zombie)->Signal(SIGCONT);
  const Answer a = late.get();
  ASSERT_TRUE(a.status == 503 || a.status == 201) << a.status << " " << a.body;
  std::cout << "the resumed leader's late write: " << a.status << " " << a.body.substr(0, 160) << "\n";
  if (a.status == 201) {
    EXPECT_EQ(Leader("p"), successor) << "it went through the new leader";
  }
  EXPECT_TRUE(absl::StrContains(replicas_.at(zombie)->Stderr(), "stepped down") ||
              absl::StrContains(replicas_.at(zombie)->Stderr(), "fenced"))
      << replicas_.at(zombie)->Stderr();
  // The old leader now forwards to the new one.
  auto after = WriteWithRetry({zombie}, key, "p", "after the resume", deadline);
  ASSERT_FALSE(after.first.empty());
  EXPECT_EQ(Leader("p"), successor);
  for (const char* on : {"r1", "r2", "r3"}) ExpectReadable(on, "p", after.first, after.second, key);
  ExpectGapFreeVersions();
}

TEST_F(ReplicaServiceTest, ReplicasHoldTheirPlacedNamespacesAndForwardOtherReads) {
  const std::vector<std::string> names = {"n0", "n1", "n2", "n3", "n4", "n5"};
  const std::string tenant = NewKey("tenant", "n0");
  // A memory that expires in 1.5 s, checked below: purged once, by the namespace's leader only.
  const int64_t expires_at_us = std::chrono::duration_cast<std::chrono::microseconds>(
                                    std::chrono::system_clock::now().time_since_epoch())
                                    .count() +
                                1'500'000;
  Answer expiring = On(
      "r2", "POST", "/v1/memories", admin_,
      {{"namespace", "n1"}, {"text", "The gate code is 4411 until noon"}, {"expires_at_us", expires_at_us}});
  ASSERT_EQ(expiring.status, 201) << expiring.body;
  const std::string expiring_id = expiring.json()["entry"].value("id", "");
  for (const std::string& ns : names) {
    Answer a = On("r1", "POST", "/v1/memories", admin_,
                  {{"namespace", ns}, {"text", absl::StrCat("The code word of ", ns, " is blue")}});
    ASSERT_EQ(a.status, 201) << ns << ": " << a.body;
  }
  // Each replica holds exactly the namespaces placed on it (R = 2 of N = 3): 12 copies of 6.
  const auto expected = ExpectedHeld(names, {"r1", "r2", "r3"});
  size_t copies = 0;
  for (const char* id : {"r1", "r2", "r3"}) {
    const std::set<std::string> want = expected.count(id) ? expected.at(id) : std::set<std::string>{};
    json replica = HeldBy(id, want);
    // One row per namespace, and n1's expiring one while it is not purged yet.
    EXPECT_GE(replica["indexed_vectors"].get<size_t>(), want.size()) << id;
    EXPECT_LE(replica["indexed_vectors"].get<size_t>(), want.size() + 1) << id;
    std::cout << id << " holds " << replica["held_namespaces"].dump() << " of " << names.size() << "\n";
    copies += want.size();
  }
  EXPECT_EQ(copies, 2 * names.size());

  // Read-your-writes through a replica that does not hold the namespace: the read is forwarded.
  for (const std::string& ns : names) {
    std::string away;
    for (const char* id : {"r1", "r2", "r3"}) {
      if (!expected.count(id) || !expected.at(id).contains(ns)) away = id;
    }
    ASSERT_FALSE(away.empty());
    Answer w = On(away, "POST", "/v1/memories", admin_,
                  {{"namespace", ns}, {"text", absl::StrCat("The ferry of ", ns, " leaves at seven")}});
    ASSERT_EQ(w.status, 201) << w.body;
    const std::string id = w.json()["entry"].value("id", "");
    Answer s = On(away, "POST", "/v1/memories/search", admin_, {{"namespace", ns}, {"query", "ferry leaves"}},
                  {{"Bulwark-Min-Version", w.header("Bulwark-Version")}});
    ASSERT_EQ(s.status, 200) << away << " " << ns << ": " << s.body;
    EXPECT_TRUE(absl::StrContains(s.body, id)) << away << " " << ns << ": " << s.body;
    // Tenancy through a forwarded read: the n0 key reads nothing of another namespace.
    if (ns != "n0") {
      EXPECT_EQ(
          On(away, "POST", "/v1/memories/search", tenant, {{"namespace", ns}, {"query", "ferry"}}).status,
          404);
    } else {
      EXPECT_EQ(
          On(away, "POST", "/v1/memories/search", tenant, {{"namespace", ns}, {"query", "ferry"}}).status,
          200);
    }
  }

  // A Mem0 write on a replica that does not lead the namespace reaches its leader.
  const std::string leader = Leader("n2");
  ASSERT_FALSE(leader.empty());
  const std::string other = leader == "r1" ? "r2" : "r1";
  Answer m = On(other, "POST", "/v3/memories/add/", admin_,
                {{"messages", {{{"role", "user"}, {"content", "I moved to Lisbon in May"}}}},
                 {"user_id", "n2"},
                 {"infer", false}});
  ASSERT_EQ(m.status, 200) << m.body;
  EXPECT_EQ(Leader("n2"), leader) << "the non-leader did not take the namespace";
  EXPECT_TRUE(absl::StrContains(replicas_.at(leader)->Stderr(), "leading namespace 'n2'"));
  Answer found = On(other, "POST", "/v3/memories/search/", admin_,
                    {{"query", "Lisbon"}, {"filters", {{"user_id", "n2"}}}},
                    {{"Bulwark-Min-Version", m.header("Bulwark-Version")}});
  ASSERT_EQ(found.status, 200) << found.body;
  EXPECT_TRUE(absl::StrContains(found.body, "Lisbon")) << found.body;

  // An MCP write tool on a replica that does not lead the namespace reaches its leader too.
  const std::string mcp_leader = Leader("n3");
  ASSERT_FALSE(mcp_leader.empty());
  const std::string mcp_other = mcp_leader == "r2" ? "r3" : "r2";
  Answer tool = McpAdd(mcp_other, "The spare key is under the blue pot");
  ASSERT_EQ(tool.status, 200) << tool.body;
  EXPECT_FALSE(tool.json()["result"].value("isError", false)) << tool.body;
  EXPECT_TRUE(absl::StrContains(tool.body, "Stored memory")) << tool.body;
  EXPECT_EQ(Leader("n3"), mcp_leader);
  Answer spare = On(mcp_leader == "r1" ? "r2" : "r1", "POST", "/v1/memories/search", admin_,
                    {{"namespace", "n3"}, {"query", "spare key blue pot"}},
                    {{"Bulwark-Min-Version", tool.header("Bulwark-Version")}});
  ASSERT_EQ(spare.status, 200) << spare.body;
  EXPECT_TRUE(absl::StrContains(spare.body, "spare key")) << spare.body;
  ExpectMcpCallsRoutedAndAuditedAsOnTheLeader(mcp_leader, mcp_other, tool);
  ExpectPurgedOnceByTheLeader(expiring_id, "n1");
  ExpectAJoiningReplicaTakesItsPlace(names);

  // kill -9 of a replica: every namespace is still read on the survivors at once (the next
  // holder answers), and the survivors then hold what placement over them gives them.
  replicas_.at("r3")->Signal(SIGKILL);
  const std::vector<std::string> survivors = {"r1", "r2", "r4"};
  for (const std::string& ns : names) {
    for (const std::string& on : survivors) {
      Answer s = On(on, "POST", "/v1/memories/search", admin_, {{"namespace", ns}, {"query", "code word"}});
      EXPECT_EQ(s.status, 200) << on << " " << ns << ": " << s.body;
    }
  }
  for (const std::string& id : survivors) HeldBy(id, [&] { return PlacedOrLed(id, names, survivors); });
  ExpectGapFreeVersions();
}

// The honeypot monitor's statistics live on the namespace's leader (replica_routing.h): searches
// of a namespace with pots, sent to every replica, are observed by the leader only
// (bulwark_honeypot_observations_total), so a caller spreading its queries over the replicas
// meets one SPRT, as on one replica.
TEST_F(ReplicaServiceTest, SearchesOfAMonitoredNamespaceAreObservedOnItsLeaderOnly) {
  const std::string corpora = std::string(BULWARK_SOURCE_DIR) + "/data/corpora/";
  json entries = json::array();
  for (const std::string& t :
       honeypot::testing::ReadJsonlField(corpora + "benign_memories.jsonl", "text", 80))
    entries.push_back({{"text", t}});
  ASSERT_EQ(On("r2", "POST", "/v1/memories", admin_, {{"namespace", "potted"}, {"entries", entries}}).status,
            201);
  const std::string leader = Leader("potted");
  ASSERT_FALSE(leader.empty());
  {
    std::ofstream attack(dir_.path() / "attack.jsonl"), benign(dir_.path() / "benign.jsonl");
    for (const std::string& q : honeypot::testing::ExtractionAttackQueries())
      attack << json{{"query", q}}.dump() << "\n";
    for (const std::string& q :
         honeypot::testing::ReadJsonlField(corpora + "benign_queries.jsonl", "query", 60))
      benign << json{{"query", q}}.dump() << "\n";
  }
  auto [code, out] = ::bulwark::testing::RunCli(
      url_, {"--keyring", keyring_, "--json", "-n", "potted", "honeypots", "fit", "--attack-log",
             (dir_.path() / "attack.jsonl").string(), "--benign-queries",
             (dir_.path() / "benign.jsonl").string(), "--seed", "3"});
  ASSERT_EQ(code, 0) << out;
  // Every replica's index has the pots once it has applied the fit (a version of the store).
  auto observations = [this](const std::string& id) {
    const std::string text = On(id, "GET", "/metrics", admin_).body;
    const std::string name = "\nbulwark_honeypot_observations_total ";  // the sample, not # HELP
    const size_t at = text.find(name);
    return at == std::string::npos ? -1.0 : std::stod(text.substr(at + name.size()));
  };
  const std::string reader = NewKey("spreader", "potted");
  auto search_on = [&](const char* id) {
    Answer a = On(id, "POST", "/v1/memories/search", reader,
                  {{"namespace", "potted"}, {"query", "what do I have planned this week"}},
                  {{"X-Bulwark-Session", "spread"}});
    EXPECT_EQ(a.status, 200) << id << ": " << a.body;
  };
  // The leader observes once it has applied the fit; then the other replicas too have had time to.
  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(10);
  const double start = observations(leader);
  while (observations(leader) == start && Clock::now() < deadline) {
    search_on(leader.c_str());
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_GT(observations(leader), start) << "the leader never observed a search of the fitted namespace";
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  std::map<std::string, double> before;
  for (const char* id : {"r1", "r2", "r3"}) before[id] = observations(id);
  for (const char* id : {"r1", "r2", "r3"}) search_on(id);
  EXPECT_EQ(observations(leader) - before[leader], 3)
      << "the leader observes the searches sent to every replica";
  for (const char* id : {"r1", "r2", "r3"}) {
    if (id != leader) {
      EXPECT_EQ(observations(id), before[id]) << id << " is not the leader and observes nothing";
    }
  }
}

}  // namespace
}  // namespace bulwark
