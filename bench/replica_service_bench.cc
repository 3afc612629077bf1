// Replicas of `bulwark serve` over one PostgreSQL store (issue #17 point 4; doc/scale-out.md,
// "Replicas in bulwark serve"): write and search throughput through 1 and 3 replicas, and the
// time a namespace takes to get a new leader after kill -9 of its leader, against the
// namespace's size. Real processes on loopback over a throwaway PostgreSQL cluster.
//
//   replica_service_bench [requests_per_client=150] [clients=4]
//   replica_service_bench --memory ENTRIES [NAMESPACES=60]
//
// Writes: `clients` threads each add `requests_per_client` single entries to 8 namespaces (so
// several leaders), sending each request to the replicas in turn (a non-leader forwards it).
// Searches: the same threads search those namespaces on the replicas in turn. With 3 replicas both
// are measured again with every request sent to r1 only. Takeover: a
// namespace of n entries (batches of 100), its leader killed, then one write retried every 20 ms
// through another replica until acknowledged. Lease ttl 2 s. Bounded: every request has a 10 s
// timeout and every phase a 120 s deadline.
//
// --memory: 3 replicas with R = 2; ENTRIES entries (batches of 100, sent to the replicas in turn)
// across NAMESPACES namespaces of equal size; once placement has settled, each replica's held
// namespaces, indexed vectors (its /v1/admin/stats "replica") and resident memory (VmRSS) against
// the total, RSS growth against each replica's RSS on the empty store; then the same three
// started again on the written store (cold loads only), then one replica alone (it holds
// everything) for comparison.
#include <absl/strings/numbers.h>
#include <absl/strings/str_cat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "../tests/service_harness.h"
#include "storage/postgresql/namespace_lease.h"
#include "storage/postgresql/testing/pg_test_cluster.h"
#include "testing/temp_dir.h"

namespace bulwark {
namespace {

using ::bulwark::testing::Answer;
using ::bulwark::testing::ServerProcess;
using Clock = std::chrono::steady_clock;
using json = nlohmann::json;
using ::bulwark::testing::PgTestCluster;

constexpr int kLeaseTtlMs = 2000;
constexpr int kNamespaces = 8;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string one;
  in >> one;
  return one;
}

// The admin key the first start of the memory run wrote down (a later start prints none).
std::string ReadAdminKey(const std::string& dir) {
  std::ifstream in(dir + "/admin.key");
  std::string key;
  in >> key;
  return key;
}

// Resident memory of a process, MiB (-1 if unreadable).
double RssMiB(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atof(line.c_str() + 6) / 1024.0;
  }
  return -1;
}

struct Group {
  std::string url;
  std::string admin;
  std::vector<std::string> ids;
  std::map<std::string, std::unique_ptr<ServerProcess>> replicas;
};

bool StartGroup(PgTestCluster& cluster, const std::string& db, int n, const std::string& dir, Group* g,
                bool create = true) {
  if (create && !cluster.CreateDatabase(db).ok()) return false;
  g->url = absl::StrCat("postgresql://postgres@127.0.0.1:", cluster.port(), "/", db);
  for (int i = 1; i <= n; ++i) {
    const std::string id = absl::StrCat("r", i);
    auto p = ServerProcess::StartAt(g->url, absl::StrCat(dir, "/", db, "-", id, ".stderr"),
                                    {"--keyring", dir + "/keyring.json", "--replica-id", id, "--rate", "0",
                                     "--lease-ttl-ms", std::to_string(kLeaseTtlMs), "--max-batch", "100"});
    if (p == nullptr) return false;
    if (p->admin_key()) g->admin = *p->admin_key();
    if (!create && g->admin.empty()) g->admin = ReadAdminKey(dir);
    g->ids.push_back(id);
    g->replicas[id] = std::move(p);
  }
  return !g->admin.empty();
}

Answer Post(Group& g, const std::string& id, const std::string& path, const json& body) {
  auto client = g.replicas.at(id)->Client(true);
  return ::bulwark::testing::SendJson(*client, "POST", path, g.admin, body);
}

// `clients` threads, `per_client` requests each, to the replicas in turn; returns requests/s of
// the answers with status `ok_status` (and counts the others).
double Throughput(Group& g, const std::vector<std::string>& targets, int clients, int per_client, bool search,
                  int ok_status) {
  std::atomic<int> ok{0}, failed{0};
  const Clock::time_point start = Clock::now(), deadline = start + std::chrono::seconds(120);
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      std::map<std::string, std::unique_ptr<httplib::Client>> conns;
      for (const auto& [id, p] : g.replicas) conns[id] = p->Client(true);
      for (int i = 0; i < per_client && Clock::now() < deadline; ++i) {
        const std::string& id = targets[(c + i) % targets.size()];
        const std::string ns = absl::StrCat("ns", (c * 31 + i) % kNamespaces);
        const json body = search
                              ? json{{"namespace", ns}, {"query", absl::StrCat("note number ", i)}, {"k", 5}}
                              : json{{"namespace", ns}, {"text", absl::StrCat("note number ", i, " of ", c)}};
        Answer a = ::bulwark::testing::SendJson(
            *conns[id], "POST", search ? "/v1/memories/search" : "/v1/memories", g.admin, body);
        (a.status == ok_status ? ok : failed)++;
      }
    });
  }
  for (auto& t : threads) t.join();
  const double s = Seconds(Clock::now() - start);
  if (failed > 0) std::printf("    (%d requests failed)\n", failed.load());
  return ok / s;
}

