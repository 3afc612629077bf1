// Write-gate cost per entry, excluding embedding (issue #4 point 5): the full composite
// (memsad with calibration and Lemma 8 certificate, memsad_plus, watermark, validation,
// proactive) for query histories of m = 20, 200 and 1000 at d = 384, plus memsad alone.
// Targets: <= 5 us at m = 20 and <= 20 us at m = 1000.
//
//   BM_CompositeGate      the decision: WriteGate::Evaluate (what every write pays)
//   BM_CompositeReport    the decision plus the JSON report the store records with the entry
//   BM_MemsadOnly         the memsad detector alone (calibrated, certificate included)
//   BM_MaxMeanKernel      the bound: the SIMD kernel's max and mean over the same m x 384
//                         contiguous rows and nothing else
//   BM_CompositeGateLong  the decision on a 390-byte marked paragraph instead of the 91-byte note
//   BM_CompositeWithoutMemsad/0|1  the other four detectors on the note (0) or the paragraph (1)
//   BM_OneDetector/d/0|1  each of those four alone
//   BM_ValidationUnseen   ValidationRules::Match (normaliser included) on text the rules have not
//                         seen: a fresh copy of the compiled-in rules, and each iteration the next
//                         of the distinct `text` values of data/**/*.jsonl (about 15,000, shuffled
//                         once with a fixed seed), every text once: what a write costs a serving
//                         process, whose writes are new text (issue #12 point 10)
//   BM_ValidationSeen     the same texts again after one pass: the cost once the caches are warm
//   BM_SharedDetectorsGate/m, BM_SharedDetectorsGateLong/m, BM_SharedDetectorsReport/m
//                         the composite, its paragraph and its report with only the detectors
//                         7176b99 also has and that are the same there (memsad, memsad_plus,
//                         watermark, proactive; validation and odd_token off): the gate's own
//                         overhead on equal work (issue #12 point 10). A patch adding the same rows
//                         to 7176b99's gate_bench is described in bench/RESULTS.md.
//
// The fixture's namespace is calibrated (50 short synthetic reference entries) and its history
// full. The note is not watermarked, so the watermark flags it; the paragraph is marked. Whether a
// detector flags does not change the decision's cost (reasons are built only for the report).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <string_view>
#include <unordered_set>

#include "bulwark/embedder.h"
#include "detect/validation_rules.h"
#include "detect/watermark_marker.h"
#include "detect/write_gate.h"
#include "embed/embedder_factory.h"
#include "index/inner_product.h"

namespace bulwark {
namespace {

struct Fixture {
  std::unique_ptr<Embedder> embedder;
  std::unique_ptr<WriteGate> gate;
  std::string text =
      "Remind me to send the quarterly budget summary to Dana before the Thursday planning meeting.";
  std::string paragraph =
      "Remember that the quarterly planning meeting moved to Thursday afternoon in the large conference "
      "room. "
      "Bring the printed budget summary, do not forget the updated headcount figures, and let us ask the "
      "finance "
      "team whether the travel allowance for the spring conference is still approved. I am also supposed to "
      "confirm the catering order and the colour of the new team shirts before Friday.";
  std::vector<float> paragraph_embedding;
  std::vector<float> embedding;

