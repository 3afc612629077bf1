// StoreContext: what the write gate may ask of the store it guards (issue #14 point 2). The gate
// keeps its own table of active memories (memory_table.h) for speed; the store is the authority on
// whether a memory is still active, so a detector that is about to report a memory asks here first.
// The write path (write/write_pipeline.h) implements it over the EntryStore.
#pragma once

#include <string_view>

namespace bulwark {

class StoreContext {
 public:
  virtual ~StoreContext() = default;
  // True if (namespace, id) is an active, verified memory of the store. Thread-safe.
  virtual bool IsActive(std::string_view name_space, std::string_view id) const = 0;
};

}  // namespace bulwark
