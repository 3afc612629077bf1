// Load benchmark of the HTTP service (issue #3): an in-process HttpServer on 127.0.0.1 over a real
// store (SQLite + lexical embedder) holding a 10k-entry namespace, driven by N keep-alive client
// connections (RawHttpClient, one thread each: a wrk-like client that costs the server little CPU). Two
// phases, each bounded in time and in request count: search (POST /v1/memories/search, k=5) and add (POST
// /v1/memories, one entry per request, into another namespace so the searched one stays at 10k). Reports
// req/s, p50/p99/max latency and errors per phase, as a table and as one JSON line.
//
//   build/bench/load_bench [--connections 8] [--seconds 5] [--entries 10000] [--max-requests 200000]
//                          [--k 5] [--threads 0 (= connections + 2)] [--no-audit] [--phase all|search|add]
//                          [--continuation-us 500 (the server's keep-alive continuation wait)]
//                          [--ranking hybrid|vector (default: the store's default, hybrid)]
//
// Besides throughput it reports the process's CPU time per request (user + system, clients
// included): on a shared machine that moves far less between runs than req/s, so it is the number
// to compare when changing the request path.
// Target on the project's 2-core machine: search >= 5,000 req/s with p99 <= 10 ms and zero errors.
// Client and server share the machine; other processes running at the same time skew the numbers.
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "audit/audit_log.h"
#include "auth/principal_registry.h"
#include "gate/gate_registry.h"
#include "gate/gate_store.h"
#include "raw_http_client.h"
#include "retrieval/defended_retriever.h"
#include "server/http_server.h"
#include "storage/store_layout.h"
#include "store/memory_store.h"
#include "testing/temp_dir.h"

namespace bulwark {
namespace {

using Clock = std::chrono::steady_clock;

struct Flags {
  int connections = 8;
  double seconds = 5;
  size_t entries = 10'000;
  long max_requests = 200'000;  // per phase, over all connections
  int k = 5;
  int threads = 0;
  int continuation_us = server::ServerOptions{}.continuation_wait_us;
  bool audit = true;
  std::string phase = "all";
  std::string ranking;  // empty: the store's default ranking
};

constexpr const char* kWords[] = {
    "meeting",  "project",  "alice",    "budget",    "flight",   "review",   "dentist",  "weekly",
    "report",   "deadline", "prefers",  "window",    "seat",     "coffee",   "morning",  "quarterly",
    "contract", "vendor",   "renewal",  "office",    "password", "reminder", "calendar", "friday",
    "lisbon",   "passport", "allergic", "peanuts",   "editor",   "theme",    "garden",   "invoice",
    "birthday", "train",    "doctor",   "insurance", "laptop",   "recipe",   "hotel",    "tuesday"};

std::string Words(std::mt19937& rng, int n) {
  std::uniform_int_distribution<size_t> pick(0, std::size(kWords) - 1);
  std::string out;
  for (int i = 0; i < n; ++i) out += std::string(i ? " " : "") + kWords[pick(rng)];
  return out;
}

struct PhaseResult {
  std::string name;
  long requests = 0;
  long errors = 0;
  double seconds = 0;
  double p50_ms = 0, p99_ms = 0, max_ms = 0;
  double cpu_us_per_request = 0;  // process CPU (user + system) over the phase / requests
  double rate() const { return seconds > 0 ? static_cast<double>(requests) / seconds : 0; }
};

// User + system CPU time of the whole process so far, in microseconds.
double ProcessCpuMicros() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto micros = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_usec);
  };
  return micros(usage.ru_utime) + micros(usage.ru_stime);
}

double Percentile(std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  size_t i = static_cast<size_t>(q * static_cast<double>(sorted.size() - 1) + 0.5);
  return sorted[std::min(i, sorted.size() - 1)];
}

