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

bool MatchesMetadata(const nlohmann::json& metadata, const nlohmann::json& filter) {
  for (const auto& [key, value] : filter.items()) {
    auto it = metadata.find(key);
    if (it == metadata.end() || *it != value) return false;
  }
  return true;
}

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

EntryStore::~EntryStore() = default;

absl::Status EntryStore::LoadIndexes() {
  absl::MutexLock lock(&mu_);
  // Each namespace's vector index is sized once, from its row count (every state: an upper bound),
  // so the load never regrows it: a growing array briefly holds two copies of the vectors, and
  // capacity that is never filled is never touched, so it is not resident.
  BULWARK_ASSIGN_OR_RETURN(const auto counts, backend_->CountRowsByNamespace());
  absl::flat_hash_map<std::string, int64_t> expected_rows;
  int64_t total_rows = 0;
  for (const auto& [name_space, rows] : counts) {
    expected_rows[name_space] = rows;
    total_rows += std::max<int64_t>(rows, 0);
  }
  row_versions_.reserve(static_cast<size_t>(total_rows));
  // One pass over the rows without their advisory reports, into the indexes' final arrays.
  BULWARK_RETURN_IF_ERROR(
      backend_->ScanRowsToIndex([&](const StoredRow& row) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        const Entry& e = row.entry;
        NoteVersion(row.row_id, e.updated_at_us);
        if (!Indexable(row)) return absl::OkStatus();
        const auto expected = expected_rows.find(e.name_space);
        NamespaceIndex* index =
            IndexFor(e.name_space, expected == expected_rows.end() ? 0 : expected->second);
        BULWARK_RETURN_IF_ERROR(index->vectors->Add(row.row_id, e.embedding, e.state, e.kind));
        index->metadata.Add(row.row_id, e.metadata);
        if (e.kind == Kind::kHoneypot) index->honeypots.insert(row.row_id);
        SyncSideIndexes(index, row.row_id, e);
        return absl::OkStatus();
      }));
  for (auto& [name_space, index] : indexes_) index->lexical.ShrinkToFit();
  // A row older than its own history was rolled back while no process had the store open: it is
  // withheld from the first read on (CheckRow).
  return backend_->ScanNewestEventTimes([this](int64_t row_id, int64_t at_us) ABSL_EXCLUSIVE_LOCKS_REQUIRED(
                                            mu_) { NoteVersion(row_id, at_us); });
}

