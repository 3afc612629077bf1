// Exact top-k search latency on one thread (DESIGN 4.4): FlatIndex against FAISS IndexFlatIP and
// against the memory-bandwidth bound, side by side in one run.
//
// For each n in {1k, 10k, 100k, 1M} (d = 384, k = 10, random unit vectors from a fixed seed) five
// rows are reported, in this order:
//   Bound/n             a vectorized streaming sum over a buffer of n * d floats, the bytes a float
//                       scan must read: bound time = bytes scanned / read bandwidth
//   FlatIndex/n         FlatIndex::Search in its default mode (ScanMode::kInt8Bounded on CPUs with
//                       AVX-512 VNNI: an int8 pre-scan, then float32 for the rows that can still
//                       make the top k), every row passing the filter
//   FlatIndexFiltered/n the same with the default filter, which drops the 10% of rows that are
//                       honeypots
//   FlatIndexExact/n    FlatIndex::Search in ScanMode::kExact (float32 for every row)
//   FaissFlatIP/n       faiss::IndexFlatIP::search for one query (OpenMP pinned to one thread)
// Random dense vectors are the int8 pre-scan's hardest input: every query touches every byte of
// the int8 copy, where a sparse lexical query touches about an eighth.
// Time and CPU columns are per query in ms. Each FlatIndex/FAISS row also interleaves its own bound
// passes (clock paused) between batches of queries, so the counters ms_per_query, bound_ms and
// x_bound (= ms_per_query / bound_ms) come from the same machine conditions; they use the
// benchmark thread's CPU time, which equals wall time on an idle machine and leaves out time spent
// descheduled on a shared one. Only one n is resident at a time: about 6.4 GB at n = 1M (vectors,
// two FlatIndex copies, one with its int8 copy, FAISS copy). Run with OMP_NUM_THREADS=1 as well; main() also
// calls omp_set_num_threads(1). Debian's FAISS scores one query against the rows with its scalar
// fvec_inner_product (FAISS uses BLAS only from 20 queries per call), so BLAS plays no part here.
#include <benchmark/benchmark.h>
#include <dlfcn.h>
#include <faiss/IndexFlat.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "index/flat_index.h"
#include "index/inner_product.h"

namespace bulwark {
namespace {

constexpr int kDimension = 384;
constexpr int kTopK = 10;
constexpr size_t kQueries = 16;  // cycled, so consecutive queries differ
constexpr uint64_t kSeed = 20240601;

using AlignedFloats = std::vector<float, CacheLineAllocator<float>>;

// SplitMix64: fast and good enough to fill a gigabyte of test vectors.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [-1, 1).
  float NextSigned() { return static_cast<float>(Next() >> 40) * (2.0f / (1u << 24)) - 1.0f; }

 private:
  uint64_t state_;
};

// Random directions, normalized to unit length (uniform in the cube, then projected).
void FillUnitVectors(Rng& rng, float* out, size_t count) {
  for (size_t r = 0; r < count; ++r) {
    float* v = out + r * kDimension;
    double norm2 = 0;
    for (int i = 0; i < kDimension; ++i) {
      v[i] = rng.NextSigned();
      norm2 += static_cast<double>(v[i]) * v[i];
    }
    const float scale = static_cast<float>(1.0 / std::sqrt(norm2));
    for (int i = 0; i < kDimension; ++i) v[i] *= scale;
  }
}

// ---------------------------------------------------------------------------------------------
// The bandwidth probe: sum every float of the buffer with independent accumulators so that the
// loop is limited by loads, not by add latency.

#if defined(__x86_64__)
__attribute__((target("avx512f"))) float StreamSumAvx512(const float* data, size_t count) {
  __m512 acc[8];
  for (__m512& a : acc) a = _mm512_setzero_ps();
  size_t i = 0;
  for (; i + 128 <= count; i += 128) {
#pragma GCC unroll 8
    for (int j = 0; j < 8; ++j) acc[j] = _mm512_add_ps(acc[j], _mm512_load_ps(data + i + 16 * j));
  }
  float tail = 0;
  for (; i < count; ++i) tail += data[i];
  for (int j = 1; j < 8; ++j) acc[0] = _mm512_add_ps(acc[0], acc[j]);
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, acc[0]);
  for (float x : lanes) tail += x;
  return tail;
}

