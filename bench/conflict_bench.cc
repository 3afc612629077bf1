// Cost of the conflict and flood detectors and of the whole write gate with them (issue #14 points
// 2, 3 and 7), per write, excluding embedding. Targets: conflict <= 40 us per write at 10k stored
// memories; the whole gate (memsad at m = 1000 history, memsad_plus, validation, proactive,
// conflict, flood, odd_token; no watermark) <= 50 us per write at m = 1000 and 10k memories.
//
//   BM_ConflictOnly/N   the conflict detector alone against N stored memories (signature scan,
//                       exact re-rank of 32 candidates, slot extraction and comparison)
//   BM_ConflictUncalibrated/N  the same with the configured thresholds (calibration on these
//                       notes may switch the subject path off: this measures it running)
//   BM_FloodOnly        the flood detector alone (windows of 64 writes per principal, 256 per
//                       namespace, full)
//   BM_OddTokenOnly     the odd_token detector alone
//   BM_WholeGate/N      every default detector plus conflict, flood and odd_token, calibrated
//                       namespace, m = 1000, N memories
//   BM_GateWithoutConflictAndFlood/N  the same gate with conflict, flood and odd_token disabled
//   BM_SlotExtraction   ExtractSlots on the written note alone
//   BM_SubjectTerms     SubjectIndex::TermsOf on the written note alone (once in the conflict
//                       detector, once more when the memory table takes the committed entry)
//
// The stored memories are 10k distinct synthetic notes (names, dates, times, amounts, rooms drawn
// at random); the written notes are 256 others of the same shapes, cycled, so some of them
// contradict a stored memory (as a real update does) and most do not.
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "bulwark/embedder.h"
#include "detect/memory_table.h"
#include "detect/slot_extractor.h"
#include "detect/subject_index.h"
#include "detect/write_gate.h"
#include "embed/embedder_factory.h"
#include "gate_write_loop.h"

namespace bulwark {
namespace {

std::string Note(std::mt19937& rng) {
  static const char* const kWho[] = {"Dana", "Sam", "Priya", "Tomas", "Alex", "Jordan", "Mei", "Ravi"};
  static const char* const kWhat[] = {
      "budget review",    "dentist",       "flight to Oslo", "invoice", "garden party",
      "quarterly report", "hotel booking", "car service",    "lunch",   "train"};
  static const char* const kMonth[] = {"March", "April", "May", "June", "July", "August"};
  const int kind = static_cast<int>(rng() % 3);
  const std::string who = kWho[rng() % 8], what = kWhat[rng() % 10], month = kMonth[rng() % 6];
  const std::string day = std::to_string(1 + rng() % 28), hour = std::to_string(1 + rng() % 12);
  if (kind == 0)
    return what + " with " + who + " on " + month + " " + day + " at " + hour + "pm in room " +
           std::to_string(100 + rng() % 400) + ".";
  if (kind == 1)
    return "The " + what + " costs $" + std::to_string(20 + rng() % 900) + "; pay " + who + " by " + month +
           " " + day + ".";
  return who + " handles the " + what + "; call " + who + " at 555-01" + std::to_string(10 + rng() % 90) +
         " before " + hour + "am.";
}

struct Fixture {
  std::unique_ptr<Embedder> embedder;
  std::unique_ptr<WriteGate> gate;
  std::vector<std::string> texts;
  std::vector<std::vector<float>> embeddings;

