// Cost of the LLM judge detector (issue #14 point 4) per write, against a chat server on loopback
// (testing/chat_server.h) that answers at once: what the judge adds to a write besides the model's
// own inference time (its nearest-memory lookup, prompt, HTTP round trip with a fresh connection
// and watchdog thread, strict parsing). Wall-clock time (the write waits for the answer); the
// loopback server's own work runs on the same host and is included. A real endpoint adds its
// inference time on top (not measured here: a loopback answer is not a model).
//
//   BM_JudgeOnly/N             the judge alone, N stored memories (k = 3 quoted)
//   BM_WholeGate/N             every detector of the conflict bench (memsad m = 1000, memsad_plus,
//                              validation, proactive, conflict, flood), no judge
//   BM_WholeGateWithJudge/N    the same plus the judge
//   BM_NearestMemories/N       MemoryTable::Nearest alone (what the judge quotes)
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "bulwark/embedder.h"
#include "detect/memory_table.h"
#include "detect/write_gate.h"
#include "embed/embedder_factory.h"
#include "gate_write_loop.h"
#include "testing/chat_server.h"

namespace bulwark {
namespace {

std::string Note(std::mt19937& rng) {
  static const char* const kWho[] = {"Dana", "Sam", "Priya", "Tomas", "Alex", "Jordan", "Mei", "Ravi"};
  static const char* const kWhat[] = {
      "budget review",    "dentist",       "flight to Oslo", "invoice", "garden party",
      "quarterly report", "hotel booking", "car service",    "lunch",   "train"};
  static const char* const kMonth[] = {"March", "April", "May", "June", "July", "August"};
  const std::string who = kWho[rng() % 8], what = kWhat[rng() % 10], month = kMonth[rng() % 6];
  return what + " with " + who + " on " + month + " " + std::to_string(1 + rng() % 28) + " at " +
         std::to_string(1 + rng() % 12) + "pm in room " + std::to_string(100 + rng() % 400) + ".";
}

struct Fixture {
  testing::LoopbackChatServer server;
  std::unique_ptr<Embedder> embedder;
  std::unique_ptr<WriteGate> gate;
  std::vector<std::string> texts;
  std::vector<std::vector<float>> embeddings;

  // judge: add the judge; only_judge: nothing else.
  Fixture(size_t memories, bool judge, bool only_judge) {
    server.SetContent([](const nlohmann::json&) {
      return std::string(R"({"injection": false, "contradiction": false, "reason": "a note"})");
    });
    embedder = *CreateEmbedder({{"kind", "lexical"}});
    nlohmann::json config = {
        {"memsad", {{"history_capacity", 1000}}},
        {"conflict", {{"enabled", !only_judge}}},
        {"flood", {{"enabled", !only_judge}}},
        {"llm_judge",
         {{"enabled", judge}, {"chat", {{"url", server.url()}, {"model", "bench"}}}, {"timeout_ms", 2000}}}};
    if (only_judge) {
      for (const char* name : {"memsad", "memsad_plus", "watermark", "validation", "proactive"})
        config[name]["enabled"] = false;
    }
    gate = *WriteGate::Create(*WriteGateConfig::FromJson(config), *embedder, std::vector<uint8_t>(32, 1));
    std::mt19937 rng(7);
    for (size_t i = 0; i < 1000; ++i) gate->RecordQuery("ns", *embedder->Embed("when is the " + Note(rng)));
    for (size_t i = 0; i < memories; ++i) {
      const std::string t = Note(rng);
      const std::vector<float> v = *embedder->Embed(t);
      const std::string id = "m" + std::to_string(i);
      gate->memories().Put("ns", {.id = id, .principal = "owner", .text = t, .embedding = v});
    }
    for (int i = 0; i < 256; ++i) {
      texts.push_back(Note(rng));
      embeddings.push_back(*embedder->Embed(texts.back()));
    }
  }

  void Run(benchmark::State& state) {
    RunGateWrites(state, *gate, texts, embeddings);
    state.counters["requests"] = server.requests();
  }
};

void BM_JudgeOnly(benchmark::State& state) {
  Fixture f(static_cast<size_t>(state.range(0)), true, true);
  f.Run(state);
}
BENCHMARK(BM_JudgeOnly)->Arg(1000)->Arg(10000)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_WholeGate(benchmark::State& state) {
  Fixture f(static_cast<size_t>(state.range(0)), false, false);
  f.Run(state);
}
BENCHMARK(BM_WholeGate)->Arg(10000)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_WholeGateWithJudge(benchmark::State& state) {
  Fixture f(static_cast<size_t>(state.range(0)), true, false);
  f.Run(state);
}
BENCHMARK(BM_WholeGateWithJudge)->Arg(10000)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_NearestMemories(benchmark::State& state) {
  Fixture f(static_cast<size_t>(state.range(0)), false, true);
  size_t i = 0;
  for (auto _ : state) {
    const size_t k = i++ % f.texts.size();
    benchmark::DoNotOptimize(f.gate->memories().Nearest("ns", f.embeddings[k], f.texts[k], 3));
  }
}
BENCHMARK(BM_NearestMemories)->Arg(10000)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace bulwark

BENCHMARK_MAIN();
