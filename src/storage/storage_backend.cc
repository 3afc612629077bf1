// The default implementations of StorageBackend's load helpers (storage_backend.h): in terms of
// the calls every backend has. A backend overrides them with cheaper queries (SQLite does).
#include "storage/storage_backend.h"

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>

#include <algorithm>

namespace bulwark {

absl::StatusOr<std::vector<std::pair<std::string, int64_t>>> StorageBackend::CountRowsByNamespace() {
  absl::StatusOr<std::vector<StateCount>> counts = CountByState();
  if (!counts.ok()) return counts.status();
  absl::flat_hash_map<std::string, int64_t> rows;
  for (const StateCount& c : *counts) rows[c.name_space] += c.count;
  return std::vector<std::pair<std::string, int64_t>>(rows.begin(), rows.end());
}

absl::StatusOr<std::vector<StorageBackend::EventRef>> StorageBackend::HeldEventsAfter(
    int64_t seq, const std::vector<std::string>& held) {
  absl::StatusOr<std::vector<EventRef>> events = EventsAfter(seq);
  if (!events.ok()) return events.status();
  const absl::flat_hash_set<std::string> wanted(held.begin(), held.end());
  absl::flat_hash_map<std::string, size_t> other_at;  // a namespace not held -> its ref in `out`
  std::vector<EventRef> out;
  for (EventRef& e : *events) {
    if (wanted.contains(e.name_space)) {
      out.push_back(std::move(e));
    } else if (auto it = other_at.find(e.name_space); it != other_at.end()) {
      out[it->second].seq = e.seq;  // seq order: the newest so far
    } else {
      other_at[e.name_space] = out.size();
      out.push_back(EventRef{e.seq, std::move(e.name_space), ""});
    }
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const EventRef& a, const EventRef& b) { return a.seq < b.seq; });
  return out;
}

absl::Status StorageBackend::ScanRowsToIndex(const std::function<absl::Status(const StoredRow&)>& visit) {
  return ScanEntries("", visit);
}

absl::Status StorageBackend::ScanIndexColumns(std::string_view name_space, const IndexColumns& /*columns*/,
                                              const std::function<absl::Status(const StoredRow&)>& visit) {
  return name_space.empty() ? ScanRowsToIndex(visit) : ScanEntries(name_space, visit);
}

}  // namespace bulwark