__attribute__((target("avx2"))) float StreamSumAvx2(const float* data, size_t count) {
  __m256 acc[8];
  for (__m256& a : acc) a = _mm256_setzero_ps();
  size_t i = 0;
  for (; i + 64 <= count; i += 64) {
#pragma GCC unroll 8
    for (int j = 0; j < 8; ++j) acc[j] = _mm256_add_ps(acc[j], _mm256_load_ps(data + i + 8 * j));
  }
  float tail = 0;
  for (; i < count; ++i) tail += data[i];
  for (int j = 1; j < 8; ++j) acc[0] = _mm256_add_ps(acc[0], acc[j]);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, acc[0]);
  for (float x : lanes) tail += x;
  return tail;
}
#endif

float StreamSumScalar(const float* data, size_t count) {
  float acc[8] = {};
  size_t i = 0;
  for (; i + 8 <= count; i += 8) {
    for (int j = 0; j < 8; ++j) acc[j] += data[i + j];
  }
  for (; i < count; ++i) acc[0] += data[i];
  float sum = 0;
  for (float a : acc) sum += a;
  return sum;
}

float StreamSum(const float* data, size_t count) {
#if defined(__x86_64__)
  if (CpuSupports(SimdLevel::kAvx512)) return StreamSumAvx512(data, count);
  if (CpuSupports(SimdLevel::kAvx2)) return StreamSumAvx2(data, count);
#endif
  return StreamSumScalar(data, count);
}

// ---------------------------------------------------------------------------------------------
// One data set, built on first use for its n and dropped when another n is requested.

struct Dataset {
  size_t n = 0;
  AlignedFloats vectors;  // n * d, row-major; also the buffer the bound streams over
  std::vector<float> queries;
  std::unique_ptr<FlatIndex> flat;
  std::unique_ptr<FlatIndex> exact;  // ScanMode::kExact
  std::unique_ptr<faiss::IndexFlatIP> faiss_index;

  size_t bytes() const { return n * kDimension * sizeof(float); }
  const float* query(size_t i) const { return queries.data() + (i % kQueries) * kDimension; }
};

// Row r is a honeypot when r % 10 == 9, so the default filter passes 90% of the rows.
Kind KindOfRow(size_t r) { return r % 10 == 9 ? Kind::kHoneypot : Kind::kMemory; }

Dataset& DatasetFor(size_t n) {
  static std::unique_ptr<Dataset> current;
  if (current != nullptr && current->n == n) return *current;
  current.reset();  // free the previous n first
  auto data = std::make_unique<Dataset>();
  data->n = n;
  Rng rng(kSeed);
  data->vectors.resize(n * kDimension);
  FillUnitVectors(rng, data->vectors.data(), n);
  data->queries.resize(kQueries * kDimension);
  FillUnitVectors(rng, data->queries.data(), kQueries);

  data->flat = std::move(FlatIndex::Create(kDimension)).value();
  data->exact = std::move(FlatIndex::Create(kDimension, BestSimdLevel(), ScanMode::kExact)).value();
  for (FlatIndex* index : {data->flat.get(), data->exact.get()}) {
    if (!index->Reserve(n).ok()) std::abort();
    for (size_t r = 0; r < n; ++r) {
      const std::span<const float> row(data->vectors.data() + r * kDimension, kDimension);
      if (!index->Add(static_cast<int64_t>(r), row, State::kActive, KindOfRow(r)).ok()) std::abort();
    }
  }
  data->faiss_index = std::make_unique<faiss::IndexFlatIP>(kDimension);
  data->faiss_index->add(static_cast<faiss::Index::idx_t>(n), data->vectors.data());
  current = std::move(data);
  return *current;
}

