// EntryStore (see entry_store.h): opening a store and loading its indexes, keeping the indexes in
// step with this process's writes, and the write stages (sign, commit, update, state changes, the
// write freeze). Searches are in entry_store_search.cc, verified reads, exports and Verify in
// entry_store_reads.cc, catching up with other writers in entry_store_catch_up.cc.
#include "store/entry_store.h"

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
#include "index/flat_index.h"
#include "provenance/keyring.h"
#include "provenance/signer.h"
#include "store/entry_keys.h"
#include "store/history_chain.h"
#include "store/metadata_index.h"
#include "store/namespace_index.h"

namespace bulwark {

namespace {

// How often a change re-reads and retries when another writer changed the row in between.
constexpr int kMaxChangeAttempts = 16;

}  // namespace

absl::StatusOr<std::unique_ptr<EntryStore>> EntryStore::Open(std::unique_ptr<StorageBackend> backend,
                                                             std::unique_ptr<Keyring> keyring,
                                                             const Options& options) {
  if (auto probe = FlatIndex::Create(options.dimension); !probe.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("embedder dimension: ", probe.status().message()));
  }
  std::unique_ptr<EntryStore> store(new EntryStore(std::move(backend), std::move(keyring), options));
  // A store upgraded from schema version 1 has history events written before events were signed:
  // they are signed once, now (trusted as they are at the upgrade, as the entries were).
  BULWARK_ASSIGN_OR_RETURN(
      const int64_t signed_events,
      store->backend_->SignEventsFromBeforeSigning([&](HistoryEvent* e) { store->signer_->Sign(e); }));
  if (signed_events > 0) {
    spdlog::info("signed {} history events written before history events were signed", signed_events);
  }
  // From here on every write links its events into the store-wide chain; a store upgraded from
  // before the chain (schema version < 4) has its earlier events linked once, now.
  store->backend_->SetHistoryChain(store->chain_.get());
  BULWARK_ASSIGN_OR_RETURN(const int64_t linked_events, store->backend_->LinkEventsFromBeforeTheChain());
  if (linked_events > 0)
    spdlog::info("linked {} history events written before the history chain", linked_events);
  BULWARK_RETURN_IF_ERROR(store->CheckChainHead());
  // Read before the entries are: a change committed while they are scanned is caught up with at
  // the first search (re-indexing an entry twice is harmless).
  BULWARK_ASSIGN_OR_RETURN(const int64_t last_event_seq, store->backend_->LastEventSeq());
  {
    absl::MutexLock lock(&store->mu_);  // uncontended: no other thread has the store yet
    store->seen_event_seq_ = last_event_seq;
  }
  BULWARK_RETURN_IF_ERROR(store->LoadIndexes());
  return store;
}

EntryStore::EntryStore(std::unique_ptr<StorageBackend> backend, std::unique_ptr<Keyring> keyring,
                       const Options& options)
    : options_(options),
      backend_(std::move(backend)),
      keyring_(std::move(keyring)),
      signer_(std::make_unique<Signer>(keyring_.get())),
      chain_(std::make_unique<HistoryChain>(signer_.get())),
      terms_(options.hybrid) {}

EntryStore::~EntryStore() { MaybeWriteSnapshot(); }

