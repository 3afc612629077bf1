// EntryStore (see entry_store.h): checking rows read back from storage (signature, namespace,
// dimension, rollback, the history chain's fail-closed gate), verified point reads, history,
// exports, Verify and the store's statistics.
#include <absl/strings/str_cat.h>
#include <absl/synchronization/mutex.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "core/ids.h"
#include "core/status_macros.h"
#include "core/strings.h"
#include "core/text_validation.h"
#include "provenance/keyring.h"
#include "provenance/signer.h"
#include "store/entry_keys.h"
#include "store/entry_store.h"
#include "store/namespace_index.h"

namespace bulwark {

bool EntryStore::Indexable(const StoredRow& row) {
  const Entry& e = row.entry;
  if (e.state == State::kPurged || e.state == State::kDeleted) return false;
  if (!row.ok() || e.embedding.size() != static_cast<size_t>(options_.dimension) ||
      !ValidateNamespace(e.name_space).ok()) {
    // Not loadable; Verify() reports it. It can never be retrieved because it is not indexed.
    ReportBadRow(row.row_id, e.id, e.name_space,
                 row.ok() ? "bad embedding size or namespace" : row.decode_error);
    return false;
  }
  return true;
}

bool EntryStore::RolledBack(const StoredRow& row) const {
  const std::optional<int64_t> known = row_versions_.Find(row.row_id);
  return known.has_value() && row.entry.updated_at_us < *known;
}

void EntryStore::ReportBadRow(int64_t row_id, std::string_view id, std::string_view name_space,
                              std::string_view reason) {
  {
    absl::MutexLock lock(&bad_mu_);
    if (!bad_rows_.insert(row_id).second) return;  // counted and logged once
  }
  signature_failures_.fetch_add(1);
  spdlog::warn("rejected row {} (id '{}', namespace '{}'): {}", row_id, id, name_space, reason);
}

absl::Status EntryStore::CheckRow(const StoredRow& row, std::string_view name_space) const {
  if (chain_broken_.load()) {
    absl::MutexLock lock(&freeze_mu_);
    return absl::DataLossError(absl::StrCat("withheld: the store's history chain is broken (", chain_problem_,
                                            "); run `bulwark verify`"));
  }
  return CheckRowItself(row, name_space);
}

absl::Status EntryStore::CheckRowItself(const StoredRow& row, std::string_view name_space) const {
  if (!row.ok()) return absl::DataLossError(absl::StrCat("row does not decode: ", row.decode_error));
  const Entry& e = row.entry;
  if (e.name_space != name_space) return absl::DataLossError("row is not in the requested namespace");
  const bool purged = e.state == State::kPurged;
  if (!purged && e.embedding.size() != static_cast<size_t>(options_.dimension)) {
    return absl::DataLossError("embedding has the wrong dimension");
  }
  BULWARK_RETURN_IF_ERROR(signer_->Verify(e));
  if (RolledBack(row)) {
    return absl::DataLossError(absl::StrCat("the row is an older version (updated_at_us ", e.updated_at_us,
                                            ") than this store has seen (", *row_versions_.Find(row.row_id),
                                            "): rolled back"));
  }
  return absl::OkStatus();
}

absl::StatusOr<StoredRow> EntryStore::LoadVerified(std::string_view name_space, std::string_view id) {
  BULWARK_RETURN_IF_ERROR(ValidateNamespace(name_space));
  if (!IsValidEntryId(id))
    return absl::InvalidArgumentError(absl::StrCat("'", ToAbsl(id), "' is not a valid entry id"));
  auto row = backend_->GetEntry(name_space, id);
  if (!row.ok()) return row.status();
  if (!row->has_value())
    return absl::NotFoundError(absl::StrCat("no entry ", ToAbsl(id), " in namespace ", ToAbsl(name_space)));
  if (auto s = CheckRow(**row, name_space); !s.ok()) {
    ReportBadRow((*row)->row_id, id, name_space, ToStd(s.message()));
    return absl::DataLossError(absl::StrCat("entry ", ToAbsl(id), " failed verification: ", s.message()));
  }
  return **std::move(row);
}

absl::StatusOr<Entry> EntryStore::Get(std::string_view name_space, std::string_view id) {
  absl::ReaderMutexLock lock(&mu_);
  auto row = LoadVerified(name_space, id);
  if (!row.ok()) return row.status();
  return std::move(row->entry);
}

absl::StatusOr<std::vector<HistoryEvent>> EntryStore::History(std::string_view name_space,
                                                              std::string_view id) {
  absl::ReaderMutexLock lock(&mu_);
  auto row = LoadVerified(name_space, id);
  if (!row.ok()) return row.status();
  auto events = backend_->History(name_space, id);
  if (!events.ok()) return events.status();
  for (HistoryEvent& e : *events) {
    const absl::Status checked = signer_->Verify(e);
    if (checked.ok()) continue;
    // Shown, so that an operator sees that something was there, but never its content.
    e.verified = false;
    e.detail = {{"withheld", "the event failed verification"}};
    ReportBadEvent(e.seq, ToStd(checked.message()));
  }
  return events;
}

void EntryStore::ReportBadEvent(int64_t seq, std::string_view reason) {
  {
    absl::MutexLock lock(&bad_mu_);
    if (!bad_events_.insert(seq).second) return;  // counted and logged once
  }
  signature_failures_.fetch_add(1);
  spdlog::warn("rejected history event {}: {}", seq, reason);
}

absl::StatusOr<int64_t> EntryStore::ScanVerified(std::string_view name_space,
                                                 const std::function<bool(const Entry&)>& wanted,
                                                 const std::function<absl::Status(const Entry&)>& visit) {
  BULWARK_RETURN_IF_ERROR(ValidateNamespace(name_space));
  absl::ReaderMutexLock lock(&mu_);
  int64_t skipped = 0;
  absl::Status scanned =
      backend_->ScanEntries(name_space, [&](const StoredRow& row) ABSL_SHARED_LOCKS_REQUIRED(mu_) {
        if (auto s = CheckRow(row, name_space); !s.ok()) {
          ReportBadRow(row.row_id, row.entry.id, name_space, ToStd(s.message()));
          ++skipped;
          return absl::OkStatus();
        }
        return wanted(row.entry) ? visit(row.entry) : absl::OkStatus();
      });
  if (!scanned.ok()) return scanned;
  return skipped;
}

absl::StatusOr<int64_t> EntryStore::Export(std::string_view name_space, uint32_t state_mask,
                                           const std::function<absl::Status(const Entry&)>& visit) {
  return ScanVerified(
      name_space,
      [state_mask](const Entry& e) {
        return e.kind != Kind::kHoneypot && ((state_mask >> static_cast<int>(e.state)) & 1u);
      },
      visit);
}

absl::StatusOr<int64_t> EntryStore::ExportHoneypots(std::string_view name_space,
                                                    const std::function<absl::Status(const Entry&)>& visit) {
  return ScanVerified(
      name_space, [](const Entry& e) { return e.kind == Kind::kHoneypot && e.state == State::kActive; },
      visit);
}

absl::StatusOr<VerifyReport> EntryStore::Verify() {
  absl::ReaderMutexLock lock(&mu_);
  VerifyReport report;
  absl::Status scanned = backend_->ScanEntries("", [&](const StoredRow& row) ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    ++report.rows_checked;
    absl::Status s = ValidateNamespace(row.entry.name_space);
    if (s.ok()) s = CheckRowItself(row, row.entry.name_space);
    if (!s.ok()) {
      report.bad_rows.push_back({row.row_id, row.entry.id, row.entry.name_space, std::string(s.message())});
    }
    return absl::OkStatus();
  });
  if (!scanned.ok()) return scanned;
  BULWARK_RETURN_IF_ERROR(VerifyHistory(&report));
  if (absl::Status integrity = backend_->CheckIntegrity(); !integrity.ok()) {
    if (integrity.code() != absl::StatusCode::kDataLoss) return integrity;
    report.integrity_problem = std::string(integrity.message());
  }
  if (report.ok()) ThawWrites();  // a clean verify lifts a freeze from a failed start-up check
  return report;
}

absl::StatusOr<StoreStats> EntryStore::Stats(const EmbedderFingerprint& embedder) {
  StoreStats stats;
  stats.embedder = embedder;
  absl::ReaderMutexLock lock(&mu_);
  stats.newest_key_id = keyring_->newest_key_id();
  stats.key_count = keyring_->List().size();
  stats.signature_failures = signature_failures_.load();
  auto counts = backend_->CountByState();
  if (!counts.ok()) return counts.status();
  for (const StateCount& c : *counts) {
    if (stats.namespaces.empty() || stats.namespaces.back().name_space != c.name_space) {
      stats.namespaces.push_back({c.name_space});
    }
    NamespaceStats& ns = stats.namespaces.back();
    if (c.kind == Kind::kHoneypot) {
      ns.honeypots += c.count;
      continue;
    }
    switch (c.state) {
      case State::kActive:
        ns.active += c.count;
        break;
      case State::kQuarantined:
        ns.quarantined += c.count;
        break;
      case State::kDeleted:
        ns.deleted += c.count;
        break;
      case State::kPurged:
        ns.purged += c.count;
        break;
    }
  }
  return stats;
}

}  // namespace bulwark