// CPU time of the calling thread in ms. The benchmarks are single-threaded, so on an idle machine
// this equals wall time; on a shared one it leaves out the time the thread was not running.
double ThreadCpuMs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

// Scanned bytes per batch of queries (then as many bound passes): about 0.1 s of work, so that the
// bound passes, which stream over another buffer, evict a cache-sized index only once per batch,
// and the clock reads and pauses cost nothing.
constexpr size_t kBatchBytes = size_t{1} << 30;

size_t BatchSize(const Dataset& data) { return std::max<size_t>(1, kBatchBytes / data.bytes()); }

float StreamOnce(const Dataset& data) { return StreamSum(data.vectors.data(), data.vectors.size()); }

// Runs `query(i)` for the benchmark's iterations in batches and, after each batch and with the
// benchmark clock paused, as many bound passes, so both see the same machine conditions (caches,
// other tenants). Reports ms_per_query, bound_ms and x_bound from thread CPU time.
template <typename Query>
void RunAgainstBound(benchmark::State& state, const Dataset& data, Query query) {
  const size_t batch = BatchSize(data);
  double query_ms = 0, bound_ms = 0;
  size_t count = 0, i = 0;
  float sink = StreamOnce(data);  // warm-up
  while (state.KeepRunningBatch(static_cast<benchmark::IterationCount>(batch))) {
    const double t0 = ThreadCpuMs();
    for (size_t b = 0; b < batch; ++b) {
      if (!query(i++)) return;
    }
    const double t1 = ThreadCpuMs();
    state.PauseTiming();
    const double t2 = ThreadCpuMs();
    for (size_t b = 0; b < batch; ++b) sink += StreamOnce(data);
    benchmark::DoNotOptimize(sink);
    bound_ms += ThreadCpuMs() - t2;
    state.ResumeTiming();
    query_ms += t1 - t0;
    count += batch;
  }
  state.counters["ms_per_query"] = query_ms / static_cast<double>(count);
  state.counters["bound_ms"] = bound_ms / static_cast<double>(count);
  state.counters["x_bound"] = query_ms / bound_ms;
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(data.bytes()));
}

// ---------------------------------------------------------------------------------------------
// Benchmarks

// The read bandwidth on its own; ms_per_query is the bound time, bytes_per_second the bandwidth.
void BM_Bound(benchmark::State& state) {
  const Dataset& data = DatasetFor(static_cast<size_t>(state.range(0)));
  float sink = StreamOnce(data);  // warm-up
  const double start = ThreadCpuMs();
  for (auto _ : state) {
    sink += StreamOnce(data);
    benchmark::DoNotOptimize(sink);
  }
  const double ms = (ThreadCpuMs() - start) / static_cast<double>(state.iterations());
  state.counters["ms_per_query"] = ms;
  state.counters["bound_ms"] = ms;
  state.counters["x_bound"] = 1.0;
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(data.bytes()));
}

void RunFlatIndex(benchmark::State& state, const IndexFilter& filter, bool exact = false) {
  const Dataset& data = DatasetFor(static_cast<size_t>(state.range(0)));
  const FlatIndex& index = exact ? *data.exact : *data.flat;
  RunAgainstBound(state, data, [&](size_t i) {
    auto hits = index.Search(std::span<const float>(data.query(i), kDimension), kTopK, filter);
    if (!hits.ok() || hits->size() != std::min<size_t>(kTopK, data.n)) {
      state.SkipWithError("FlatIndex::Search failed");
      return false;
    }
    benchmark::DoNotOptimize(hits->data());
    return true;
  });
}

void BM_FlatIndex(benchmark::State& state) { RunFlatIndex(state, IndexFilter{.states = ~0u, .kinds = ~0u}); }

void BM_FlatIndexFiltered(benchmark::State& state) { RunFlatIndex(state, IndexFilter{}); }

void BM_FlatIndexExact(benchmark::State& state) {
  RunFlatIndex(state, IndexFilter{.states = ~0u, .kinds = ~0u}, /*exact=*/true);
}