absl::Status EntryStore::LoadIndexes() {
  absl::MutexLock lock(&mu_);
  // Each namespace's vector index is sized once, from its row count (every state: an upper bound),
  // so the load never regrows it: a growing array briefly holds two copies of the vectors, and
  // capacity that is never filled is never touched, so it is not resident.
  BULWARK_ASSIGN_OR_RETURN(const auto counts, backend_->CountRowsByNamespace());
  absl::flat_hash_map<std::string, int64_t> expected_rows;
  int64_t total_rows = 0;
  if (!options_.hold_all_namespaces) {  // a replica: HoldNamespace loads the namespaces placed here
    for (const auto& [name_space, rows] : counts) known_namespaces_.insert(name_space);
    return absl::OkStatus();
  }
  for (const auto& [name_space, rows] : counts) {
    expected_rows[name_space] = rows;
    total_rows += std::max<int64_t>(rows, 0);
  }
  row_versions_.Reserve(static_cast<size_t>(total_rows) + 1);  // row ids 1 .. total_rows
  std::vector<int64_t> pot_rows;
  const bool from_snapshot = LoadSnapshot(expected_rows, &pot_rows);
  if (!from_snapshot) BULWARK_RETURN_IF_ERROR(ScanIndexes(expected_rows));
  // A row older than its own history was rolled back while no process had the store open: it is
  // withheld from the first read on (CheckRow).
  BULWARK_RETURN_IF_ERROR(backend_->ScanNewestEventTimes(
      "", [this](int64_t row_id, int64_t at_us)
              ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { NoteVersion(row_id, at_us); }));
  if (!from_snapshot) {
    open_report_ = {};
    for (const auto& [name_space, index] : indexes_) {
      changes_since_snapshot_ += static_cast<int64_t>(index->vectors->size());
    }
    return absl::OkStatus();
  }
  BULWARK_RETURN_IF_ERROR(LoadPots(pot_rows));
  // The rows changed after the snapshot's seq, from the history, as another writer's would be.
  const int64_t changes_before = changes_since_snapshot_;
  BULWARK_RETURN_IF_ERROR(CatchUpLocked());
  open_report_.from_snapshot = true;  // LoadSnapshot set lexical_from_snapshot
  open_report_.caught_up_entries = changes_since_snapshot_ - changes_before;
  return absl::OkStatus();
}

absl::Status EntryStore::ScanIndexes(const absl::flat_hash_map<std::string, int64_t>& expected_rows) {
  // One pass over the rows' vectors and states (not their text, metadata or report) into the vector
  // indexes' final arrays. The lexical and metadata indexes are built on first use
  // (EnsureSideIndexes); the honeypots' pot indexes next, from their full rows.
  std::vector<int64_t> pot_rows;
  BULWARK_RETURN_IF_ERROR(backend_->ScanIndexColumns(
      "", {.embedding = true}, [&](const StoredRow& row) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        const Entry& e = row.entry;
        NoteVersion(row.row_id, e.updated_at_us);
        if (!Indexable(row)) return absl::OkStatus();
        const auto expected = expected_rows.find(e.name_space);
        NamespaceIndex* index = IndexFor(e.name_space, expected == expected_rows.end() ? 0 : expected->second,
                                         /*from_open=*/true);
        BULWARK_RETURN_IF_ERROR(index->vectors->Add(row.row_id, e.embedding, e.state, e.kind));
        if (e.kind == Kind::kHoneypot) {
          index->honeypots.insert(row.row_id);
          pot_rows.push_back(row.row_id);
        }
        return absl::OkStatus();
      }));
  return LoadPots(pot_rows);
}

absl::Status EntryStore::LoadPots(std::span<const int64_t> pot_rows) {
  constexpr size_t kBatch = 256;  // rows per storage read
  for (size_t i = 0; i < pot_rows.size(); i += kBatch) {
    BULWARK_ASSIGN_OR_RETURN(std::vector<std::optional<StoredRow>> rows,
                             backend_->GetRows(pot_rows.subspan(i, std::min(kBatch, pot_rows.size() - i))));
    for (const std::optional<StoredRow>& row : rows) {
      if (!row.has_value()) continue;  // gone since the scan: the next catch-up unindexes it
      const auto it = indexes_.find(row->entry.name_space);
      if (it == indexes_.end() || !it->second->honeypots.contains(row->row_id)) continue;
      SyncSideIndexes(it->second.get(), row->row_id, row->entry);
    }
  }
  return absl::OkStatus();
}

EntryStore::NamespaceIndex* EntryStore::IndexFor(const std::string& name_space, int64_t expected_rows,
                                                 bool from_open) {
  auto& slot = indexes_[name_space];
  if (!slot) {
    slot = std::make_unique<NamespaceIndex>(options_.hybrid.bm25);
    slot->lexical_built = slot->metadata_built = !from_open;
    std::unique_ptr<FlatIndex> vectors = *FlatIndex::Create(options_.dimension);  // dimension checked in Open
    // Out of memory here is not an error yet: the index then grows as rows arrive.
    if (expected_rows > 0) vectors->Reserve(static_cast<size_t>(expected_rows)).IgnoreError();
    slot->vectors = std::move(vectors);
  }
  return slot.get();
}