  Fixture(size_t memories, size_t m, const char* only, bool without_new = false, bool calibrate = true) {
    embedder = *CreateEmbedder({{"kind", "lexical"}});
    nlohmann::json config = {{"memsad", {{"history_capacity", m}}}};
    // conflict, flood and odd_token are off by default: the whole gate turns them on.
    config["conflict"] = config["flood"] = config["odd_token"] = {{"enabled", !without_new}};
    if (only != nullptr) {
      for (const char* name : {"memsad", "memsad_plus", "watermark", "validation", "proactive", "conflict",
                               "flood", "odd_token"}) {
        config[name]["enabled"] = std::string_view(name) == only;
      }
    }
    gate = *WriteGate::Create(*WriteGateConfig::FromJson(config), *embedder, std::vector<uint8_t>(32, 1));
    std::mt19937 rng(7);
    CalibrationInput input;
    for (size_t i = 0; i < m; ++i) {
      auto v = *embedder->Embed("when is the " + Note(rng));
      gate->RecordQuery("ns", v);
      input.history.push_back(v);
    }
    for (size_t i = 0; i < memories; ++i) {
      const std::string t = Note(rng);
      const std::vector<float> v = *embedder->Embed(t);
      const std::string id = "m" + std::to_string(i);
      gate->memories().Put("ns", {.id = id, .principal = "owner", .text = t, .embedding = v});
    }
    for (int i = 0; i < 200; ++i) {  // the reference set: 200 more notes of the same shapes
      input.reference_texts.push_back(Note(rng));
      input.reference_embeddings.push_back(*embedder->Embed(input.reference_texts.back()));
    }
    if (calibrate) {
      gate->state().SetCalibration(
          "ns", std::make_shared<NamespaceCalibration>(*CalibrateNamespace(input, gate->instances())));
    }
    for (int i = 0; i < 256; ++i) {
      texts.push_back(Note(rng));
      embeddings.push_back(*embedder->Embed(texts.back()));
    }
  }

  void Run(benchmark::State& state) { RunGateWrites(state, *gate, texts, embeddings); }
};

void BM_ConflictOnly(benchmark::State& state) {
  Fixture f(static_cast<size_t>(state.range(0)), 20, "conflict");
  f.Run(state);
}
BENCHMARK(BM_ConflictOnly)->Arg(1000)->Arg(10000)->Unit(benchmark::kMicrosecond);

void BM_ConflictUncalibrated(benchmark::State& state) {
  Fixture f(static_cast<size_t>(state.range(0)), 20, "conflict", false, /*calibrate=*/false);
  f.Run(state);
}
BENCHMARK(BM_ConflictUncalibrated)->Arg(10000)->Unit(benchmark::kMicrosecond);

void BM_FloodOnly(benchmark::State& state) {
  Fixture f(0, 20, "flood");
  f.Run(state);
}
BENCHMARK(BM_FloodOnly)->Unit(benchmark::kMicrosecond);

void BM_OddTokenOnly(benchmark::State& state) {
  Fixture f(0, 20, "odd_token");
  f.Run(state);
}
BENCHMARK(BM_OddTokenOnly)->Unit(benchmark::kMicrosecond);

void BM_WholeGate(benchmark::State& state) {
  Fixture f(static_cast<size_t>(state.range(0)), 1000, nullptr);
  f.Run(state);
}
BENCHMARK(BM_WholeGate)->Arg(1000)->Arg(10000)->Unit(benchmark::kMicrosecond);

// The same gate without conflict and flood: what the two add.
void BM_GateWithoutConflictAndFlood(benchmark::State& state) {
  Fixture f(static_cast<size_t>(state.range(0)), 1000, nullptr, /*without_new=*/true);
  f.Run(state);
}
BENCHMARK(BM_GateWithoutConflictAndFlood)->Arg(10000)->Unit(benchmark::kMicrosecond);

void BM_SlotExtraction(benchmark::State& state) {
  const std::string text =
      "Dentist with Dr Rao on June 14 at 9am, $120 copay; call 555-0142 or rao@clinic.example.";
  for (auto _ : state) benchmark::DoNotOptimize(ExtractSlots(text));
}
BENCHMARK(BM_SlotExtraction)->Unit(benchmark::kMicrosecond);

void BM_SubjectTerms(benchmark::State& state) {
  const std::string text =
      "Dentist with Dr Rao on June 14 at 9am, $120 copay; call 555-0142 or rao@clinic.example.";
  for (auto _ : state) benchmark::DoNotOptimize(SubjectIndex::TermsOf(text));
}
BENCHMARK(BM_SubjectTerms)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace bulwark

BENCHMARK_MAIN();
