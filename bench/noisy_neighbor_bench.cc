// Noisy neighbour (issue #18 point 9: "one tenant's large searches cannot slow another's by 80x"):
// an in-process HttpServer on 127.0.0.1 over a real store with two tenants, each a writer on its
// own namespace with its own key.
//   light  one keep-alive connection, k = 5 searches of a namespace of short memories, one every
//          --gap-ms; its latency is what is measured;
//   heavy  --heavy-threads connections sending k = 100 searches of a namespace of long memories
//          (about 100 x --heavy-bytes of JSON per answer) as fast as the server answers them.
// Phases, each --seconds long: the light tenant alone; with the heavy one and rate limiting off
// (`serve --rate 0`); with the heavy one and `bulwark serve`'s default limits (50 tokens/s, burst
// 100, charged by work: rate_limiter.h). Per phase: the light tenant's p50/p99 and their ratio to
// the alone phase, and the heavy tenant's answered and refused (429) requests.
//
//   build/bench/noisy_neighbor_bench [--seconds 8] [--heavy-threads 4] [--heavy-entries 2000]
//                                    [--heavy-bytes 2000] [--light-entries 2000] [--gap-ms 25]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
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
  double seconds = 8;
  int heavy_threads = 4;
  size_t heavy_entries = 2000;
  size_t heavy_bytes = 2000;
  size_t light_entries = 2000;
  int gap_ms = 25;  // 40 searches/s: under the default 50/s of its own key
};

struct PhaseResult {
  std::vector<double> light_ms;
  long light_refused = 0;   // 429: the light tenant over its own limit
  long light_failures = 0;  // anything else but 200
  long heavy_answered = 0;
  long heavy_refused = 0;
  double Percentile(double q) {
    if (light_ms.empty()) return 0;
    std::sort(light_ms.begin(), light_ms.end());
    const double at = q * static_cast<double>(light_ms.size() - 1) + 0.5;
    return light_ms[std::min(light_ms.size() - 1, static_cast<size_t>(at))];
  }
};

// Fills `ns` with `count` memories of about `bytes` characters of random words.
bool Fill(MemoryStore& store, const std::string& ns, size_t count, size_t bytes, uint32_t seed) {
  static const char* kWords[] = {"meeting", "budget", "review", "flight",  "dentist",
                                 "report",  "coffee", "garden", "invoice", "school"};
  std::mt19937 rng(seed);
  for (size_t done = 0; done < count;) {
    std::vector<NewEntry> batch(std::min<size_t>(500, count - done));
    for (NewEntry& e : batch) {
      while (e.text.size() < bytes) e.text += std::string(e.text.empty() ? "" : " ") + kWords[rng() % 10];
    }
    if (!store.AddBatch(ns, batch, "loader").ok()) return false;
    done += batch.size();
  }
  return true;
}

PhaseResult RunPhase(int port, const std::string& light_key, const std::string& heavy_key, const Flags& flags,
                     bool heavy) {
  PhaseResult result;
  std::atomic<bool> stop{false};
  std::atomic<long> answered{0}, refused{0};
  std::vector<std::thread> heavy_threads;
  for (int t = 0; heavy && t < flags.heavy_threads; ++t) {
    heavy_threads.emplace_back([&] {
      bench::RawHttpClient client(port, "Bearer " + heavy_key);
      std::string body;
      const std::string request = R"({"namespace": "heavy", "query": "meeting budget review", "k": 100})";
      while (!stop.load()) {
        const int status = client.Post("/v1/memories/search", request, &body);
        if (status == 200) {
          ++answered;
        } else if (status == 429) {
          ++refused;  // a real client would back off; this one keeps pressing
        }
      }
    });
  }
  if (heavy) std::this_thread::sleep_for(std::chrono::seconds(1));  // the neighbour in full swing
  const auto end = Clock::now() +
                   std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(flags.seconds));
  bench::RawHttpClient client(port, "Bearer " + light_key);
  std::string body;
  const std::string request = R"({"namespace": "light", "query": "dentist coffee", "k": 5})";
  while (Clock::now() < end) {
    const auto t0 = Clock::now();
    const int status = client.Post("/v1/memories/search", request, &body);
    if (status == 200) {
      result.light_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    } else if (status == 429) {
      ++result.light_refused;
    } else {
      ++result.light_failures;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(flags.gap_ms));
  }
  stop = true;
  for (auto& t : heavy_threads) t.join();
  result.heavy_answered = answered.load();
  result.heavy_refused = refused.load();
  return result;
}