void EntryStore::UnindexRow(const std::string& name_space, int64_t row_id) {
  if (auto it = indexes_.find(name_space); it != indexes_.end()) {
    it->second->vectors->Remove(row_id).IgnoreError();  // it may not be indexed
    it->second->metadata.Remove(row_id);
    it->second->honeypots.erase(row_id);
    it->second->lexical.Remove(row_id).IgnoreError();  // only active memories are there
    it->second->NoteLexicalChange(row_id);
    it->second->SetPotTokens(row_id, {});
    if (it->second->pot_vectors) it->second->pot_vectors->Remove(row_id).IgnoreError();
  }
}

void EntryStore::SyncSideIndexes(NamespaceIndex* index, int64_t row_id, const Entry& entry) {
  if (entry.kind == Kind::kHoneypot) {
    if (index->pot_vectors) index->pot_vectors->Remove(row_id).IgnoreError();  // it may be absent
    // The observation reads no rows, so a pot is verified here, when it is indexed (pots are
    // 2-4 % of a namespace): a row forged in storage never counts as a pot.
    const absl::Status verified = signer_->Verify(entry);
    if (!verified.ok()) {
      ReportBadRow(row_id, entry.id, entry.name_space, ToStd(verified.message()));
      index->SetPotTokens(row_id, {});
    } else if (entry.state == State::kActive) {
      index->SetPotTokens(row_id, terms_.Document(entry.text));
      if (!index->pot_vectors) index->pot_vectors = *FlatIndex::Create(options_.dimension);
      if (auto s = index->pot_vectors->Add(row_id, entry.embedding, State::kActive, Kind::kHoneypot);
          !s.ok()) {
        spdlog::error("honeypot {} could not be indexed for the observation: {}", entry.id, s.ToString());
      }
    } else {
      index->SetPotTokens(row_id, {});
    }
    return;
  }
  if (!index->lexical_built) {  // built from storage or the snapshot on first use
    index->NoteLexicalChange(row_id);
    return;
  }
  const bool wanted = entry.kind == Kind::kMemory && entry.state == State::kActive;
  if (!wanted) {
    index->lexical.Remove(row_id).IgnoreError();
  } else if (!index->lexical.Contains(row_id)) {
    const std::vector<std::string> tokens = terms_.Document(entry.text);
    index->lexical.Add(row_id, tokens).IgnoreError();  // absent, checked above
  }
}

void EntryStore::Sign(std::span<Entry> entries, std::span<HistoryEvent> events) {
  RefreshKeyring();
  absl::ReaderMutexLock lock(&keyring_mu_);  // the keyring must not rotate while entries are signed
  for (Entry& e : entries) signer_->Sign(&e);
  for (HistoryEvent& e : events) signer_->Sign(&e);
}

absl::StatusOr<std::vector<int64_t>> EntryStore::Commit(std::span<const Entry> entries,
                                                        std::span<const HistoryEvent> events) {
  BULWARK_RETURN_IF_ERROR(WritesAllowed());
  RefreshKeyring();
  std::vector<int64_t> row_ids;
  BULWARK_RETURN_IF_ERROR(WriteWithFreshKeyring([&] {
    absl::MutexLock lock(&mu_);
    BULWARK_ASSIGN_OR_RETURN(row_ids, backend_->InsertEntries(entries, events));
    NoteOwnEvents();
    for (size_t i = 0; i < entries.size(); ++i) IndexRow(row_ids[i], entries[i]);
    return absl::OkStatus();
  }));
  return row_ids;
}

absl::StatusOr<InsertOutcome> EntryStore::CommitOnce(std::span<const Entry> entries,
                                                     std::span<const HistoryEvent> events,
                                                     const InsertClaim& claim) {
  RefreshKeyring();
  InsertOutcome outcome;
  BULWARK_RETURN_IF_ERROR(WriteWithFreshKeyring([&] {
    absl::MutexLock lock(&mu_);
    BULWARK_ASSIGN_OR_RETURN(outcome, backend_->InsertEntriesOnce(entries, events, claim));
    NoteOwnEvents();
    for (size_t i = 0; i < outcome.row_ids.size() && i < entries.size(); ++i) {
      IndexRow(outcome.row_ids[i], entries[i]);
    }
    return absl::OkStatus();
  }));
  return outcome;
}

absl::StatusOr<RowForUpdate> EntryStore::ReadForUpdate(std::string_view name_space, std::string_view id) {
  absl::ReaderMutexLock lock(&mu_);
  BULWARK_ASSIGN_OR_RETURN(StoredRow row, LoadVerified(name_space, id));
  return RowForUpdate{row.row_id, std::move(row.entry)};
}

