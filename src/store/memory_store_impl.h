// MemoryStore::Impl: what a store is made of (DESIGN 3). MemoryStore (store/memory_store.h) is
// the facade; its calls go to these parts:
//
//   writes   -> WritePipeline (write/write_pipeline.h): validate -> embed -> WriteDefenses ->
//               sign -> EntryStore (persist + index)
//   searches -> EntryStore::Search (or SearchHybrid, per RetrievalSettings) over the embedded query; the
//   query feeds WriteDefenses (MemSAD's
//               rolling history); the read-time defenses wrap this in DefendedRetriever
//   the rest -> EntryStore (get, history, state changes, export, verify) or WriteDefenses
//               (calibration)
//
// The library's own layers (server, CLI, evaluation) reach the parts through MemoryStore::impl().
#pragma once

#include <memory>

#include "bulwark/embedder.h"
#include "core/ids.h"
#include "detect/write_defenses.h"
#include "storage/store_layout.h"
#include "store/entry_store.h"
#include "store/memory_store.h"
#include "store/retrieval_settings.h"
#include "store/store_options.h"
#include "write/write_pipeline.h"

namespace bulwark {

class MemoryStore::Impl {
 public:
  Impl(const StoreOptions& options, const StoreLayout& layout) : options(options), layout(layout) {}

  StoreOptions options;
  StoreLayout layout;
  Env* env = nullptr;
  std::shared_ptr<const Embedder> embedder;
  std::unique_ptr<IdGenerator> ids;
  // Declared in dependency order: destroyed pipeline first, entries (which own the storage the
  // defenses save their state to) last.
  std::unique_ptr<EntryStore> entries;
  std::unique_ptr<WriteDefenses> defenses;
  std::unique_ptr<WritePipeline> pipeline;
  std::unique_ptr<RetrievalSettings> retrieval;  // vector or hybrid ranking, per namespace
};

}  // namespace bulwark