EntryStore::NamespaceIndex* EntryStore::IndexFor(const std::string& name_space, int64_t expected_rows) {
  auto& slot = indexes_[name_space];
  if (!slot) {
    slot = std::make_unique<NamespaceIndex>(options_.hybrid.bm25);
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
  const bool wanted = entry.kind == Kind::kMemory && entry.state == State::kActive;
  if (!wanted) {
    index->lexical.Remove(row_id).IgnoreError();
  } else if (!index->lexical.Contains(row_id)) {
    const std::vector<std::string> tokens = terms_.Document(entry.text);
    index->lexical.Add(row_id, tokens).IgnoreError();  // absent, checked above
  }
}

void EntryStore::Sign(std::span<Entry> entries, std::span<HistoryEvent> events) const {
  absl::ReaderMutexLock lock(&mu_);  // the keyring must not rotate while entries are signed
  for (Entry& e : entries) signer_->Sign(&e);
  for (HistoryEvent& e : events) signer_->Sign(&e);
}

absl::StatusOr<std::vector<int64_t>> EntryStore::Commit(std::span<const Entry> entries,
                                                        std::span<const HistoryEvent> events) {
  BULWARK_RETURN_IF_ERROR(WritesAllowed());
  RefreshKeyring();
  absl::MutexLock lock(&mu_);
  BULWARK_ASSIGN_OR_RETURN(std::vector<int64_t> row_ids, backend_->InsertEntries(entries, events));
  NoteOwnEvents();
  for (size_t i = 0; i < entries.size(); ++i) IndexRow(row_ids[i], entries[i]);
  return row_ids;
}

absl::StatusOr<InsertOutcome> EntryStore::CommitOnce(std::span<const Entry> entries,
                                                     std::span<const HistoryEvent> events,
                                                     const InsertClaim& claim) {
  RefreshKeyring();
  absl::MutexLock lock(&mu_);
  BULWARK_ASSIGN_OR_RETURN(InsertOutcome outcome, backend_->InsertEntriesOnce(entries, events, claim));
  NoteOwnEvents();
  for (size_t i = 0; i < outcome.row_ids.size() && i < entries.size(); ++i) {
    IndexRow(outcome.row_ids[i], entries[i]);
  }
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
  absl::MutexLock lock(&mu_);
  BULWARK_RETURN_IF_ERROR(backend_->UpdateEntry(entry, read.entry.updated_at_us, event));
  NoteOwnEvents();
  UnindexRow(entry.name_space, read.row_id);
  IndexRow(read.row_id, entry);
  return absl::OkStatus();
}

absl::Status EntryStore::Transition(std::string_view name_space, std::string_view id, std::string_view actor,
                                    const StateChange& change) {
  BULWARK_RETURN_IF_ERROR(WritesAllowed());
  RefreshKeyring();
  for (int attempt = 1;; ++attempt) {
    BULWARK_ASSIGN_OR_RETURN(RowForUpdate read, ReadForUpdate(name_space, id));
    absl::MutexLock lock(&mu_);
    absl::Status applied = ApplyTransition(read, actor, change);
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
  absl::MutexLock lock(&mu_);  // no write signs while the keyring changes
  return keyring_->Rotate(options_.env);
}

void EntryStore::NoteVersion(int64_t row_id, int64_t updated_at_us) {
  int64_t& known = row_versions_[row_id];
  known = std::max(known, updated_at_us);
}

void EntryStore::IndexRow(int64_t row_id, const Entry& entry) {
  NoteVersion(row_id, entry.updated_at_us);
  NamespaceIndex* index = IndexFor(entry.name_space);
  if (auto s = index->vectors->Add(row_id, entry.embedding, entry.state, entry.kind); !s.ok()) {
    spdlog::error("entry {} is stored but could not be indexed: {}", entry.id, s.ToString());
    return;
  }
  index->metadata.Add(row_id, entry.metadata);
  if (entry.kind == Kind::kHoneypot) index->honeypots.insert(row_id);
  SyncSideIndexes(index, row_id, entry);
}

void EntryStore::NoteOwnEvents() {
  for (int64_t seq : backend_->TakeInsertedEventSeqs()) {
    if (seq > seen_event_seq_) own_event_seqs_.insert(seq);
  }
  // Searches drain the set; a long run of writes without searches drains it here, so it stays small.
  constexpr size_t kMaxOwnEvents = 4096;
  if (own_event_seqs_.size() > kMaxOwnEvents) {
    if (auto s = CatchUpLocked(); !s.ok()) spdlog::warn("catching up with other writers: {}", s.ToString());
  }
}

void EntryStore::RefreshKeyring() {
  if (options_.keyring_path.empty()) return;
  const int64_t now = options_.env->NowMicros();
  int64_t due = next_keyring_check_us_.load(std::memory_order_relaxed);
  if (now < due || !next_keyring_check_us_.compare_exchange_strong(
                       due, now + int64_t{std::max(options_.other_writers_check_ms, 0)} * 1000)) {
    return;
  }
  std::error_code ec;
  const std::filesystem::file_time_type mtime = std::filesystem::last_write_time(options_.keyring_path, ec);
  if (ec) return;
  absl::MutexLock lock(&mu_);  // no write signs while the keyring changes
  if (mtime == keyring_mtime_) return;
  absl::StatusOr<Keyring> loaded = Keyring::Load(options_.keyring_path);
  if (!loaded.ok()) {
    spdlog::warn("the keyring changed but cannot be read again: {}", loaded.status().ToString());
    return;
  }
  keyring_mtime_ = mtime;
  if (loaded->newest_key_id() <= keyring_->newest_key_id()) return;  // nothing new (our own rotation)
  spdlog::info("signing key {} was added by another process; it now signs here too", loaded->newest_key_id());
  *keyring_ = *std::move(loaded);
}

absl::Status EntryStore::CatchUpWithOtherWriters() {
  if (options_.other_writers_check_ms < 0) return absl::OkStatus();
  const int64_t now = options_.env->NowMicros();
  int64_t due = next_catch_up_us_.load(std::memory_order_relaxed);
  if (now < due) return absl::OkStatus();
  // One thread checks; the others search with the index as it is.
  if (!next_catch_up_us_.compare_exchange_strong(due,
                                                 now + int64_t{options_.other_writers_check_ms} * 1000)) {
    return absl::OkStatus();
  }
  auto last = backend_->LastEventSeq();
  if (!last.ok()) return last.status();
  {
    absl::ReaderMutexLock lock(&mu_);
    if (*last <= seen_event_seq_) return absl::OkStatus();
  }
  RefreshKeyring();  // what the other writers signed may name a key they rotated to
  absl::MutexLock lock(&mu_);
  return CatchUpLocked();
}

absl::StatusOr<int64_t> EntryStore::CatchUpNow() {
  BULWARK_ASSIGN_OR_RETURN(const int64_t last, backend_->LastEventSeq());
  {
    absl::ReaderMutexLock lock(&mu_);
    if (last <= seen_event_seq_) return seen_event_seq_;
  }
  RefreshKeyring();
  absl::MutexLock lock(&mu_);
  BULWARK_RETURN_IF_ERROR(CatchUpLocked());
  return seen_event_seq_;
}

absl::Status EntryStore::CatchUpLocked() {
  auto events = backend_->EventsAfter(seen_event_seq_);
  if (!events.ok()) return events.status();
  // Each entry once, however many of its events are new.
  absl::flat_hash_set<std::pair<std::string, std::string>> changed;
  std::vector<const StorageBackend::EventRef*> order;
  int64_t last = seen_event_seq_;
  for (const StorageBackend::EventRef& e : *events) {
    last = std::max(last, e.seq);
    if (own_event_seqs_.contains(e.seq)) continue;  // this process's own write: indexed already
    if (changed.insert({e.name_space, e.entry_id}).second) order.push_back(&e);
  }
  for (const StorageBackend::EventRef* e : order) {
    if (auto s = ReindexEntry(e->name_space, e->entry_id); !s.ok()) return s;  // retried at the next check
  }
  seen_event_seq_ = last;
  absl::erase_if(own_event_seqs_, [last](int64_t seq) { return seq <= last; });
  if (!order.empty()) spdlog::info("caught up with {} entries changed by another process", order.size());
  return absl::OkStatus();
}

absl::Status EntryStore::ReindexEntry(const std::string& name_space, const std::string& id) {
  auto row = backend_->GetEntry(name_space, id);
  if (!row.ok()) return row.status();
  if (!row->has_value()) return absl::OkStatus();
  const StoredRow& r = **row;
  if (RolledBack(r)) {
    // Older than a version seen before: rolled back, not a new write. The index keeps what it had;
    // reads withhold the row (CheckRow).
    ReportBadRow(r.row_id, r.entry.id, r.entry.name_space, "rolled back to an older version");
    return absl::OkStatus();
  }
  UnindexRow(name_space, r.row_id);
  if (Indexable(r)) IndexRow(r.row_id, r.entry);
  return absl::OkStatus();
}

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
  auto it = row_versions_.find(row.row_id);
  return it != row_versions_.end() && row.entry.updated_at_us < it->second;
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
  if (auto s = signer_->Verify(e); !s.ok()) return s;
  if (RolledBack(row)) {
    return absl::DataLossError(absl::StrCat("the row is an older version (updated_at_us ", e.updated_at_us,
                                            ") than this store has seen (", row_versions_.at(row.row_id),
                                            "): rolled back"));
  }
  return absl::OkStatus();
}

absl::StatusOr<SearchResult> EntryStore::Search(std::string_view name_space, const std::vector<float>& query,
                                                const SearchOptions& options) {
  if (query.size() != static_cast<size_t>(options_.dimension)) {
    return absl::InvalidArgumentError("the query embedding does not have the embedder's dimension");
  }
  SearchObservation* const observation = options.observation;
  BULWARK_RETURN_IF_ERROR(CheckObservation(observation));
  BULWARK_RETURN_IF_ERROR(CatchUpWithOtherWriters());

  IndexFilter filter;
  if (options.include_quarantined) filter.states |= StateBit(State::kQuarantined);
  const int64_t now_us = options_.env->NowMicros();  // expired entries are never returned
  SearchResult result;
  absl::ReaderMutexLock lock(&mu_);
  auto it = indexes_.find(ToAbsl(name_space));
  if (it == indexes_.end()) return result;
  const VectorIndex& index = *it->second->vectors;

  // A metadata filter narrows the rows by the in-memory metadata: one that matches no row costs no
  // scan and no read. (nullopt: every row may match.)
  std::optional<std::vector<int64_t>> allowed;
  if (!options.metadata_filter.empty()) allowed = it->second->metadata.Candidates(options.metadata_filter);
  // The observation comes from this search's scan when that is the unfiltered ranking of the active
  // memories; otherwise from one more scan of k_obs memories (no row reads either way).
  const bool own_scan = !allowed && !options.include_quarantined;
  const size_t k_obs = observation ? static_cast<size_t>(observation->k_obs) : 0;
  if (observation != nullptr && !own_scan) {
    BULWARK_ASSIGN_OR_RETURN(observation->rows, ObserveLocked(*it->second, query, nullptr, k_obs));
    observation->observed = true;
  }
  if (allowed && allowed->empty()) return result;
  const size_t searchable = allowed ? allowed->size() : index.size();
  const size_t k = static_cast<size_t>(options.k);

  // Take candidates best first, reading and verifying only as many as are still needed, in one
  // storage read per batch. Over-fetch from the index until k pass or it is exhausted.
  absl::flat_hash_set<int64_t> seen;
  std::vector<IndexHit> batch;
  std::vector<int64_t> batch_ids;
  size_t fetch = std::max(k, k_obs);  // observing: the scan keeps the k_obs best memory scores too
  while (true) {
    auto hits = allowed ? index.SearchRows(query, static_cast<int>(fetch), filter, *allowed)
                        : index.Search(query, static_cast<int>(fetch), filter);
    if (!hits.ok()) return hits.status();
    if (observation != nullptr && own_scan && !observation->observed) {
      const std::span<const IndexHit> best(hits->data(), std::min(hits->size(), k_obs));
      *observation = {observation->k_obs, true, true, ObserveVector(*it->second, query, best, k_obs)};
    }
    size_t next = 0;
    while (result.hits.size() < k) {
      batch.clear();
      batch_ids.clear();
      for (; next < hits->size() && batch.size() < k - result.hits.size(); ++next) {
        const IndexHit& hit = (*hits)[next];
        if (!seen.insert(hit.row_id).second) continue;
        {
          absl::MutexLock bad_lock(&bad_mu_);
          if (bad_rows_.contains(hit.row_id)) continue;
        }
        batch.push_back(hit);
        batch_ids.push_back(hit.row_id);
      }
      if (batch.empty()) break;
      const auto verify_start = std::chrono::steady_clock::now();
      auto rows = backend_->GetRows(batch_ids);
      if (!rows.ok()) return rows.status();
      result.rows_read += static_cast<int64_t>(batch.size());
      for (size_t i = 0; i < batch.size(); ++i) {
        std::optional<StoredRow>& row = (*rows)[i];
        if (!row.has_value()) {
          ReportBadRow(batch[i].row_id, "", name_space, "indexed row is missing from storage");
          ++result.rejected_candidates;
          continue;
        }
        if (auto s = CheckRow(*row, name_space); !s.ok()) {
          ReportBadRow(batch[i].row_id, row->entry.id, name_space, ToStd(s.message()));
          ++result.rejected_candidates;
          continue;
        }
        if (!filter.Accepts(row->entry.state, row->entry.kind)) continue;
        if (!MatchesMetadata(row->entry.metadata, options.metadata_filter)) continue;
        if (IsExpired(row->entry, now_us)) continue;
        result.hits.push_back({std::move(row->entry), batch[i].score});
      }
      result.verify_seconds +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - verify_start).count();
    }
    if (result.hits.size() >= k || hits->size() < fetch || fetch >= searchable) break;
    fetch = std::min(searchable, fetch * 2);
  }
  return result;
}

