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

#include "attack/extraction/extraction_target.h"
#include "bulwark/memory_store.h"
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
  size_t size() const { return size_; }
  // A target over the fixture namespace that leaves the query history alone.
  StoreExtractionTarget Target() { return StoreExtractionTarget(store_.get(), kNamespace, false); }

 private:
  bulwark::testing::TempDir dir_;
  std::unique_ptr<MemoryStore> store_;
  size_t size_ = 0;
};

}  // namespace bulwark::extraction::testing
