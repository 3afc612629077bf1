// Listing and bulk changes over a namespace, as plain C++ functions on a MemoryStore: what
// GET /v1/memories, delete-all and forget (src/server/list_routes.cc) and the MCP tools call
// (issue #15 point 1). The verified listing itself is EntryStore::List (entry_store.h, implemented
// in entry_listing.cc).
#pragma once

#include <absl/status/statusor.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "store/entry_store.h"
#include "store/memory_store.h"

namespace bulwark {

// One page of the namespace's verified, unexpired memories (EntryStore::List's contract).
[[nodiscard]] absl::StatusOr<ListPage> ListEntries(MemoryStore& store, std::string_view name_space,
                                                   const ListRequest& request);

// A change applied to every matching entry of a namespace.
struct BulkChange {
  enum class Kind {
    kDelete,  // soft delete of every active or quarantined entry (delete-all)
    kPurge,   // GDPR erasure of every entry not yet purged ("forget this user")
  };
  Kind kind = Kind::kDelete;
  nlohmann::json filter = nlohmann::json::object();  // only entries whose metadata matches
  int max_entries = 10000;                           // at most this many per call (1..10000)
};
struct BulkChangeResult {
  std::vector<std::string> ids;  // the entries changed, oldest first
  bool more = false;             // true if matching entries may remain (call again)
};
// Applies `change` to the namespace's matching entries, one at a time, each through the store's
// own Delete/Purge (signed, with a history event naming `actor`). An entry changed concurrently
// by another writer is skipped, not failed. InvalidArgument for a bad namespace or max_entries;
// the store's errors stop the run (entries changed before stay changed and are in the error's
// message count).
[[nodiscard]] absl::StatusOr<BulkChangeResult> ApplyToNamespace(MemoryStore& store,
                                                                std::string_view name_space,
                                                                const BulkChange& change,
                                                                std::string_view actor);

}  // namespace bulwark
