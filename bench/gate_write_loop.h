// The timed loop of the write-gate benchmarks (conflict_bench, judge_bench): one write per
// iteration, cycling through prepared texts and their embeddings, one second apart in namespace
// "ns" by principal "writer"; the fraction the gate flagged is the "flagged" counter.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

#include "detect/write_gate.h"

namespace bulwark {

inline void RunGateWrites(benchmark::State& state, WriteGate& gate, const std::vector<std::string>& texts,
                          const std::vector<std::vector<float>>& embeddings) {
  size_t i = 0;
  int64_t now = 0;
  int flagged = 0;
  for (auto _ : state) {
    const size_t k = i++ % texts.size();
    now += 1'000'000;
    const GateReport r = gate.Evaluate({.name_space = "ns",
                                        .text = texts[k],
                                        .embedding = embeddings[k],
                                        .id = "w",
                                        .principal = "writer",
                                        .written_at_us = now});
    flagged += r.flagged;
    benchmark::DoNotOptimize(r);
  }
  state.counters["flagged"] = benchmark::Counter(flagged, benchmark::Counter::kAvgIterations);
}

}  // namespace bulwark
