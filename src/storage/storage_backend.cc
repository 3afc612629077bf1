// The default implementations of StorageBackend's load helpers (storage_backend.h): in terms of
// the calls every backend has. A backend overrides them with cheaper queries (SQLite does).
#include "storage/storage_backend.h"

#include <absl/container/flat_hash_map.h>

namespace bulwark {

absl::StatusOr<std::vector<std::pair<std::string, int64_t>>> StorageBackend::CountRowsByNamespace() {
  absl::StatusOr<std::vector<StateCount>> counts = CountByState();
  if (!counts.ok()) return counts.status();
  absl::flat_hash_map<std::string, int64_t> rows;
  for (const StateCount& c : *counts) rows[c.name_space] += c.count;
  return std::vector<std::pair<std::string, int64_t>>(rows.begin(), rows.end());
}

absl::Status StorageBackend::ScanRowsToIndex(const std::function<absl::Status(const StoredRow&)>& visit) {
  return ScanEntries("", visit);
}

absl::Status StorageBackend::ScanIndexColumns(std::string_view name_space, const IndexColumns& /*columns*/,
                                              const std::function<absl::Status(const StoredRow&)>& visit) {
  return name_space.empty() ? ScanRowsToIndex(visit) : ScanEntries(name_space, visit);
}

}  // namespace bulwark