absl::Status EntryStore::CheckObservation(const SearchObservation* observation) {
  if (observation != nullptr && (observation->k_obs < 1 || observation->k_obs > 64)) {
    return absl::InvalidArgumentError("k_obs must be between 1 and 64");
  }
  return absl::OkStatus();
}

bool EntryStore::HasHoneypots(std::string_view name_space) const {
  absl::ReaderMutexLock lock(&mu_);
  auto it = indexes_.find(ToAbsl(name_space));
  return it != indexes_.end() && !it->second->honeypots.empty();
}

absl::StatusOr<std::vector<EntryStore::ObservedRow>> EntryStore::Observe(std::string_view name_space,
                                                                         const std::vector<float>& query,
                                                                         int k_obs,
                                                                         std::string_view query_text) {
  if (query.size() != static_cast<size_t>(options_.dimension)) {
    return absl::InvalidArgumentError("the query embedding does not have the embedder's dimension");
  }
  if (k_obs < 1 || k_obs > 64) return absl::InvalidArgumentError("k_obs must be between 1 and 64");
  QueryTerms terms;
  if (!query_text.empty()) terms = terms_.Query(query_text);
  absl::ReaderMutexLock lock(&mu_);
  auto it = indexes_.find(ToAbsl(name_space));
  if (it == indexes_.end()) return std::vector<ObservedRow>();
  return ObserveLocked(*it->second, query, query_text.empty() ? nullptr : &terms, static_cast<size_t>(k_obs));
}

