// Read-time defenses (issue #5). Gate cost per query, excluding embedding, for each score at
// d = 384 (target <= 5 us each); the overhead of smoothed retrieval with the extractive responder
// over a plain top-k search on a real store; the certificate.
//
//   build/bench/read_defense_bench [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <random>

#include "gate/gate_model.h"
#include "retrieval/defended_retriever.h"
#include "smoothing/certificate.h"
#include "smoothing/embedding_equivalence.h"
#include "smoothing/extractive_responder.h"
#include "store/memory_store.h"
#include "testing/temp_dir.h"

namespace bulwark {
namespace {

constexpr int kDim = 384;

std::vector<std::vector<float>> UnitVectors(int n, uint32_t seed, float shift = 0) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0, 1);
  std::vector<std::vector<float>> out(n, std::vector<float>(kDim));
  for (auto& v : out) {
    double norm = 0;
    for (int i = 0; i < kDim; ++i) {
      v[i] = g(rng) + (i < 8 ? shift : 0.0f);
      norm += double(v[i]) * v[i];
    }
    for (float& x : v) x = static_cast<float>(x / std::sqrt(norm));
  }
  return out;
}

const GateModel& Model() {
  static const GateModel* model = [] {
    auto fitted = GateModel::Fit(UnitVectors(300, 1), UnitVectors(60, 2, 1.0f), {});
    if (!fitted.ok()) std::abort();
    return new GateModel(*std::move(fitted));
  }();
  return *model;
}

void BM_GateScore(benchmark::State& state) {
  const GateModel& model = Model();
  const GateScore score = static_cast<GateScore>(state.range(0));
  const auto queries = UnitVectors(64, 3);
  size_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(model.ScoreOf(score, queries[i++ & 63]));
  state.SetLabel(std::string(ToString(score)));
}
BENCHMARK(BM_GateScore)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);

void BM_GateAllScores(benchmark::State& state) {
  const GateModel& model = Model();
  const auto queries = UnitVectors(64, 4);
  size_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(model.Score(queries[i++ & 63]));
}
BENCHMARK(BM_GateAllScores)->Unit(benchmark::kMicrosecond);

void BM_GateFit(benchmark::State& state) {
  const auto benign = UnitVectors(300, 5), triggered = UnitVectors(60, 6, 1.0f);
  for (auto _ : state) benchmark::DoNotOptimize(GateModel::Fit(benign, triggered, {}));
}
BENCHMARK(BM_GateFit)->Unit(benchmark::kMillisecond)->Iterations(3);

// A store of 10,000 ~30-word memories, opened once.
struct Fixture {
  testing::TempDir dir;
  std::unique_ptr<MemoryStore> store;
  std::unique_ptr<DefendedRetriever> retriever;
};
Fixture& Store() {
  static Fixture* f = [] {
    auto* fixture = new Fixture();
    auto store = MemoryStore::Create(fixture->dir.path(), {});
    if (!store.ok()) std::abort();
    fixture->store = *std::move(store);
    static const char* kWords[] = {"meeting", "project", "alice",    "budget",   "flight",
                                   "review",  "dentist", "weekly",   "report",   "window",
                                   "seat",    "coffee",  "lisbon",   "passport", "vendor",
                                   "office",  "friday",  "calendar", "allergy",  "theme"};
    std::mt19937 rng(7);
    std::uniform_int_distribution<size_t> pick(0, std::size(kWords) - 1);
    std::vector<NewEntry> entries(10000);
    for (auto& e : entries) {
      for (int w = 0; w < 30; ++w) e.text += std::string(w ? " " : "") + kWords[pick(rng)];
    }
    if (!fixture->store->AddBatch("bench", entries, "bench").ok()) std::abort();
    fixture->retriever = std::make_unique<DefendedRetriever>(fixture->store.get(), nullptr, nullptr);
    return fixture;
  }();
  return *f;
}

constexpr char kQuery[] = "when is the budget review meeting with alice";

// MemoryStore::Search alone at k = 5 and at the over-fetch sizes m = 20 and 100 (each returned
// candidate is re-read from SQLite and its HMAC checked).
void BM_PlainSearch(benchmark::State& state) {
  MemoryStore& store = *Store().store;
  const int k = static_cast<int>(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(store.Search("bench", kQuery, {.k = k}));
}
BENCHMARK(BM_PlainSearch)->Arg(5)->Arg(20)->Arg(100)->Unit(benchmark::kMicrosecond);

void BM_DefendedSearchNoSmoothing(benchmark::State& state) {
  DefendedRetriever& retriever = *Store().retriever;
  DefendedSearchRequest request{.name_space = "bench", .query = kQuery};
  request.search.k = 5;
  for (auto _ : state) benchmark::DoNotOptimize(retriever.Search(request));
}
BENCHMARK(BM_DefendedSearchNoSmoothing)->Unit(benchmark::kMicrosecond);

// Search with k = m plus Smoother with the extractive responder and embedding equivalence.
void BM_SmoothedSearch(benchmark::State& state) {
  DefendedRetriever& retriever = *Store().retriever;
  DefendedSearchRequest request{.name_space = "bench", .query = kQuery};
  request.search.k = 5;
  request.smoothing = SmoothingOptions{
      .m = static_cast<int>(state.range(0)), .k = 5, .nruns = static_cast<int>(state.range(1))};
  for (auto _ : state) benchmark::DoNotOptimize(retriever.Search(request));
  state.SetLabel("m=" + std::to_string(state.range(0)) + " nruns=" + std::to_string(state.range(1)));
}
BENCHMARK(BM_SmoothedSearch)->Args({20, 5})->Args({20, 11})->Args({100, 25})->Unit(benchmark::kMicrosecond);

// The smoother alone on a fetched pool (sampling, responses, aggregation, certificate).
void BM_SmootherOnly(benchmark::State& state) {
  MemoryStore& store = *Store().store;
  auto pool = store.Search("bench", kQuery, {.k = 20});
  if (!pool.ok()) std::abort();
  ExtractiveResponder responder;
  EmbeddingEquivalence judge(&store.embedder());
  Smoother smoother(&responder, &judge);
  SeededCsprng rng(SeededCsprng::Seed{});
  for (auto _ : state)
    benchmark::DoNotOptimize(smoother.Answer(kQuery, pool->hits, {.m = 20, .k = 5, .nruns = 5}, &rng));
}
BENCHMARK(BM_SmootherOnly)->Unit(benchmark::kMicrosecond);

void BM_Certificate(benchmark::State& state) {
  const CertificateParams params{
      .m = static_cast<int>(state.range(0)), .k = 5, .nruns = static_cast<int>(state.range(1))};
  for (auto _ : state) benchmark::DoNotOptimize(MakeCertificate(params));
}
BENCHMARK(BM_Certificate)->Args({20, 5})->Args({10000, 101})->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace bulwark

BENCHMARK_MAIN();
