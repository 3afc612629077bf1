// Slow clients and floods (issue #18): an in-process HttpServer on 127.0.0.1 (default options: 32
// workers, 1024 connections, 10 s request deadline) over a real store, attacked while probes
// measure the latency of GET /healthz (a fresh connection per request) and of POST
// /v1/memories/search (one keep-alive connection). Phases, each bounded in time:
//   baseline  probes only;
//   slowloris S connections, each sending one more header byte every --drip-ms (reconnecting when
//             the server closes them);
//   flood     T threads opening connections as fast as the machine allows, each sending a partial
//             request head and holding up to H of them (T*H beyond the server's 1024);
//   both      slowloris and flood together.
// For each phase: probe p50/p99/max and failures (no 200 within 5 s), and the server's connection
// counters. With --max-p99-ms B it exits 1 if a probe's p99 exceeds B ms or a probe failed.
//
//   build/bench/slow_clients_bench [--seconds 10] [--slowloris 200] [--drip-ms 3000]
//                                  [--flood-threads 2] [--flood-hold 1000] [--flood-rate 0 (= max)]
//                                  [--entries 2000]
//                                  [--max-p99-ms 0]
// The server totals printed after each phase are cumulative.
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <deque>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "auth/principal_registry.h"
#include "raw_http_client.h"
#include "server/http_server.h"
#include "store/memory_store.h"
#include "testing/temp_dir.h"

namespace bulwark {
namespace {

using Clock = std::chrono::steady_clock;

struct Flags {
  double seconds = 10;
  int slowloris = 200;
  int drip_ms = 3000;
  int flood_threads = 2;
  int flood_hold = 1000;
  int flood_rate = 0;  // new connections per second per flood thread; 0: as fast as possible
  size_t entries = 2000;
  double max_p99_ms = 0;  // 0: report only
};

int Connect(int port, bool nonblocking) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | (nonblocking ? SOCK_NONBLOCK : 0), 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 && errno != EINPROGRESS) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// GET /healthz on a fresh connection; true on a 200 within `timeout`.
bool ProbeHealth(int port, std::chrono::milliseconds timeout) {
  const int fd = Connect(port, false);
  if (fd < 0) return false;
  const std::string request = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  bool ok = ::send(fd, request.data(), request.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(request.size());
  std::string answer;
  const auto deadline = Clock::now() + timeout;
  while (ok && answer.find("\r\n\r\n") == std::string::npos) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    pollfd p{fd, POLLIN, 0};
    if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) <= 0) break;
    char buffer[1024];
    const ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
    if (n <= 0) break;
    answer.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return answer.rfind("HTTP/1.1 200", 0) == 0;
}

struct Latencies {
  std::vector<double> ms;
  long failures = 0;
  double Percentile(double q) {
    if (ms.empty()) return 0;
    std::sort(ms.begin(), ms.end());
    return ms[std::min(ms.size() - 1, static_cast<size_t>(q * static_cast<double>(ms.size() - 1) + 0.5))];
  }
};