std::vector<EntryStore::ObservedRow> EntryStore::ObserveVector(const NamespaceIndex& index,
                                                               const std::vector<float>& query,
                                                               std::span<const IndexHit> memory_hits,
                                                               size_t k_obs) const {
  std::vector<IndexHit> pots;
  if (index.pot_vectors) {
    const IndexFilter pot_filter{StateBit(State::kActive), 1u << static_cast<int>(Kind::kHoneypot)};
    auto found = index.pot_vectors->Search(query, static_cast<int>(k_obs), pot_filter);
    if (found.ok()) pots = *std::move(found);  // the query's dimension was checked by the caller
  }
  // Merge two best-first lists; on equal scores the memory ranks first.
  std::vector<ObservedRow> observed;
  size_t m = 0, p = 0;
  while (observed.size() < k_obs && (m < memory_hits.size() || p < pots.size())) {
    const bool take_pot =
        p < pots.size() && (m == memory_hits.size() || pots[p].score > memory_hits[m].score);
    observed.push_back(take_pot ? ObservedRow{pots[p++].score, true}
                                : ObservedRow{memory_hits[m++].score, false});
  }
  return observed;
}

absl::StatusOr<std::vector<EntryStore::ObservedRow>> EntryStore::ObserveLocked(
    const NamespaceIndex& index, const std::vector<float>& query, const QueryTerms* terms,
    size_t k_obs) const {
  const IndexFilter memories;  // active memories
  const size_t depth = terms ? std::max(k_obs, static_cast<size_t>(options_.hybrid.depth)) : k_obs;
  BULWARK_ASSIGN_OR_RETURN(std::vector<IndexHit> hits,
                           index.vectors->Search(query, static_cast<int>(depth), memories));
  if (terms == nullptr) return ObserveVector(index, query, hits, k_obs);
  const std::vector<Bm25Hit> lexical =
      index.lexical.Search(terms->tokens, static_cast<int>(depth), nullptr, nullptr, terms->weights);
  return ObserveFused(index, query, *terms, hits, lexical, depth, k_obs);
}

absl::StatusOr<StoredRow> EntryStore::LoadVerified(std::string_view name_space, std::string_view id) {
  if (auto s = ValidateNamespace(name_space); !s.ok()) return s;
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
  if (auto s = ValidateNamespace(name_space); !s.ok()) return s;
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
