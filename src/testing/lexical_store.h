// Test helpers: store options for the lexical embedder without WordNet synonyms (deterministic and
// quick to open), and a new store in `dir` with them (null, with a test failure, if it cannot be
// created).
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>

#include "store/memory_store.h"

namespace bulwark::testing {

inline StoreOptions LexicalStoreOptions() {
  StoreOptions options;
  options.embedder_config = {{"kind", "lexical"}, {"synonyms", false}};
  return options;
}

inline std::unique_ptr<MemoryStore> CreateLexicalStore(const std::filesystem::path& dir) {
  auto store = MemoryStore::Create(dir, LexicalStoreOptions());
  EXPECT_TRUE(store.ok()) << store.status();
  return store.ok() ? *std::move(store) : nullptr;
}

}  // namespace bulwark::testing
