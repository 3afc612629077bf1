// One read-only table per directory for the life of the process: the WordNet tables
// (WordNetCanonicalizer, WordNetConcepts, WordNetGlosses) are large and never change, so every
// embedder, index and test of a process shares the one loaded from a given directory.
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/functional/function_ref.h>
#include <absl/status/statusor.h>
#include <absl/synchronization/mutex.h>

#include <memory>
#include <string>

namespace bulwark {

// The table of type T loaded from `key`: the first call for a key runs `load(key)` and keeps its
// result; later calls return the same pointer. A failed load is returned and not kept (the next
// call tries again). Thread-safe: one lock per T, held while loading, so a table is loaded once
// (`load` may itself ask for a table of another type).
template <typename T>
[[nodiscard]] absl::StatusOr<std::shared_ptr<const T>> SharedPerDirectory(
    const std::string& key,
    absl::FunctionRef<absl::StatusOr<std::shared_ptr<const T>>(const std::string&)> load) {
  static absl::Mutex mu(absl::kConstInit);
  static auto* cache = new absl::flat_hash_map<std::string, std::shared_ptr<const T>>();
  absl::MutexLock lock(&mu);
  if (auto it = cache->find(key); it != cache->end()) return it->second;
  absl::StatusOr<std::shared_ptr<const T>> loaded = load(key);
  if (loaded.ok()) cache->emplace(key, *loaded);
  return loaded;
}

}  // namespace bulwark