  // `only`: run that detector alone (with the same calibrated namespace).
  // `shared`: validation and odd_token off (the detectors 7176b99 shares with this build).
  Fixture(size_t m, bool composite, bool memsad = true, const char* only = nullptr, bool shared = false) {
    embedder = *CreateEmbedder({{"kind", "lexical"}});
    nlohmann::json config = {{"watermark", {{"enabled", composite}}}};
    if (!composite) {
      config["memsad_plus"] = {{"enabled", false}};
      config["validation"] = {{"enabled", false}};
      config["proactive"] = {{"enabled", false}};
    }
    config["memsad"] = {{"history_capacity", m}, {"enabled", memsad}};
    // The conflict and flood detectors (store context, recent writes) are measured by
    // conflict_bench.cc; this benchmark keeps the five text and history detectors.
    config["conflict"] = {{"enabled", false}};
    config["flood"] = {{"enabled", false}};
    if (shared) {
      config["validation"] = {{"enabled", false}};
      config["odd_token"] = {{"enabled", false}};
    }
    if (only != nullptr) {
      for (const char* name : {"memsad", "memsad_plus", "watermark", "validation", "proactive"}) {
        config[name]["enabled"] = std::string_view(name) == only;
      }
    }
    gate = *WriteGate::Create(*WriteGateConfig::FromJson(config), *embedder, std::vector<uint8_t>(32, 1));
    std::mt19937 rng(42);
    const char* words[] = {"budget",  "meeting", "dentist",  "flight", "invoice",  "garden",
                           "report",  "hotel",   "birthday", "laptop", "password", "car",
                           "project", "lunch",   "doctor",   "train"};
    CalibrationInput input;
    for (size_t i = 0; i < m; ++i) {
      std::string q = std::string("what about the ") + words[rng() % 16] + " and the " + words[rng() % 16];
      auto v = *embedder->Embed(q);
      gate->RecordQuery("ns", v);
      input.history.push_back(v);
    }
    for (int i = 0; i < 50; ++i) {
      std::string t = std::string("note about the ") + words[rng() % 16] + " for " + words[rng() % 16];
      input.reference_texts.push_back(t);
      input.reference_embeddings.push_back(*embedder->Embed(t));
    }
    gate->state().SetCalibration(
        "ns", std::make_shared<NamespaceCalibration>(*CalibrateNamespace(input, gate->instances())));
    embedding = *embedder->Embed(text);
    paragraph = MarkText(paragraph, gate->watermark(), 1.5).text;
    paragraph_embedding = *embedder->Embed(paragraph);
  }
};

void BM_CompositeGate(benchmark::State& state) {
  Fixture f(static_cast<size_t>(state.range(0)), /*composite=*/true);
  for (auto _ : state) benchmark::DoNotOptimize(f.gate->Evaluate({"ns", f.text, f.embedding}));
}
BENCHMARK(BM_CompositeGate)->Arg(20)->Arg(200)->Arg(1000)->Unit(benchmark::kMicrosecond);

void BM_CompositeGateLong(benchmark::State& state) {
  Fixture f(static_cast<size_t>(state.range(0)), /*composite=*/true);
  for (auto _ : state) benchmark::DoNotOptimize(f.gate->Evaluate({"ns", f.paragraph, f.paragraph_embedding}));
}
BENCHMARK(BM_CompositeGateLong)->Arg(20)->Arg(1000)->Unit(benchmark::kMicrosecond);

void BM_CompositeReport(benchmark::State& state) {
  Fixture f(static_cast<size_t>(state.range(0)), /*composite=*/true);
  for (auto _ : state) benchmark::DoNotOptimize(f.gate->Evaluate({"ns", f.text, f.embedding}).ToJson());
}
BENCHMARK(BM_CompositeReport)->Arg(20)->Arg(200)->Arg(1000)->Unit(benchmark::kMicrosecond);

// The detectors a fixture's gate runs, as the label of a row (shows the work is equal).
std::string DetectorNames(const Fixture& f) {
  std::string names;
  for (const auto& v : f.gate->Evaluate({"ns", f.text, f.embedding}).verdicts) {
    names += (names.empty() ? "" : ",") + std::string(v.detector());
  }
  return names;
}

// The detectors both 7176b99 and this build have (memsad, memsad_plus, watermark, proactive):
// the gate's own cost (registry, pipeline, verdicts, report) on equal work.
void BM_SharedDetectorsGate(benchmark::State& state) {
  Fixture f(static_cast<size_t>(state.range(0)), /*composite=*/true, /*memsad=*/true, nullptr,
            /*shared=*/true);
  state.SetLabel(DetectorNames(f));
  for (auto _ : state) benchmark::DoNotOptimize(f.gate->Evaluate({"ns", f.text, f.embedding}));
}
BENCHMARK(BM_SharedDetectorsGate)->Arg(20)->Arg(1000)->Unit(benchmark::kMicrosecond);

void BM_SharedDetectorsGateLong(benchmark::State& state) {
  Fixture f(static_cast<size_t>(state.range(0)), /*composite=*/true, /*memsad=*/true, nullptr,
            /*shared=*/true);
  state.SetLabel(DetectorNames(f));
  for (auto _ : state) benchmark::DoNotOptimize(f.gate->Evaluate({"ns", f.paragraph, f.paragraph_embedding}));
}
BENCHMARK(BM_SharedDetectorsGateLong)->Arg(20)->Arg(1000)->Unit(benchmark::kMicrosecond);

void BM_SharedDetectorsReport(benchmark::State& state) {
  Fixture f(static_cast<size_t>(state.range(0)), /*composite=*/true, /*memsad=*/true, nullptr,
            /*shared=*/true);
  state.SetLabel(DetectorNames(f));
  for (auto _ : state) benchmark::DoNotOptimize(f.gate->Evaluate({"ns", f.text, f.embedding}).ToJson());
}
BENCHMARK(BM_SharedDetectorsReport)->Arg(20)->Arg(1000)->Unit(benchmark::kMicrosecond);

void BM_MemsadOnly(benchmark::State& state) {
  Fixture f(static_cast<size_t>(state.range(0)), /*composite=*/false);
  for (auto _ : state) benchmark::DoNotOptimize(f.gate->Evaluate({"ns", f.text, f.embedding}));
}
BENCHMARK(BM_MemsadOnly)->Arg(20)->Arg(200)->Arg(1000)->Unit(benchmark::kMicrosecond);

// Everything but memsad: what the composite adds to the history scan.
void BM_CompositeWithoutMemsad(benchmark::State& state) {
  Fixture f(20, /*composite=*/true, /*memsad=*/false);
  const bool paragraph = state.range(0) != 0;
  const std::string& text = paragraph ? f.paragraph : f.text;
  const std::vector<float>& embedding = paragraph ? f.paragraph_embedding : f.embedding;
  for (auto _ : state) benchmark::DoNotOptimize(f.gate->Evaluate({"ns", text, embedding}));
}
BENCHMARK(BM_CompositeWithoutMemsad)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

// One detector at a time, on the note (0) or the paragraph (1).
void BM_OneDetector(benchmark::State& state) {
  static const char* const kNames[] = {"memsad_plus", "watermark", "validation", "proactive"};
  const char* only = kNames[state.range(0)];
  Fixture f(20, /*composite=*/true, /*memsad=*/false, only);
  const bool paragraph = state.range(1) != 0;
  const std::string& text = paragraph ? f.paragraph : f.text;
  const std::vector<float>& embedding = paragraph ? f.paragraph_embedding : f.embedding;
  for (auto _ : state) benchmark::DoNotOptimize(f.gate->Evaluate({"ns", text, embedding}));
  state.SetLabel(std::string(only) + (paragraph ? ", paragraph" : ", note"));
}
BENCHMARK(BM_OneDetector)->ArgsProduct({{0, 1, 2, 3}, {0, 1}})->Unit(benchmark::kMicrosecond);

// The distinct `text` values of data/**/*.jsonl, shuffled with a fixed seed.
const std::vector<std::string>& DataTexts() {
  static const std::vector<std::string>* texts = [] {
    auto* out = new std::vector<std::string>();
    std::unordered_set<std::string> seen;
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(BULWARK_SOURCE_DIR "/data")) {
      if (entry.path().extension() == ".jsonl") files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
      std::ifstream in(file);
      for (std::string line; std::getline(in, line);) {
        const nlohmann::json row = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
        if (!row.is_object() || !row.contains("text") || !row["text"].is_string()) continue;
        std::string text = row["text"].get<std::string>();
        if (seen.insert(text).second) out->push_back(std::move(text));
      }
    }
    std::shuffle(out->begin(), out->end(), std::mt19937(7));
    return out;
  }();
  return *texts;
}

void BM_ValidationUnseen(benchmark::State& state) {
  const std::vector<std::string>& texts = DataTexts();
  const auto rules = *ValidationRules::Default();  // its own caches: nothing seen yet
  absl::InlinedVector<uint32_t, 4> hits;
  size_t i = 0, matched = 0;
  for (auto _ : state) {
    rules->Match(texts[i++ % texts.size()], &hits);
    matched += hits.size();
  }
  state.counters["texts"] = static_cast<double>(std::min(i, texts.size()));
  state.counters["hits"] = static_cast<double>(matched);
}
BENCHMARK(BM_ValidationUnseen)->Iterations(15000)->Unit(benchmark::kMicrosecond);

void BM_ValidationSeen(benchmark::State& state) {
  const std::vector<std::string>& texts = DataTexts();
  const auto rules = *ValidationRules::Default();
  absl::InlinedVector<uint32_t, 4> hits;
  for (const std::string& text : texts) rules->Match(text, &hits);
  size_t i = 0;
  for (auto _ : state) rules->Match(texts[i++ % texts.size()], &hits);
}
BENCHMARK(BM_ValidationSeen)->Unit(benchmark::kMicrosecond);

void BM_MaxMeanKernel(benchmark::State& state) {
  const size_t m = static_cast<size_t>(state.range(0)), dim = 384;
  std::mt19937 rng(1);
  std::normal_distribution<float> normal;
  std::vector<float> rows(m * dim), query(dim);
  for (float& x : rows) x = normal(rng);
  for (float& x : query) x = normal(rng);
  std::vector<const float*> pointers;
  for (size_t i = 0; i < m; ++i) pointers.push_back(rows.data() + i * dim);
  std::vector<float> dots(m);
  const InnerProductKernels& kernels = KernelsFor(BestSimdLevel());
  for (auto _ : state) {
    kernels.dot_rows(query.data(), pointers.data(), m, dim, dots.data());
    double sum = 0;
    float best = -std::numeric_limits<float>::infinity();
    for (float d : dots) {
      sum += d;
      best = std::max(best, d);
    }
    benchmark::DoNotOptimize(sum);
    benchmark::DoNotOptimize(best);
  }
}
BENCHMARK(BM_MaxMeanKernel)->Arg(20)->Arg(200)->Arg(1000)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace bulwark

BENCHMARK_MAIN();