absl::Status EntryStore::CommitUpdate(const RowForUpdate& read, const Entry& entry,
                                      const HistoryEvent& event) {
  BULWARK_RETURN_IF_ERROR(WritesAllowed());
  RefreshKeyring();
  return WriteWithFreshKeyring([&] {
    absl::MutexLock lock(&mu_);
    BULWARK_RETURN_IF_ERROR(backend_->UpdateEntry(entry, read.entry.updated_at_us, event));
    NoteOwnEvents();
    UnindexRow(entry.name_space, read.row_id);
    IndexRow(read.row_id, entry);
    return absl::OkStatus();
  });
}

absl::Status EntryStore::Transition(std::string_view name_space, std::string_view id, std::string_view actor,
                                    const StateChange& change) {
  BULWARK_RETURN_IF_ERROR(WritesAllowed());
  RefreshKeyring();
  for (int attempt = 1;; ++attempt) {
    BULWARK_ASSIGN_OR_RETURN(RowForUpdate read, ReadForUpdate(name_space, id));
    absl::Status applied = WriteWithFreshKeyring([&] {
      absl::MutexLock lock(&mu_);
      return ApplyTransition(read, actor, change);
    });
    if (!absl::IsAborted(applied) || attempt == kMaxChangeAttempts) return applied;
  }
}

absl::Status EntryStore::ApplyTransition(const RowForUpdate& read, std::string_view actor,
                                         const StateChange& change) {
  Entry entry = read.entry;
  if (!((change.from_states >> static_cast<int>(entry.state)) & 1u)) {
    return absl::FailedPreconditionError(absl::StrCat("cannot ", change.event, " entry ", entry.id,
                                                      ": it is ", ToAbsl(ToString(entry.state))));
  }
  entry.updated_at_us = std::max(options_.env->NowMicros(), entry.updated_at_us + 1);
  nlohmann::json detail = change.detail;
  detail["from_state"] = ToString(entry.state);
  HistoryEvent ev{0,     entry.id, entry.name_space, change.event, std::string(actor), entry.updated_at_us,
                  detail};
  const bool purge = change.to_state == State::kPurged;
  entry.state = change.to_state;
  if (purge) {
    entry.text.clear();
    entry.metadata = nlohmann::json::object();
    entry.embedding.clear();
    entry.report = nlohmann::json::object();
  } else if (change.to_state == State::kQuarantined) {
    entry.report["quarantine"] = change.detail;
  }
  signer_->Sign(&entry);
  signer_->Sign(&ev);
  if (purge) {
    // Every earlier event loses its detail (the text and metadata it recorded) and is signed anew.
    BULWARK_ASSIGN_OR_RETURN(std::vector<HistoryEvent> scrubbed,
                             backend_->History(entry.name_space, entry.id));
    for (HistoryEvent& e : scrubbed) {
      e.detail = {{"purged", true}};
      signer_->Sign(&e);
    }
    BULWARK_RETURN_IF_ERROR(backend_->PurgeEntry(entry, read.entry.updated_at_us, scrubbed, ev));
  } else {
    BULWARK_RETURN_IF_ERROR(backend_->UpdateEntry(entry, read.entry.updated_at_us, ev));
  }
  NoteOwnEvents();
  NoteVersion(read.row_id, entry.updated_at_us);
  ++changes_since_snapshot_;
  NamespaceIndex* index = IndexFor(entry.name_space);
  if (purge || entry.state == State::kDeleted) {
    UnindexRow(entry.name_space, read.row_id);
  } else if (!index->vectors->SetState(read.row_id, entry.state).ok()) {
    IndexRow(read.row_id, entry);  // it was not indexed (e.g. it failed to load)
  } else {
    SyncSideIndexes(index, read.row_id, entry);  // quarantine drops it, release restores it
  }
  return absl::OkStatus();
}

absl::Status EntryStore::CheckIntegrityOrFreeze() {
  absl::Status integrity = backend_->CheckIntegrity();
  if (integrity.code() == absl::StatusCode::kDataLoss) {
    absl::MutexLock lock(&freeze_mu_);
    freeze_reason_ = std::string(integrity.message());
    writes_frozen_.store(true);
  }
  return integrity;
}

