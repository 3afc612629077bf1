// Speed of the native bert embedder on a model of all-MiniLM-L6-v2's shape (hidden 384, 6 layers,
// 12 heads, intermediate 1536, vocabulary 30522; random weights, since none can be downloaded:
// the cost does not depend on the values). The model directory is written once to a temporary
// directory and loaded through BertEmbedder::Load, as a user's would be.
//   BM_BertEmbed/tokens:N       one text of exactly N tokens ([CLS] + N-2 words + [SEP]) on one
//                               thread: the latency of Embed(); ms per entry
//   BM_BertEmbedBatch/tokens:N  EmbedBatch of 32 such texts over every hardware thread;
//                               entries_per_s is the throughput
//   BM_BertLoad                 reading, hashing (SHA-256), checking and converting the 91 MB file
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "embed/bert/bert_embedder.h"

namespace bulwark {
namespace {

constexpr int kHidden = 384, kLayers = 6, kHeads = 12, kIntermediate = 1536, kMaxPosition = 512,
              kVocab = 30522;
constexpr int kBatch = 32;

void AddTensor(const std::string& name, std::vector<int64_t> shape, std::mt19937* rng, nlohmann::json* header,
               std::string* data) {
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  std::normal_distribution<float> normal(0.0f, 0.05f);
  std::vector<float> values(count);
  for (float& v : values) v = normal(*rng);
  if (name.find("LayerNorm.weight") != std::string::npos) std::fill(values.begin(), values.end(), 1.0f);
  const int64_t begin = static_cast<int64_t>(data->size());
  data->append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
  (*header)[name] = {
      {"dtype", "F32"}, {"shape", shape}, {"data_offsets", {begin, static_cast<int64_t>(data->size())}}};
}

// Writes a MiniLM-shaped model directory; vocab.txt is [PAD] [UNK] [CLS] [SEP] w4 ... w30521.
std::string WriteModel() {
  char pattern[] = "/tmp/bulwark-bert-bench-XXXXXX";
  const std::string dir = mkdtemp(pattern);
  std::mt19937 rng(42);
  nlohmann::json header = nlohmann::json::object();
  std::string data;
  AddTensor("embeddings.word_embeddings.weight", {kVocab, kHidden}, &rng, &header, &data);
  AddTensor("embeddings.position_embeddings.weight", {kMaxPosition, kHidden}, &rng, &header, &data);
  AddTensor("embeddings.token_type_embeddings.weight", {2, kHidden}, &rng, &header, &data);
  AddTensor("embeddings.LayerNorm.weight", {kHidden}, &rng, &header, &data);
  AddTensor("embeddings.LayerNorm.bias", {kHidden}, &rng, &header, &data);
  for (int i = 0; i < kLayers; ++i) {
    const std::string p = "encoder.layer." + std::to_string(i) + ".";
    for (const char* n :
         {"attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"}) {
      AddTensor(p + n + ".weight", {kHidden, kHidden}, &rng, &header, &data);
      AddTensor(p + n + ".bias", {kHidden}, &rng, &header, &data);
    }
    AddTensor(p + "intermediate.dense.weight", {kIntermediate, kHidden}, &rng, &header, &data);
    AddTensor(p + "intermediate.dense.bias", {kIntermediate}, &rng, &header, &data);
    AddTensor(p + "output.dense.weight", {kHidden, kIntermediate}, &rng, &header, &data);
    AddTensor(p + "output.dense.bias", {kHidden}, &rng, &header, &data);
    for (const char* n : {"attention.output.LayerNorm", "output.LayerNorm"}) {
      AddTensor(p + n + ".weight", {kHidden}, &rng, &header, &data);
      AddTensor(p + n + ".bias", {kHidden}, &rng, &header, &data);
    }
  }
  const std::string text = header.dump();
  const uint64_t length = text.size();
  std::ofstream model(dir + "/model.safetensors", std::ios::binary);
  model.write(reinterpret_cast<const char*>(&length), 8);
  model << text << data;
  std::ofstream(dir + "/config.json") << nlohmann::json{
      {"hidden_size", kHidden},
      {"num_hidden_layers", kLayers},
      {"num_attention_heads", kHeads},
      {"intermediate_size", kIntermediate},
      {"max_position_embeddings", kMaxPosition},
      {"vocab_size", kVocab},
      {"type_vocab_size", 2},
      {"layer_norm_eps", 1e-12},
      {"hidden_act", "gelu"}}.dump();
  std::ofstream(dir + "/sentence_bert_config.json") << R"({"max_seq_length": 256})";
  std::ofstream vocab(dir + "/vocab.txt");
  vocab << "[PAD]\n[UNK]\n[CLS]\n[SEP]\n";
  for (int i = 4; i < kVocab; ++i) vocab << "w" << i << "\n";
  return dir;
}

const std::string& ModelDir() {
  static const std::string* dir = [] {
    auto* d = new std::string(WriteModel());
    std::atexit([] { std::filesystem::remove_all(ModelDir()); });
    return d;
  }();
  return *dir;
}

const BertEmbedder& Embedder() {
  static const BertEmbedder* embedder = [] {
    auto loaded = BertEmbedder::Load({.path = ModelDir()});
    if (!loaded.ok()) {
      std::fprintf(stderr, "bert_bench: %s\n", std::string(loaded.status().message()).c_str());
      std::abort();
    }
    return loaded->release();
  }();
  return *embedder;
}

// A text that tokenizes to exactly `tokens` ids.
std::string TextOf(int tokens, int seed) {
  std::string text;
  for (int i = 0; i < tokens - 2; ++i)
    text += "w" + std::to_string(4 + (seed * 7919 + i * 104729) % (kVocab - 4)) + " ";
  return text;
}

void BM_BertEmbed(benchmark::State& state) {
  const BertEmbedder& embedder = Embedder();
  const std::string text = TextOf(static_cast<int>(state.range(0)), 1);
  if (embedder.TokenIds(text).size() != static_cast<size_t>(state.range(0))) {
    state.SkipWithError("text does not have the intended token count");
    return;
  }
  for (auto _ : state) {
    auto vec = embedder.Embed(text);
    benchmark::DoNotOptimize(vec);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_BertEmbed)->ArgName("tokens")->Arg(16)->Arg(64)->Arg(256)->Unit(benchmark::kMillisecond);

void BM_BertEmbedBatch(benchmark::State& state) {
  const BertEmbedder& embedder = Embedder();
  std::vector<std::string> texts;
  for (int i = 0; i < kBatch; ++i) texts.push_back(TextOf(static_cast<int>(state.range(0)), i));
  for (auto _ : state) {
    auto vecs = embedder.EmbedBatch(texts);
    benchmark::DoNotOptimize(vecs);
  }
  state.counters["entries_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * kBatch, benchmark::Counter::kIsRate);
  state.counters["threads"] = std::thread::hardware_concurrency();
}
BENCHMARK(BM_BertEmbedBatch)
    ->ArgName("tokens")
    ->Arg(16)
    ->Arg(64)
    ->Arg(256)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_BertLoad(benchmark::State& state) {
  const std::string& dir = ModelDir();
  for (auto _ : state) {
    auto loaded = BertEmbedder::Load({.path = dir});
    if (!loaded.ok()) {
      state.SkipWithError("load failed");
      return;
    }
    benchmark::DoNotOptimize(loaded->get());
  }
}
BENCHMARK(BM_BertLoad)->Iterations(3)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace bulwark

BENCHMARK_MAIN();
