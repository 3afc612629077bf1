// Test helper: a new store in `dir` with the lexical embedder without WordNet synonyms
// (deterministic and quick to open). Null, with a test failure, if it cannot be created.
#pragma once

#include <filesystem>
#include <memory>

#include <gtest/gtest.h>

#include "bulwark/memory_store.h"

namespace bulwark::testing {

inline std::unique_ptr<MemoryStore> CreateLexicalStore(const std::filesystem::path& dir) {
  StoreOptions options;
  options.embedder_config = {{"kind", "lexical"}, {"synonyms", false}};
  auto store = MemoryStore::Create(dir, options);
  EXPECT_TRUE(store.ok()) << store.status();
  return store.ok() ? *std::move(store) : nullptr;
}

}  // namespace bulwark::testing