bool ParseFlags(int argc, char** argv, Flags* flags) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    const double v = std::stod(argv[i + 1]);
    if (a == "--seconds") {
      flags->seconds = std::clamp(v, 1.0, 120.0);
    } else if (a == "--heavy-threads") {
      flags->heavy_threads = std::clamp(static_cast<int>(v), 1, 32);
    } else if (a == "--heavy-entries") {
      flags->heavy_entries = static_cast<size_t>(std::clamp(v, 100.0, 1e5));
    } else if (a == "--heavy-bytes") {
      flags->heavy_bytes = static_cast<size_t>(std::clamp(v, 10.0, 30000.0));
    } else if (a == "--light-entries") {
      flags->light_entries = static_cast<size_t>(std::clamp(v, 10.0, 1e5));
    } else if (a == "--gap-ms") {
      flags->gap_ms = std::clamp(static_cast<int>(v), 0, 1000);
    } else {
      std::fprintf(stderr, "unknown flag %s\n", a.c_str());
      return false;
    }
  }
  return true;
}

int Main(int argc, char** argv) {
  Flags flags;
  if (!ParseFlags(argc, argv, &flags)) return 2;
  testing::TempDir dir;
  auto store = MemoryStore::Create(dir.path(), {});
  if (!store.ok() || !Fill(**store, "heavy", flags.heavy_entries, flags.heavy_bytes, 1) ||
      !Fill(**store, "light", flags.light_entries, 60, 2)) {
    return 1;
  }
  auto registry = PrincipalRegistry::Open(dir.path() / "bulwark.db", Env::Default());
  if (!registry.ok() || !(*registry)->AddPrincipal({"light", Role::kWriter, {"light"}}).ok() ||
      !(*registry)->AddPrincipal({"heavy", Role::kWriter, {"heavy"}}).ok()) {
    return 1;
  }
  auto light_key = (*registry)->CreateKey("light");
  auto heavy_key = (*registry)->CreateKey("heavy");
  if (!light_key.ok() || !heavy_key.ok()) return 1;

  std::printf(
      "noisy_neighbor_bench: light %zu x 60 B memories, k = 5 every %d ms; heavy %d threads, "
      "%zu x %zu B memories, k = 100; %.0f s per phase\n",
      flags.light_entries, flags.gap_ms, flags.heavy_threads, flags.heavy_entries, flags.heavy_bytes,
      flags.seconds);
  std::printf("%-22s %8s %9s %9s %8s %8s %10s %10s\n", "phase", "light n", "p50 ms", "p99 ms", "p50 x",
              "p99 x", "heavy 200", "heavy 429");
  double alone_p50 = 0, alone_p99 = 0;
  for (const auto& [name, heavy, rate] : std::vector<std::tuple<std::string, bool, double>>{
           {"alone", false, 50}, {"heavy, limit off", true, 0}, {"heavy, default limit", true, 50}}) {
    server::ServerOptions options;  // the defaults of `bulwark serve`
    options.port = 0;
    options.rate_per_second = rate;
    auto server =
        server::HttpServer::Create(options, {store->get(), registry->get(), nullptr, nullptr, nullptr});
    if (!server.ok()) return 1;
    auto port = (*server)->Bind();
    if (!port.ok()) return 1;
    std::thread serving([&] { (void)(*server)->Serve(); });
    PhaseResult r = RunPhase(*port, *light_key, *heavy_key, flags, heavy);
    (*server)->Stop();
    serving.join();
    const double p50 = r.Percentile(0.5), p99 = r.Percentile(0.99);
    if (!heavy) alone_p50 = p50, alone_p99 = p99;
    std::printf("%-22s %8zu %9.3f %9.3f %8.1f %8.1f %10ld %10ld\n", name.c_str(), r.light_ms.size(), p50, p99,
                alone_p50 > 0 ? p50 / alone_p50 : 0, alone_p99 > 0 ? p99 / alone_p99 : 0, r.heavy_answered,
                r.heavy_refused);
    if (r.light_failures + r.light_refused > 0)
      std::printf("  light: %ld refused (429), %ld failed\n", r.light_refused, r.light_failures);
  }
  return 0;
}

}  // namespace
}  // namespace bulwark

int main(int argc, char** argv) {
  try {
    return bulwark::Main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "noisy_neighbor_bench: %s\n", e.what());
    return 2;
  }
}