// Fills namespace `ns` with n entries, kills its leader and returns the ms until a write through
// another replica is acknowledged (-1 if none within 30 s).
double Takeover(Group& g, const std::string& ns, int n) {
  for (int done = 0; done < n;) {
    json entries = json::array();
    for (int i = 0; i < 100 && done + i < n; ++i)
      entries.push_back({{"text", absl::StrCat("filler ", done + i)}});
    Answer a = Post(g, g.ids[0], "/v1/memories", {{"namespace", ns}, {"entries", entries}});
    if (a.status != 201) {
      std::printf("    fill failed: %d %s\n", a.status, a.body.substr(0, 200).c_str());
      return -1;
    }
    done += static_cast<int>(entries.size());
  }
  if (Post(g, g.ids[0], "/v1/memories", {{"namespace", ns}, {"text", "lead"}}).status != 201) return -1;
  auto leases = NamespaceLeases::Open(g.url);
  if (!leases.ok()) return -1;
  auto lease = (*leases)->Current(ns);
  if (!lease.ok() || !lease->has_value()) return -1;
  const std::string leader = (*lease)->holder.substr(0, (*lease)->holder.find('/'));
  std::string other;
  for (const std::string& id : g.ids) {
    if (id != leader && g.replicas.count(id)) other = id;
  }
  g.replicas.at(leader)->Signal(SIGKILL);
  const Clock::time_point killed = Clock::now();
  std::erase(g.ids, leader);
  g.replicas.erase(leader);
  while (Clock::now() - killed < std::chrono::seconds(30)) {
    if (Post(g, other, "/v1/memories", {{"namespace", ns}, {"text", "after the kill"}}).status == 201) {
      return Seconds(Clock::now() - killed) * 1000;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return -1;
}

// The "replica" member of a replica's /v1/admin/stats.
json ReplicaStats(Group& g, const std::string& id) {
  auto client = g.replicas.at(id)->Client(true);
  Answer a = ::bulwark::testing::Send(*client, "GET", "/v1/admin/stats", g.admin, "");
  return a.json().value("replica", json::object());
}

// Waits (at most 180 s) until every replica's held vectors total R copies of `entries` (or all of
// them for one replica) and no replica's count changed for 2 s: placement has settled.
void AwaitPlacement(Group& g, int entries) {
  const int64_t want = static_cast<int64_t>(entries) * std::min<int64_t>(2, g.ids.size());
  std::map<std::string, int64_t> last;
  Clock::time_point stable_since = Clock::now();
  for (const Clock::time_point deadline = Clock::now() + std::chrono::seconds(180);
       Clock::now() < deadline;) {
    std::map<std::string, int64_t> now;
    int64_t total = 0;
    for (const std::string& id : g.ids)
      total += now[id] = ReplicaStats(g, id).value("indexed_vectors", int64_t{0});
    if (now != last) stable_since = Clock::now();
    last = now;
    if (total == want && Clock::now() - stable_since >= std::chrono::seconds(2)) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  std::printf("placement did not settle within 180 s\n");
}

void PrintHolding(Group& g, int entries, const std::map<std::string, double>& rss_before) {
  for (const std::string& id : g.ids) {
    const json r = ReplicaStats(g, id);
    const int64_t vectors = r.value("indexed_vectors", int64_t{-1});
    const double rss = RssMiB(g.replicas.at(id)->pid());
    std::printf("| %zu | %s | %zu | %lld | %.3f | %.0f | %.0f | %s |\n", g.ids.size(), id.c_str(),
                r.value("held_namespaces", json::array()).size(), static_cast<long long>(vectors),
                static_cast<double>(vectors) / entries, rss, rss - rss_before.at(id), LoadAverage().c_str());
  }
}

// --memory: see the file comment.
int Memory(PgTestCluster& cluster, int entries, int namespaces) {
  ::bulwark::testing::TempDir dir;
  const std::string d = dir.path().string();
  Group g;
  if (!StartGroup(cluster, "memory", 3, d, &g)) return 1;
  std::ofstream(d + "/admin.key") << g.admin << "\n";
  std::map<std::string, double> before;
  for (const std::string& id : g.ids) before[id] = RssMiB(g.replicas.at(id)->pid());
  const Clock::time_point start = Clock::now();
  for (int done = 0, batch = 0; done < entries; ++batch) {
    json list = json::array();
    const std::string ns = absl::StrCat("m", batch % namespaces);
    for (int i = 0; i < 100 && done + i < entries; ++i)
      list.push_back({{"text", absl::StrCat("note ", done + i, " about topic ", (done + i) % 97)}});
    Answer a = Post(g, g.ids[batch % 3], "/v1/memories", {{"namespace", ns}, {"entries", list}});
    if (a.status != 201) {
      std::printf("fill failed at %d: %d %s\n", done, a.status, a.body.substr(0, 200).c_str());
      return 1;
    }
    done += static_cast<int>(list.size());
  }
  std::printf("wrote %d entries in %d namespaces through 3 replicas in %.1f s\n", entries, namespaces,
              Seconds(Clock::now() - start));
  const Clock::time_point settling = Clock::now();
  AwaitPlacement(g, entries);
  std::printf("placement settled %.1f s after the writes\n", Seconds(Clock::now() - settling));
  std::printf("| N | replica | namespaces held | vectors held | share | RSS MiB | RSS growth MiB | load |\n");
  PrintHolding(g, entries, before);
  // The same three started again on the written store (cold loads, no write-path state), then one
  // replica alone, which holds everything. RSS growth is then against an empty store's start.
  g.replicas.clear();
  g.ids.clear();
  Group again;
  again.admin = g.admin;
  const Clock::time_point restarted = Clock::now();
  if (!StartGroup(cluster, "memory", 3, d, &again, /*create=*/false)) return 1;
  AwaitPlacement(again, entries);
  std::printf("restarted; placement settled %.1f s after the first start\n",
              Seconds(Clock::now() - restarted));
  PrintHolding(again, entries, before);
  again.replicas.clear();
  again.ids.clear();
  Group solo;
  solo.admin = g.admin;
  if (!StartGroup(cluster, "memory", 1, d, &solo, /*create=*/false)) return 1;
  AwaitPlacement(solo, entries);
  PrintHolding(solo, entries, before);
  return 0;
}

int Main(int argc, char** argv) {
  int per_client = 150, clients = 4;
  if (argc > 1 && std::string(argv[1]) == "--memory") {
    int entries = 0, namespaces = 60;
    if (argc < 3 || !absl::SimpleAtoi(argv[2], &entries) || entries < 100 || entries > 2'000'000) return 2;
    if (argc > 3 && (!absl::SimpleAtoi(argv[3], &namespaces) || namespaces < 3 || namespaces > 10'000))
      return 2;
    auto cluster = PgTestCluster::Start();
    if (!cluster.ok()) return 1;
    std::printf("replica_service_bench --memory %d %d; load average at start %s\n", entries, namespaces,
                LoadAverage().c_str());
    return Memory(**cluster, entries, namespaces);
  }
  if (argc > 1 && (!absl::SimpleAtoi(argv[1], &per_client) || per_client < 1 || per_client > 10000)) return 2;
  if (argc > 2 && (!absl::SimpleAtoi(argv[2], &clients) || clients < 1 || clients > 64)) return 2;
  auto cluster = PgTestCluster::Start();
  if (!cluster.ok()) {
    std::printf("postgres: %s\n", cluster.status().ToString().c_str());
    return 1;
  }
  ::bulwark::testing::TempDir dir;
  std::printf("replica_service_bench: %d clients x %d requests; load average at start %s\n", clients,
              per_client, LoadAverage().c_str());
  for (int n : {1, 3}) {
    Group g;
    if (!StartGroup(**cluster, absl::StrCat("bench", n), n, dir.path().string(), &g)) return 1;
    const double writes = Throughput(g, g.ids, clients, per_client, false, 201);
    const double searches = Throughput(g, g.ids, clients, per_client, true, 200);
    std::printf("| %d | all | %.0f | %.0f | %s |\n", n, writes, searches, LoadAverage().c_str());
    if (n > 1) {  // the same group, every request to r1 only
      const double w1 = Throughput(g, {"r1"}, clients, per_client, false, 201);
      const double s1 = Throughput(g, {"r1"}, clients, per_client, true, 200);
      std::printf("| %d | r1 only | %.0f | %.0f | %s |\n", n, w1, s1, LoadAverage().c_str());
    }
  }
  std::printf("takeover after kill -9 of the leader (3 replicas, lease ttl %d ms):\n", kLeaseTtlMs);
  int round = 0;
  for (int n : {0, 1000, 5000}) {
    Group g;
    if (!StartGroup(**cluster, absl::StrCat("takeover", ++round), 3, dir.path().string(), &g)) return 1;
    const double ms = Takeover(g, "big", n);
    std::printf("| %d | %.0f | %s |\n", n, ms, LoadAverage().c_str());
  }
  return 0;
}

}  // namespace
}  // namespace bulwark

int main(int argc, char** argv) { return bulwark::Main(argc, argv); }
