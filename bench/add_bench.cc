// Durable add throughput: MemoryStore::AddBatch with the default lexical embedder into a real
// SQLite store (WAL, synchronous=FULL), so each iteration pays embedding, signing, the insert and
// one fsync'd commit. Batches of 1024 or more embed and sign on every core. Target (issue #2):
// >= 20,000 entries/s batched.
#include <benchmark/benchmark.h>

#include <random>

#include "store/memory_store.h"
#include "testing/temp_dir.h"

namespace bulwark {
namespace {

constexpr const char* kWords[] = {"meeting", "project",  "alice",    "budget",    "flight",   "review",
                                  "dentist", "weekly",   "report",   "deadline",  "prefers",  "window",
                                  "seat",    "coffee",   "morning",  "quarterly", "contract", "vendor",
                                  "renewal", "office",   "password", "reminder",  "calendar", "friday",
                                  "lisbon",  "passport", "allergic", "peanuts",   "editor",   "theme"};

// ~30-word memories, reproducible from the seed.
std::vector<NewEntry> MakeEntries(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<size_t> pick(0, std::size(kWords) - 1);
  std::vector<NewEntry> entries(n);
  for (auto& e : entries) {
    for (int w = 0; w < 30; ++w) e.text += std::string(w ? " " : "") + kWords[pick(rng)];
  }
  return entries;
}

void BM_AddBatch(benchmark::State& state) {
  testing::TempDir dir;
  auto store = MemoryStore::Create(dir.path(), {});
  if (!store.ok()) {
    state.SkipWithError(std::string(store.status().message()).c_str());
    return;
  }
  const size_t batch = static_cast<size_t>(state.range(0));
  uint32_t seed = 1;
  for (auto _ : state) {
    state.PauseTiming();
    auto entries = MakeEntries(batch, seed++);
    state.ResumeTiming();
    auto added = (*store)->AddBatch("bench", entries, "bench");
    if (!added.ok()) state.SkipWithError(std::string(added.status().message()).c_str());
  }
  state.counters["entries/s"] =
      benchmark::Counter(static_cast<double>(state.iterations() * batch), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_AddBatch)
    ->Arg(1)
    ->Arg(100)
    ->Arg(1000)
    ->Arg(10000)
    ->Unit(benchmark::kMillisecond)
    ->MinTime(2.0)
    ->UseRealTime();

}  // namespace
}  // namespace bulwark

BENCHMARK_MAIN();
