// Test fixture of the extraction attacks: a store of the first N memories of
// data/corpora/benign_memories.jsonl (300 by default: the internal-memory scale of the MemPot
// paper, Sec. 5.1) in a temporary directory, with the lexical embedder (no WordNet synonyms, so it
// opens quickly) and the write gate off (every memory is stored active), shared by the tests of a
// suite; and the benign-session corpus of data/corpora.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attack/extraction/benign_session.h"
#include "attack/extraction/extraction_rng.h"
#include "attack/extraction/extraction_target.h"
#include "store/memory_store.h"
#include "testing/temp_dir.h"

namespace bulwark::extraction::testing {

inline constexpr char kNamespace[] = "victim";

inline std::string CorporaDir() { return std::string(BULWARK_SOURCE_DIR) + "/data/corpora"; }

// The texts of the first `n` lines of benign_memories.jsonl.
inline std::vector<std::string> CorpusMemories(size_t n) {
  std::ifstream in(CorporaDir() + "/benign_memories.jsonl");
  std::vector<std::string> texts;
  std::string line;
  while (texts.size() < n && std::getline(in, line)) {
    texts.push_back(nlohmann::json::parse(line)["text"].get<std::string>());
  }
  return texts;
}

class FixtureStore {
 public:
  explicit FixtureStore(size_t memories = 300) {
    StoreOptions options;
    options.embedder_config = {{"kind", "lexical"}, {"synonyms", false}};
    options.write_gate_config = {{"memsad", {{"enabled", false}}},
                                 {"memsad_plus", {{"enabled", false}}},
                                 {"validation", {{"enabled", false}}},
                                 {"proactive", {{"enabled", false}}}};
    // The attacks are defined against embedding retrieval (DGEA and IKEA steer in embedding
    // space), so their own tests pin vector ranking. With hybrid ranking their leakage on this
    // fixture drops (DGEA 35 unique memories in 64 queries instead of about 140; IKEA 52).
    options.retrieval_config = {{"default", "vector"}};
    auto store = MemoryStore::Create(dir_.path() / "store", options);
    EXPECT_TRUE(store.ok()) << store.status();
    if (!store.ok()) return;
    store_ = *std::move(store);
    std::vector<NewEntry> entries;
    for (std::string& text : CorpusMemories(memories)) entries.push_back({.text = std::move(text)});
    auto added = store_->AddBatch(kNamespace, entries, "owner");
    EXPECT_TRUE(added.ok()) << added.status();
    if (added.ok()) size_ = added->size();
  }

  MemoryStore* store() { return store_.get(); }
  std::filesystem::path store_dir() const { return dir_.path() / "store"; }
  size_t size() const { return size_; }
  // A target over the fixture namespace that leaves the query history alone.
  StoreExtractionTarget Target() { return StoreExtractionTarget(store_.get(), kNamespace, false); }

 private:
  bulwark::testing::TempDir dir_;
  std::unique_ptr<MemoryStore> store_;
  size_t size_ = 0;
};

// The benign corpus of data/corpora (benign queries, benign memories).
inline BenignCorpus Corpus() {
  auto corpus =
      LoadBenignCorpus({CorporaDir() + "/benign_queries.jsonl"}, CorporaDir() + "/benign_memories.jsonl");
  EXPECT_TRUE(corpus.ok()) << corpus.status();
  return corpus.ok() ? *std::move(corpus) : BenignCorpus{};
}

// Mean and maximum unique memories returned to `sessions` benign sessions of `queries` turns (seed
// 1), the yardstick an attack of the same length must beat.
struct BenignLeakage {
  double mean = 0;
  size_t max = 0;
};
inline BenignLeakage BenignBaseline(FixtureStore& fixture, int queries, int sessions = 20) {
  auto sim = BenignSessionSimulator::Create(Corpus(), {});
  EXPECT_TRUE(sim.ok()) << sim.status();
  BenignLeakage out;
  if (!sim.ok()) return out;
  StoreExtractionTarget target = fixture.Target();
  for (int i = 0; i < sessions; ++i) {
    SeededCsprng rng = SessionRng(1, "benign", static_cast<uint64_t>(i));
    auto session = (*sim)->Run(target, "benign", {.queries = queries, .k = 4}, rng);
    EXPECT_TRUE(session.ok()) << session.status();
    if (!session.ok()) return out;
    out.mean += static_cast<double>(session->UniqueHits()) / sessions;
    out.max = std::max(out.max, session->UniqueHits());
  }
  return out;
}

}  // namespace bulwark::extraction::testing