// Runs `connections` client threads, each sending `make_body(rng)` to `path` until the time or the
// request budget is used up.
PhaseResult RunPhase(const std::string& name, int port, const std::string& key, const std::string& path,
                     const Flags& flags, const std::function<std::string(std::mt19937&)>& make_body) {
  std::atomic<long> budget{flags.max_requests};
  std::atomic<long> errors{0};
  std::vector<std::vector<double>> latencies(flags.connections);
  // Connect and warm up every client before the clock starts.
  std::vector<std::unique_ptr<bench::RawHttpClient>> clients;
  std::string response;
  for (int c = 0; c < flags.connections; ++c) {
    auto client = std::make_unique<bench::RawHttpClient>(port, "Bearer " + key);
    std::mt19937 rng(1000 + c);
    for (int i = 0; i < 5; ++i) client->Post(path, make_body(rng), &response);
    clients.push_back(std::move(client));
  }
  const double cpu_start = ProcessCpuMicros();
  const Clock::time_point start = Clock::now();
  const Clock::time_point deadline =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(flags.seconds));
  std::vector<std::thread> threads;
  for (int c = 0; c < flags.connections; ++c) {
    threads.emplace_back([&, c] {
      std::mt19937 rng(c + 1);
      std::vector<double>& mine = latencies[c];
      std::string body_in;
      mine.reserve(static_cast<size_t>(flags.max_requests / flags.connections + 16));
      while (budget.fetch_sub(1) > 0) {
        const std::string body = make_body(rng);
        const Clock::time_point t0 = Clock::now();
        if (t0 >= deadline) break;
        const int status = clients[c]->Post(path, body, &body_in);
        mine.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
        if ((status != 200 && status != 201) || body_in.empty() || body_in.front() != '{') {
          if (errors.fetch_add(1) < 3)
            std::fprintf(stderr, "%s: status %d: %.200s\n", name.c_str(), status, body_in.c_str());
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  PhaseResult r;
  r.name = name;
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const double cpu_us = ProcessCpuMicros() - cpu_start;
  std::vector<double> all;
  for (auto& v : latencies) all.insert(all.end(), v.begin(), v.end());
  std::sort(all.begin(), all.end());
  r.requests = static_cast<long>(all.size());
  r.errors = errors.load();
  r.p50_ms = Percentile(all, 0.50);
  r.p99_ms = Percentile(all, 0.99);
  r.max_ms = all.empty() ? 0 : all.back();
  r.cpu_us_per_request = r.requests > 0 ? cpu_us / static_cast<double>(r.requests) : 0;
  return r;
}

Flags ParseFlags(int argc, char** argv) {
  auto usage = [] {
    std::fprintf(stderr,
                 "usage: load_bench [--connections N] [--seconds S] [--entries N] [--max-requests N] "
                 "[--k K] [--threads N] [--no-audit] [--phase all|search|add] [--continuation-us N] "
                 "[--ranking hybrid|vector]\n");
    std::exit(2);
  };
  Flags f;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--connections") {
      f.connections = std::clamp(std::stoi(next()), 1, 256);
    } else if (a == "--seconds") {
      f.seconds = std::clamp(std::stod(next()), 0.1, 120.0);
    } else if (a == "--entries") {
      f.entries = std::clamp<size_t>(std::stoul(next()), 1, 1'000'000);
    } else if (a == "--max-requests") {
      f.max_requests = std::clamp(std::stol(next()), 1L, 10'000'000L);
    } else if (a == "--k") {
      f.k = std::clamp(std::stoi(next()), 1, 100);
    } else if (a == "--threads") {
      f.threads = std::clamp(std::stoi(next()), 0, 1024);
    } else if (a == "--continuation-us") {
      f.continuation_us = std::clamp(std::stoi(next()), 0, 100'000);
    } else if (a == "--no-audit") {
      f.audit = false;
    } else if (a == "--phase") {
      f.phase = next();
      if (f.phase != "all" && f.phase != "search" && f.phase != "add") usage();
    } else if (a == "--ranking") {
      f.ranking = next();
      if (f.ranking != "hybrid" && f.ranking != "vector") usage();
    } else {
      usage();
    }
  }
  return f;
}

int Main(int argc, char** argv) {
  const Flags flags = ParseFlags(argc, argv);
  testing::TempDir dir;
  StoreOptions store_options;
  if (!flags.ranking.empty()) store_options.retrieval_config = {{"default", flags.ranking}};
  auto store = MemoryStore::Create(dir.path(), store_options);
  if (!store.ok()) {
    std::fprintf(stderr, "store: %s\n", std::string(store.status().message()).c_str());
    return 1;
  }
  std::mt19937 rng(42);
  const Clock::time_point load_start = Clock::now();
  for (size_t done = 0; done < flags.entries;) {
    std::vector<NewEntry> batch(std::min<size_t>(1000, flags.entries - done));
    for (NewEntry& e : batch) e.text = Words(rng, 20);
    auto added = (*store)->AddBatch("bench", batch, "loader");
    if (!added.ok()) {
      std::fprintf(stderr, "load: %s\n", std::string(added.status().message()).c_str());
      return 1;
    }
    done += batch.size();
  }
  const double load_s = std::chrono::duration<double>(Clock::now() - load_start).count();

  const auto db = bulwark::StoreLayout(dir.path()).database();
  auto registry = PrincipalRegistry::Open(db, Env::Default());
  if (!registry.ok()) return 1;
  if (!(*registry)->AddPrincipal({"bench", Role::kAdmin, {"*"}}).ok()) return 1;
  auto key = (*registry)->CreateKey("bench");
  if (!key.ok()) return 1;
  absl::StatusOr<std::unique_ptr<AuditLog>> audit = std::unique_ptr<AuditLog>();
  if (flags.audit) audit = AuditLog::OpenForStore(db);
  if (!audit.ok()) return 1;

  // The read path as `bulwark serve` builds it: the namespace's query gate looked up (none is
  // fitted here, so every query passes) and recorded into the query history.
  auto gates = GateStore::Open(db);
  if (!gates.ok()) return 1;
  GateRegistry gate_registry(gates->get(), Env::Default());
  DefendedRetriever retriever(store->get(), &gate_registry, /*llm=*/nullptr);

  server::ServerOptions options;
  options.port = 0;
  options.threads = flags.threads > 0 ? flags.threads : flags.connections + 2;
  options.continuation_wait_us = flags.continuation_us;
  options.rate_per_second = 0;  // the benchmark measures the service, not the limiter
  auto server =
      server::HttpServer::Create(options, {store->get(), registry->get(), audit->get(), nullptr, &retriever});
  if (!server.ok()) return 1;
  auto port = (*server)->Bind();
  if (!port.ok()) return 1;
  std::thread serving([&] { (void)(*server)->Serve(); });

  std::printf(
      "load_bench: %zu entries loaded in %.1f s; %d keep-alive connections, %d server workers, "
      "%.1f s or %ld requests per phase, k=%d, audit %s\n",
      flags.entries, load_s, flags.connections, options.threads, flags.seconds, flags.max_requests, flags.k,
      flags.audit ? "on" : "off");
  std::vector<PhaseResult> results;
  if (flags.phase != "add") {
    results.push_back(RunPhase("search", *port, *key, "/v1/memories/search", flags, [&](std::mt19937& r) {
      return nlohmann::json{{"namespace", "bench"}, {"query", Words(r, 3)}, {"k", flags.k}}.dump();
    }));
  }
  if (flags.phase != "search") {
    results.push_back(RunPhase("add", *port, *key, "/v1/memories", flags, [](std::mt19937& r) {
      return nlohmann::json{{"namespace", "bench-add"}, {"text", Words(r, 20)}}.dump();
    }));
  }
  (*server)->Stop();
  serving.join();

  std::printf("%-8s %10s %10s %9s %9s %9s %8s %12s\n", "phase", "requests", "req/s", "p50 ms", "p99 ms",
              "max ms", "errors", "cpu us/req");
  nlohmann::json report = nlohmann::json::object();
  for (const PhaseResult& r : results) {
    std::printf("%-8s %10ld %10.0f %9.3f %9.3f %9.3f %8ld %12.1f\n", r.name.c_str(), r.requests, r.rate(),
                r.p50_ms, r.p99_ms, r.max_ms, r.errors, r.cpu_us_per_request);
    report[r.name] = {{"requests", r.requests},
                      {"req_per_s", r.rate()},
                      {"p50_ms", r.p50_ms},
                      {"p99_ms", r.p99_ms},
                      {"max_ms", r.max_ms},
                      {"errors", r.errors},
                      {"cpu_us_per_request", r.cpu_us_per_request}};
  }
  report["connections"] = flags.connections;
  report["entries"] = flags.entries;
  std::printf("%s\n", report.dump().c_str());
  return 0;
}

}  // namespace
}  // namespace bulwark

int main(int argc, char** argv) {
  try {
    return bulwark::Main(argc, argv);
  } catch (const std::exception& e) {  // e.g. a non-numeric flag value
    std::fprintf(stderr, "load_bench: %s\n", e.what());
    return 2;
  }
}