// Slowloris: `count` connections, each dripping one header byte every `drip`, until `stop`.
void RunSlowloris(int port, int count, std::chrono::milliseconds drip, const std::atomic<bool>& stop) {
  const std::string head = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: ";
  struct Drip {
    int fd = -1;
    size_t sent = 0;
  };
  std::vector<Drip> drips(static_cast<size_t>(count));
  while (!stop.load()) {
    for (Drip& d : drips) {
      char sink[4096];
      if (d.fd >= 0 && ::recv(d.fd, sink, sizeof(sink), MSG_DONTWAIT) >= 0) {  // an answer (408) or EOF
        ::close(d.fd);
        d.fd = -1;
      }
      if (d.fd < 0) d = Drip{Connect(port, true), 0};
      const char next = d.sent < head.size() ? head[d.sent] : 'a';
      if (d.fd >= 0 && ::send(d.fd, &next, 1, MSG_NOSIGNAL) == 1) ++d.sent;
    }
    for (auto waited = std::chrono::milliseconds(0); waited < drip && !stop.load();
         waited += std::chrono::milliseconds(50)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  for (Drip& d : drips) {
    if (d.fd >= 0) ::close(d.fd);
  }
}

// Flood: opens connections as fast as it can, each sending a partial head, holding at most `hold`
// (the oldest is closed for each new one), until `stop`. Returns the connections opened.
long RunFlood(int port, int hold, int rate, const std::atomic<bool>& stop) {
  const Clock::time_point start = Clock::now();
  const std::string partial = "POST /v1/memories/search HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  std::deque<int> held;
  long opened = 0;
  while (!stop.load()) {
    const int fd = Connect(port, true);
    if (fd < 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      continue;
    }
    ++opened;
    if (rate > 0) std::this_thread::sleep_until(start + std::chrono::microseconds(opened * 1'000'000 / rate));
    [[maybe_unused]] ssize_t n = ::send(fd, partial.data(), partial.size(), MSG_NOSIGNAL);
    held.push_back(fd);
    if (static_cast<int>(held.size()) > hold) {
      ::close(held.front());
      held.pop_front();
    }
  }
  for (int fd : held) ::close(fd);
  return opened;
}

struct PhaseReport {
  std::string name;
  Latencies health, search;
  long flood_connections = 0;
};

PhaseReport RunPhase(const std::string& name, int port, const std::string& key, const Flags& flags,
                     bool slowloris, bool flood) {
  PhaseReport report;
  report.name = name;
  std::atomic<bool> stop{false};
  std::vector<std::thread> attackers;
  std::atomic<long> flood_opened{0};
  if (slowloris) {
    attackers.emplace_back(
        [&] { RunSlowloris(port, flags.slowloris, std::chrono::milliseconds(flags.drip_ms), stop); });
  }
  for (int t = 0; flood && t < flags.flood_threads; ++t) {
    attackers.emplace_back([&] { flood_opened += RunFlood(port, flags.flood_hold, flags.flood_rate, stop); });
  }
  if (slowloris || flood) std::this_thread::sleep_for(std::chrono::seconds(1));  // the attack in full swing
  const auto end = Clock::now() +
                   std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(flags.seconds));
  std::thread health([&] {
    while (Clock::now() < end) {
      const auto t0 = Clock::now();
      if (ProbeHealth(port, std::chrono::seconds(5))) {
        report.health.ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
      } else {
        ++report.health.failures;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
  std::thread search([&] {
    bench::RawHttpClient client(port, "Bearer " + key);
    std::string body;
    const std::string request = R"({"namespace": "bench", "query": "meeting budget review", "k": 5})";
    while (Clock::now() < end) {
      const auto t0 = Clock::now();
      if (client.Post("/v1/memories/search", request, &body) == 200) {
        report.search.ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
      } else {
        ++report.search.failures;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
  health.join();
  search.join();
  stop = true;
  for (auto& t : attackers) t.join();
  report.flood_connections = flood_opened.load();
  return report;
}

int Main(int argc, char** argv) {
  Flags flags;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    const double v = std::stod(argv[i + 1]);
    if (a == "--seconds")
      flags.seconds = std::clamp(v, 1.0, 120.0);
    else if (a == "--slowloris")
      flags.slowloris = std::clamp(static_cast<int>(v), 0, 5000);
    else if (a == "--drip-ms")
      flags.drip_ms = std::clamp(static_cast<int>(v), 50, 60000);
    else if (a == "--flood-threads")
      flags.flood_threads = std::clamp(static_cast<int>(v), 0, 8);
    else if (a == "--flood-hold")
      flags.flood_hold = std::clamp(static_cast<int>(v), 1, 5000);
    else if (a == "--flood-rate")
      flags.flood_rate = std::clamp(static_cast<int>(v), 0, 1'000'000);
    else if (a == "--entries")
      flags.entries = static_cast<size_t>(std::clamp(v, 1.0, 1e6));
    else if (a == "--max-p99-ms")
      flags.max_p99_ms = v;
    else
      return std::fprintf(stderr, "unknown flag %s\n", a.c_str()), 2;
  }
  testing::TempDir dir;
  auto store = MemoryStore::Create(dir.path(), {});
  if (!store.ok()) return 1;
  std::mt19937 rng(42);
  const char* words[] = {"meeting", "budget", "review", "flight", "dentist", "report", "coffee", "garden"};
  for (size_t done = 0; done < flags.entries;) {
    std::vector<NewEntry> batch(std::min<size_t>(1000, flags.entries - done));
    for (NewEntry& e : batch) {
      for (int w = 0; w < 12; ++w) e.text += std::string(w ? " " : "") + words[rng() % std::size(words)];
    }
    if (!(*store)->AddBatch("bench", batch, "loader").ok()) return 1;
    done += batch.size();
  }
  auto registry = PrincipalRegistry::Open(dir.path() / "bulwark.db", Env::Default());
  if (!registry.ok() || !(*registry)->AddPrincipal({"bench", Role::kAdmin, {"*"}}).ok()) return 1;
  auto key = (*registry)->CreateKey("bench");
  if (!key.ok()) return 1;
  server::ServerOptions options;  // the defaults of `bulwark serve`
  options.port = 0;
  options.rate_per_second = 0;
  auto server =
      server::HttpServer::Create(options, {store->get(), registry->get(), nullptr, nullptr, nullptr});
  if (!server.ok()) return 1;
  auto port = (*server)->Bind();
  if (!port.ok()) return 1;
  std::thread serving([&] { (void)(*server)->Serve(); });

  std::printf(
      "slow_clients_bench: %zu entries; %d workers, %d max connections, request deadline %d s; "
      "%.0f s per phase; slowloris %d x 1 byte / %d ms; flood %d threads x %d held, %d/s each (0: max)\n",
      flags.entries, options.threads, options.max_connections, options.request_timeout_s, flags.seconds,
      flags.slowloris, flags.drip_ms, flags.flood_threads, flags.flood_hold, flags.flood_rate);
  std::printf("%-10s %-8s %8s %9s %9s %9s %9s %12s\n", "phase", "probe", "count", "p50 ms", "p99 ms",
              "max ms", "failures", "flood conns");
  bool within = true;
  for (const auto& [name, slowloris, flood] :
       std::vector<std::tuple<std::string, bool, bool>>{{"baseline", false, false},
                                                        {"slowloris", true, false},
                                                        {"flood", false, true},
                                                        {"both", true, true}}) {
    PhaseReport r = RunPhase(name, *port, *key, flags, slowloris, flood);
    const server::ConnectionStats& c = *(*server)->connection_stats();
    std::printf("%-10s server totals: shed %ld, evicted %ld, timed out %ld, malformed %ld; open now %ld\n",
                name.c_str(), static_cast<long>(c.shed_total.load()),
                static_cast<long>(c.evicted_total.load()), static_cast<long>(c.timed_out_total.load()),
                static_cast<long>(c.refused_total.load()), static_cast<long>(c.open.load()));
    for (auto& [probe, l] :
         {std::pair<const char*, Latencies*>{"healthz", &r.health}, {"search", &r.search}}) {
      const double p99 = l->Percentile(0.99);
      std::printf("%-10s %-8s %8zu %9.2f %9.2f %9.2f %9ld %12ld\n", name.c_str(), probe, l->ms.size(),
                  l->Percentile(0.5), p99, l->ms.empty() ? 0 : l->ms.back(), l->failures,
                  r.flood_connections);
      if (flags.max_p99_ms > 0 && (p99 > flags.max_p99_ms || l->failures > 0 || l->ms.empty()))
        within = false;
    }
  }
  (*server)->Stop();
  serving.join();
  if (flags.max_p99_ms > 0)
    std::printf("bound p99 <= %.0f ms, no failures: %s\n", flags.max_p99_ms, within ? "met" : "NOT met");
  return within ? 0 : 1;
}

}  // namespace
}  // namespace bulwark

int main(int argc, char** argv) {
  try {
    return bulwark::Main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "slow_clients_bench: %s\n", e.what());
    return 2;
  }
}