void EntryStore::ThawWrites() {
  if (!writes_frozen_.load()) return;
  absl::MutexLock lock(&freeze_mu_);
  freeze_reason_.clear();
  writes_frozen_.store(false);
}

absl::Status EntryStore::WritesAllowed() const {
  if (!writes_frozen_.load()) return absl::OkStatus();
  absl::MutexLock lock(&freeze_mu_);
  return absl::UnavailableError(
      absl::StrCat("writes are refused until an admin runs verify and it passes: ", freeze_reason_));
}

absl::StatusOr<uint32_t> EntryStore::RotateSigningKey() {
  absl::MutexLock keyring_lock(&keyring_mu_);  // no write signs while the keyring changes
  absl::MutexLock lock(&mu_);                  // nor verifies a row
  return keyring_->Rotate(options_.env);
}

void EntryStore::NoteVersion(int64_t row_id, int64_t updated_at_us) {
  row_versions_.Note(row_id, updated_at_us);
}

void EntryStore::IndexRow(int64_t row_id, const Entry& entry) {
  NoteVersion(row_id, entry.updated_at_us);
  if (!HoldsLocked(entry.name_space)) {  // placed on other replicas (a write forwarded here)
    known_namespaces_.insert(entry.name_space);
    return;
  }
  ++changes_since_snapshot_;
  NamespaceIndex* index = IndexFor(entry.name_space);
  if (auto s = index->vectors->Add(row_id, entry.embedding, entry.state, entry.kind); !s.ok()) {
    spdlog::error("entry {} is stored but could not be indexed: {}", entry.id, s.ToString());
    return;
  }
  if (index->metadata_built) index->metadata.Add(row_id, entry.metadata);
  if (entry.kind == Kind::kHoneypot) index->honeypots.insert(row_id);
  SyncSideIndexes(index, row_id, entry);
}

absl::Status EntryStore::EnsureSideIndexes(std::string_view name_space, bool lexical, bool metadata) {
  const auto wanted = [&](const NamespaceIndex& index) {
    return std::pair{lexical && !index.lexical_built, metadata && !index.metadata_built};
  };
  {
    absl::ReaderMutexLock lock(&mu_);
    const auto it = indexes_.find(ToAbsl(name_space));
    if (it == indexes_.end() || wanted(*it->second) == std::pair{false, false}) return absl::OkStatus();
  }
  absl::MutexLock lock(&mu_);
  const auto it = indexes_.find(ToAbsl(name_space));
  if (it == indexes_.end()) return absl::OkStatus();
  NamespaceIndex& index = *it->second;
  const std::pair<bool, bool> needed = wanted(index);  // another search may have built them meanwhile
  // From the snapshot if it has it (a failure there falls back to the rows).
  const bool text = needed.first && !(index.lexical_in_snapshot.has_value() && RestoreLexicalLocked(index));
  const bool fields = needed.second;
  if (!text && !fields) return absl::OkStatus();
  const absl::Status scanned = backend_->ScanIndexColumns(
      name_space, {.text = text, .metadata = fields},
      [&](const StoredRow& row) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        const std::optional<std::pair<State, Kind>> indexed = index.vectors->StateOf(row.row_id);
        if (!indexed.has_value()) return absl::OkStatus();
        if (fields) index.metadata.Add(row.row_id, row.entry.metadata);
        if (text && *indexed == std::pair{State::kActive, Kind::kMemory}) {
          index.lexical.Add(row.row_id, terms_.Document(row.entry.text)).IgnoreError();  // ids are unique
        }
        return absl::OkStatus();
      });
  if (!scanned.ok()) {  // a partial index is dropped: the next use starts over
    if (text) index.lexical = Bm25Index(options_.hybrid.bm25);
    if (fields) index.metadata = MetadataIndex();
    return scanned;
  }
  if (text) {
    index.lexical.ShrinkToFit();
    index.lexical_built = true;
    lexical_built_since_snapshot_ = true;
  }
  if (fields) index.metadata_built = true;
  return absl::OkStatus();
}

EntryStore::SideIndexState EntryStore::SideIndexes(std::string_view name_space) const {
  absl::ReaderMutexLock lock(&mu_);
  const auto it = indexes_.find(ToAbsl(name_space));
  if (it == indexes_.end()) return {};
  return {it->second->lexical_built, it->second->metadata_built};
}

}  // namespace bulwark
