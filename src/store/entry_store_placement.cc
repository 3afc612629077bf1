// EntryStore (see entry_store.h): holding only some namespaces' vectors. A replica of a replica
// group (doc/scale-out.md, "Placement") opens the store holding no namespace, loads the namespaces
// rendezvous hashing places on it (HoldNamespace), drops the ones placed elsewhere (DropNamespace),
// and its catch-up skips the events of namespaces it does not hold.
#include <absl/strings/str_cat.h>
#include <absl/synchronization/mutex.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "core/status_macros.h"
#include "core/strings.h"
#include "index/flat_index.h"
#include "store/entry_store.h"
#include "store/namespace_index.h"

namespace bulwark {

bool EntryStore::HoldsLocked(std::string_view name_space) const {
  return options_.hold_all_namespaces || held_.contains(ToAbsl(name_space));
}

bool EntryStore::Holds(std::string_view name_space) const {
  if (options_.hold_all_namespaces) return true;
  absl::ReaderMutexLock lock(&mu_);
  return held_.contains(ToAbsl(name_space));
}

absl::Status EntryStore::NotHeldError(std::string_view name_space) {
  return absl::FailedPreconditionError(
      absl::StrCat("namespace '", ToAbsl(name_space), "' is not held by this replica (not held)"));
}

absl::Status EntryStore::HoldNamespace(std::string_view name_space) {
  if (options_.hold_all_namespaces) return absl::OkStatus();
  absl::MutexLock one_load(&hold_mu_);
  if (Holds(name_space)) return absl::OkStatus();
  const std::string ns(name_space);
  // Every event up to `from_seq` is in the scan's snapshot (seqs are commit-ordered); the ones
  // after it are applied below or by the next catch-up (re-indexing a row is idempotent).
  BULWARK_ASSIGN_OR_RETURN(const int64_t from_seq, backend_->LastEventSeq());
  auto index = std::make_unique<NamespaceIndex>(options_.hybrid.bm25);
  index->lexical_built = index->metadata_built = false;  // built on first use, as after an open
  BULWARK_ASSIGN_OR_RETURN(std::unique_ptr<FlatIndex> vectors, FlatIndex::Create(options_.dimension));
  std::vector<std::pair<int64_t, int64_t>> versions;
  std::vector<int64_t> pot_rows;
  BULWARK_RETURN_IF_ERROR(
      backend_->ScanIndexColumns(ns, {.embedding = true}, [&](const StoredRow& row) -> absl::Status {
        const Entry& e = row.entry;
        versions.emplace_back(row.row_id, e.updated_at_us);
        if (e.name_space != ns || !Indexable(row)) return absl::OkStatus();
        BULWARK_RETURN_IF_ERROR(vectors->Add(row.row_id, e.embedding, e.state, e.kind));
        if (e.kind == Kind::kHoneypot) {
          index->honeypots.insert(row.row_id);
          pot_rows.push_back(row.row_id);
        }
        return absl::OkStatus();
      }));
  index->vectors = std::move(vectors);
  // The start-up load's rollback check (LoadIndexes), for this namespace: a row older than its own
  // history's newest event was rolled back while no process held it, and is withheld (CheckRow).
  BULWARK_RETURN_IF_ERROR(backend_->ScanNewestEventTimes(
      ns, [&versions](int64_t row_id, int64_t at_us) { versions.emplace_back(row_id, at_us); }));
  const size_t rows = index->vectors->size();
  absl::MutexLock lock(&mu_);
  indexes_[ns] = std::move(index);
  held_.insert(ns);
  known_namespaces_.insert(ns);
  for (const auto& [row_id, at_us] : versions) NoteVersion(row_id, at_us);
  BULWARK_RETURN_IF_ERROR(LoadPots(pot_rows));
  // The namespace's events the catch-up skipped while the scan ran.
  BULWARK_ASSIGN_OR_RETURN(std::vector<StorageBackend::EventRef> events,
                           backend_->HeldEventsAfter(from_seq, {ns}));
  for (const StorageBackend::EventRef& e : events) {
    if (e.seq > seen_event_seq_ || e.name_space != ns || e.entry_id.empty()) continue;
    BULWARK_RETURN_IF_ERROR(ReindexEntry(e.name_space, e.entry_id));
  }
  spdlog::info("holding namespace '{}': {} rows indexed", ns, rows);
  return absl::OkStatus();
}

void EntryStore::DropNamespace(std::string_view name_space) {
  if (options_.hold_all_namespaces) return;
  absl::MutexLock lock(&mu_);
  if (held_.erase(ToAbsl(name_space)) == 0) return;
  indexes_.erase(ToAbsl(name_space));
  spdlog::info("no longer holding namespace '{}'", name_space);
}

EntryStore::Holding EntryStore::Held() const {
  Holding holding;
  absl::ReaderMutexLock lock(&mu_);
  for (const auto& [name_space, index] : indexes_) {
    if (!HoldsLocked(name_space)) continue;
    holding.held.push_back(name_space);
    holding.vectors += static_cast<int64_t>(index->vectors->size());
  }
  holding.known.assign(known_namespaces_.begin(), known_namespaces_.end());
  if (options_.hold_all_namespaces) holding.known = holding.held;
  std::sort(holding.held.begin(), holding.held.end());
  std::sort(holding.known.begin(), holding.known.end());
  return holding;
}

}  // namespace bulwark