void BM_FaissFlatIP(benchmark::State& state) {
  const Dataset& data = DatasetFor(static_cast<size_t>(state.range(0)));
  std::vector<float> distances(kTopK);
  std::vector<faiss::Index::idx_t> labels(kTopK);

  // The indexes must agree before their speed is compared: the two FlatIndex modes exactly, FAISS
  // to float accuracy.
  auto flat_hits = data.flat->Search(std::span<const float>(data.query(0), kDimension), kTopK,
                                     IndexFilter{.states = ~0u, .kinds = ~0u});
  auto exact_hits = data.exact->Search(std::span<const float>(data.query(0), kDimension), kTopK,
                                       IndexFilter{.states = ~0u, .kinds = ~0u});
  for (size_t j = 0; flat_hits.ok() && exact_hits.ok() && j < flat_hits->size(); ++j) {
    if ((*flat_hits)[j].row_id != (*exact_hits)[j].row_id ||
        (*flat_hits)[j].score != (*exact_hits)[j].score) {
      state.SkipWithError("FlatIndex modes disagree");
      return;
    }
  }
  data.faiss_index->search(1, data.query(0), kTopK, distances.data(), labels.data());
  for (size_t j = 0; flat_hits.ok() && j < flat_hits->size(); ++j) {
    if (std::fabs((*flat_hits)[j].score - distances[j]) > 1e-4f) {
      state.SkipWithError("FAISS and FlatIndex disagree");
      return;
    }
  }
  RunAgainstBound(state, data, [&](size_t i) {
    data.faiss_index->search(1, data.query(i), kTopK, distances.data(), labels.data());
    benchmark::DoNotOptimize(labels.data());
    return true;
  });
}

// Which BLAS the process resolved (FAISS only calls it for 20+ queries at once, so not here).
std::string BlasDescription() {
  using CoreName = char* (*)();
  if (auto core = reinterpret_cast<CoreName>(dlsym(RTLD_DEFAULT, "openblas_get_corename"))) {
    return std::string("OpenBLAS, core ") + core();
  }
  return "not OpenBLAS (reference BLAS or other)";
}

void RegisterAll() {
  for (int64_t n : {1000, 10000, 100000, 1000000}) {
    // About 0.5 s of timed queries per row (plus as long again for the interleaved bound passes).
    const double min_time = 0.5;
    benchmark::RegisterBenchmark("Bound", BM_Bound)->Arg(n)->MinTime(min_time)->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark("FlatIndex", BM_FlatIndex)
        ->Arg(n)
        ->MinTime(min_time)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark("FlatIndexFiltered", BM_FlatIndexFiltered)
        ->Arg(n)
        ->MinTime(min_time)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark("FlatIndexExact", BM_FlatIndexExact)
        ->Arg(n)
        ->MinTime(min_time)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark("FaissFlatIP", BM_FaissFlatIP)
        ->Arg(n)
        ->MinTime(min_time)
        ->Unit(benchmark::kMillisecond);
  }
}

}  // namespace
}  // namespace bulwark

int main(int argc, char** argv) {
  // libgomp reads OMP_NUM_THREADS when it loads, before main; set it for any later readers, and
  // pin the OpenMP pool explicitly.
  setenv("OMP_NUM_THREADS", "1", 1);
  omp_set_num_threads(1);
  benchmark::AddCustomContext("flat_index_kernels", std::string(bulwark::ToString(bulwark::BestSimdLevel())));
  benchmark::AddCustomContext("flat_index_int8_vnni", bulwark::Int8Rows::CpuHasVnni() ? "yes" : "no");
  benchmark::AddCustomContext("omp_max_threads", std::to_string(omp_get_max_threads()));
  benchmark::AddCustomContext("blas", bulwark::BlasDescription());
  benchmark::AddCustomContext("dimension_k", "d=384 k=10, one thread");
  bulwark::RegisterAll();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
