// MemoryStore: ties the write path (validate -> embed -> sign -> store + index) and the read
// path (embed -> index top-k -> verify every candidate -> results) together.
#include "bulwark/memory_store.h"

#include <algorithm>
#include <deque>
#include <fstream>
#include <sstream>
#include <mutex>
#include <thread>

#include <absl/strings/str_cat.h>
#include <spdlog/spdlog.h>

#include "core/ids.h"
#include "core/parallel_for.h"
#include "core/strings.h"
#include "core/text_validation.h"
#include "detect/write_gate.h"
#include "index/flat_index.h"
#include "provenance/keyring.h"
#include "provenance/signer.h"
#include "storage/sqlite_backend.h"
#include "store/metadata_index.h"

namespace bulwark {

// The in-memory index of one namespace: vectors with state and kind, and top-level metadata.
// Both hold the same rows.
struct MemoryStore::NamespaceIndex {
  std::unique_ptr<VectorIndex> vectors;
  MetadataIndex metadata;
};

namespace {

constexpr char kDatabaseFile[] = "bulwark.db";
constexpr char kKeyringFile[] = "keyring.json";
constexpr char kGateConfigFile[] = "gate.json";
constexpr char kWriteGateActor[] = "bulwark:write-gate";
constexpr uint64_t kHistorySaveEvery = 64;  // unsaved queries that make a write also save them
constexpr int kMaxK = 1000;
constexpr size_t kMaxPrincipalBytes = 256;

uint32_t StateBit(State s) { return 1u << static_cast<int>(s); }

bool MatchesMetadata(const nlohmann::json& metadata, const nlohmann::json& filter) {
  for (const auto& [key, value] : filter.items()) {
    auto it = metadata.find(key);
    if (it == metadata.end() || *it != value) return false;
  }
  return true;
}

absl::Status ValidatePrincipal(std::string_view principal) {
  if (principal.empty() || principal.size() > kMaxPrincipalBytes || !IsValidUtf8(principal)) {
    return absl::InvalidArgumentError("principal must be 1 to 256 bytes of UTF-8");
  }
  return absl::OkStatus();
}

// Prefixes a status message with "entry N: " so batch errors name the culprit.
absl::Status AtEntry(size_t index, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat("entry ", index, ": ", status.message()));
}

}  // namespace

MemoryStore::MemoryStore() = default;
MemoryStore::~MemoryStore() {
  if (backend_ && gate_) {
    if (auto s = FlushQueryHistory(); !s.ok()) spdlog::warn("saving the query history: {}", s.ToString());
  }
}

namespace {

absl::StatusOr<nlohmann::json> ReadGateConfig(const std::filesystem::path& dir, const nlohmann::json& configured) {
  if (!configured.is_null()) return configured;
  const std::filesystem::path path = dir / kGateConfigFile;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return nlohmann::json();
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  auto json = nlohmann::json::parse(buffer.str(), nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return absl::InvalidArgumentError(absl::StrCat(path.string(), " is not valid JSON"));
  return json;
}

// The watermark key: HMAC(the keyring's first key, domain). Stable across signing-key rotation.
absl::StatusOr<std::string> WatermarkKey(const Keyring& keyring) {
  const auto keys = keyring.List();
  if (keys.empty()) return absl::FailedPreconditionError("the keyring has no key");
  const HmacKey* first = keyring.Find(keys.front().id);
  if (first == nullptr) return absl::FailedPreconditionError("the keyring has no key");
  return HmacSha256(*first, "bulwark.watermark.key.v1");
}

}  // namespace

absl::StatusOr<std::unique_ptr<MemoryStore>> MemoryStore::Create(const std::filesystem::path& dir,
                                                                 const StoreOptions& options) {
  std::unique_ptr<MemoryStore> store(new MemoryStore());
  if (auto s = store->Load(dir, options, /*create=*/true); !s.ok()) return s;
  return store;
}

absl::StatusOr<std::unique_ptr<MemoryStore>> MemoryStore::Open(const std::filesystem::path& dir,
                                                               const StoreOptions& options) {
  std::unique_ptr<MemoryStore> store(new MemoryStore());
  if (auto s = store->Load(dir, options, /*create=*/false); !s.ok()) return s;
  return store;
}

absl::Status MemoryStore::Load(const std::filesystem::path& dir, const StoreOptions& options, bool create) {
  options_ = options;
  env_ = options.env ? options.env : Env::Default();
  if (options_.max_text_bytes == 0 || options_.max_text_bytes > (16u << 20)) {
    return absl::InvalidArgumentError("max_text_bytes must be between 1 and 16 MiB");
  }
  std::error_code ec;
  const std::filesystem::path db_path = dir / kDatabaseFile;
  if (create) {
    if (std::filesystem::exists(db_path, ec)) {
      return absl::AlreadyExistsError(absl::StrCat("a store already exists in ", dir.string()));
    }
    std::filesystem::create_directories(dir, ec);
    if (ec) return absl::UnavailableError(absl::StrCat("cannot create ", dir.string(), ": ", ec.message()));
  } else if (!std::filesystem::exists(db_path, ec)) {
    return absl::NotFoundError(absl::StrCat("no store in ", dir.string(), " (run `bulwark init` first)"));
  }

  // Embedder first: a fingerprint mismatch must fail before anything is written.
  auto stored_fingerprint = std::optional<std::string>();
  auto stored_config = std::optional<std::string>();
  auto backend = SqliteBackend::Open(db_path, create);
  if (!backend.ok()) return backend.status();
  backend_ = *std::move(backend);
  {
    auto f = backend_->GetMeta("embedder_fingerprint");
    if (!f.ok()) return f.status();
    stored_fingerprint = *f;
    auto c = backend_->GetMeta("embedder_config");
    if (!c.ok()) return c.status();
    stored_config = *c;
  }
  if (options.embedder) {
    embedder_ = options.embedder;
  } else {
    nlohmann::json config = options.embedder_config;
    if (config.is_null()) {
      if (stored_config) {
        config = nlohmann::json::parse(*stored_config, nullptr, /*allow_exceptions=*/false);
        if (!config.is_object()) return absl::DataLossError("the store's embedder configuration is corrupt");
      } else {
        config = {{"kind", "lexical"}};
      }
    }
    auto embedder = CreateEmbedder(config);
    if (!embedder.ok()) return embedder.status();
    embedder_ = std::shared_ptr<const Embedder>(std::move(*embedder));
    if (!stored_config) {
      if (auto s = backend_->PutMeta("embedder_config", config.dump()); !s.ok()) return s;
    }
  }
  const std::string fingerprint = embedder_->Fingerprint().ToString();
  if (stored_fingerprint && *stored_fingerprint != fingerprint) {
    return absl::FailedPreconditionError(absl::StrCat(
        "embedder mismatch: the store was created with embedder ", *stored_fingerprint,
        " but this embedder is ", fingerprint,
        "; vectors from different embedders cannot be mixed (open with the original embedder "
        "configuration, or export and re-import into a new store)"));
  }
  if (!stored_fingerprint) {
    if (auto s = backend_->PutMeta("embedder_fingerprint", fingerprint); !s.ok()) return s;
  }

  if (auto probe = FlatIndex::Create(embedder_->dimension()); !probe.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("embedder dimension: ", probe.status().message()));
  }

  const std::filesystem::path keyring_path =
      options.keyring_path.empty() ? dir / kKeyringFile : options.keyring_path;
  absl::StatusOr<Keyring> keyring = (create && !std::filesystem::exists(keyring_path, ec))
                                        ? Keyring::Create(keyring_path, env_)
                                        : Keyring::Load(keyring_path);
  if (!keyring.ok()) return keyring.status();
  keyring_ = std::make_unique<Keyring>(*std::move(keyring));
  signer_ = std::make_unique<Signer>(keyring_.get());
  // A store upgraded from schema version 1 has history events written before events were signed:
  // they are signed once, now (trusted as they are at the upgrade, as the entries were).
  auto signed_events = backend_->SignEventsFromBeforeSigning([this](HistoryEvent* e) { signer_->Sign(e); });
  if (!signed_events.ok()) return signed_events.status();
  if (*signed_events > 0) {
    spdlog::info("signed {} history events written before history events were signed", *signed_events);
  }
  ids_ = std::make_unique<IdGenerator>(env_);
  if (auto s = LoadWriteGate(dir, options); !s.ok()) return s;
  // Read before the entries are: a change committed while they are scanned is caught up with at
  // the first search (re-indexing an entry twice is harmless).
  auto last_seq = backend_->LastEventSeq();
  if (!last_seq.ok()) return last_seq.status();
  seen_event_seq_ = *last_seq;
  return LoadIndexes();
}

absl::Status MemoryStore::LoadWriteGate(const std::filesystem::path& dir, const StoreOptions& options) {
  auto json = ReadGateConfig(dir, options.write_gate_config);
  if (!json.ok()) return json.status();
  auto config = WriteGateConfig::FromJson(*json);
  if (!config.ok()) return config.status();
  auto key = WatermarkKey(*keyring_);
  if (!key.ok()) return key.status();
  auto gate = WriteGate::Create(*config, *embedder_,
                                std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(key->data()), key->size()));
  if (!gate.ok()) return gate.status();
  gate_ = *std::move(gate);
  // Persisted state: query histories (newest `capacity` rows) and calibrations.
  absl::flat_hash_map<std::string, std::vector<std::vector<float>>> rows;
  absl::flat_hash_map<std::string, uint64_t> next;
  const size_t dim = static_cast<size_t>(embedder_->dimension());
  auto scanned = backend_->ScanQueryHistory([&](std::string_view ns, uint64_t seq, std::vector<float> v) {
    if (v.size() != dim) return absl::OkStatus();  // not ours to use; dropped at the next save
    rows[ToAbsl(ns)].push_back(std::move(v));
    next[ToAbsl(ns)] = seq + 1;
    return absl::OkStatus();
  });
  if (!scanned.ok()) return scanned;
  for (auto& [ns, history] : rows) {
    gate_->state().History(ns).Restore(history, next[ns]);
    history_saved_[ns] = next[ns];
  }
  return backend_->ScanCalibrations([&](std::string_view ns, std::string_view text) {
    auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    auto cal = json.is_discarded() ? absl::StatusOr<NamespaceCalibration>(absl::DataLossError("not JSON"))
                                   : NamespaceCalibration::FromJson(json);
    if (!cal.ok()) {
      spdlog::error("namespace '{}': stored calibration unusable ({}); using the pre-calibration defaults", ns,
                    cal.status().ToString());
      return absl::OkStatus();
    }
    gate_->state().SetCalibration(ns, std::make_shared<NamespaceCalibration>(*std::move(cal)));
    return absl::OkStatus();
  });
}

absl::Status MemoryStore::LoadIndexes() {
  std::unique_lock lock(mu_);
  absl::Status scanned = backend_->ScanEntries("", [&](const StoredRow& row) {
    const Entry& e = row.entry;
    NoteVersion(row.row_id, e.updated_at_us);
    if (!Indexable(row)) return absl::OkStatus();
    NamespaceIndex* index = IndexFor(e.name_space);
    if (auto s = index->vectors->Add(row.row_id, e.embedding, e.state, e.kind); !s.ok()) return s;
    index->metadata.Add(row.row_id, e.metadata);
    return absl::OkStatus();
  });
  if (!scanned.ok()) return scanned;
  // A row older than its own history was rolled back while no process had the store open: it is
  // withheld from the first read on (CheckRow).
  return backend_->ScanNewestEventTimes([this](int64_t row_id, int64_t at_us) { NoteVersion(row_id, at_us); });
}

void MemoryStore::NoteVersion(int64_t row_id, int64_t updated_at_us) {
  int64_t& known = row_versions_[row_id];
  known = std::max(known, updated_at_us);
}

MemoryStore::NamespaceIndex* MemoryStore::IndexFor(const std::string& name_space) {
  auto& slot = indexes_[name_space];
  if (!slot) {
    slot = std::make_unique<NamespaceIndex>();
    slot->vectors = *FlatIndex::Create(embedder_->dimension());  // dimension checked in Load
  }
  return slot.get();
}

void MemoryStore::IndexRow(int64_t row_id, const Entry& entry) {
  NoteVersion(row_id, entry.updated_at_us);
  NamespaceIndex* index = IndexFor(entry.name_space);
  if (auto s = index->vectors->Add(row_id, entry.embedding, entry.state, entry.kind); !s.ok()) {
    spdlog::error("entry {} is stored but could not be indexed: {}", entry.id, s.ToString());
    return;
  }
  index->metadata.Add(row_id, entry.metadata);
}

void MemoryStore::NoteOwnEvents() {
  for (int64_t seq : backend_->TakeInsertedEventSeqs()) {
    if (seq > seen_event_seq_) own_event_seqs_.insert(seq);
  }
  // Searches drain the set; a long run of writes without searches drains it here, so it stays small.
  constexpr size_t kMaxOwnEvents = 4096;
  if (own_event_seqs_.size() > kMaxOwnEvents) {
    if (auto s = CatchUpLocked(); !s.ok()) spdlog::warn("catching up with other writers: {}", s.ToString());
  }
}

absl::Status MemoryStore::CatchUpWithOtherWriters() {
  if (options_.other_writers_check_ms < 0) return absl::OkStatus();
  const int64_t now = env_->NowMicros();
  int64_t due = next_catch_up_us_.load(std::memory_order_relaxed);
  if (now < due) return absl::OkStatus();
  // One thread checks; the others search with the index as it is.
  if (!next_catch_up_us_.compare_exchange_strong(due, now + int64_t{options_.other_writers_check_ms} * 1000)) {
    return absl::OkStatus();
  }
  auto last = backend_->LastEventSeq();
  if (!last.ok()) return last.status();
  {
    std::shared_lock lock(mu_);
    if (*last <= seen_event_seq_) return absl::OkStatus();
  }
  std::unique_lock lock(mu_);
  return CatchUpLocked();
}

absl::Status MemoryStore::CatchUpLocked() {
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

absl::Status MemoryStore::ReindexEntry(const std::string& name_space, const std::string& id) {
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
  if (auto it = indexes_.find(name_space); it != indexes_.end()) {
    it->second->vectors->Remove(r.row_id).IgnoreError();  // it may not be indexed
    it->second->metadata.Remove(r.row_id);
  }
  if (Indexable(r)) IndexRow(r.row_id, r.entry);
  return absl::OkStatus();
}

bool MemoryStore::Indexable(const StoredRow& row) {
  const Entry& e = row.entry;
  if (e.state == State::kPurged || e.state == State::kDeleted) return false;
  if (!row.ok() || e.embedding.size() != static_cast<size_t>(embedder_->dimension()) ||
      !ValidateNamespace(e.name_space).ok()) {
    // Not loadable; Verify() reports it. It can never be retrieved because it is not indexed.
    ReportBadRow(row.row_id, e.id, e.name_space, row.ok() ? "bad embedding size or namespace" : row.decode_error);
    return false;
  }
  return true;
}

bool MemoryStore::RolledBack(const StoredRow& row) const {
  auto it = row_versions_.find(row.row_id);
  return it != row_versions_.end() && row.entry.updated_at_us < it->second;
}

void MemoryStore::ReportBadRow(int64_t row_id, std::string_view id, std::string_view name_space,
                               std::string_view reason) {
  {
    std::lock_guard<std::mutex> lock(bad_mu_);
    if (!bad_rows_.insert(row_id).second) return;  // counted and logged once
  }
  signature_failures_.fetch_add(1);
  spdlog::warn("rejected row {} (id '{}', namespace '{}'): {}", row_id, id, name_space, reason);
}

absl::Status MemoryStore::CheckRow(const StoredRow& row, std::string_view name_space) const {
  if (!row.ok()) return absl::DataLossError(absl::StrCat("row does not decode: ", row.decode_error));
  const Entry& e = row.entry;
  if (e.name_space != name_space) return absl::DataLossError("row is not in the requested namespace");
  const bool purged = e.state == State::kPurged;
  if (!purged && e.embedding.size() != static_cast<size_t>(embedder_->dimension())) {
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

absl::Status MemoryStore::ValidateNew(const NewEntry& entry) const {
  if (auto s = ValidateText(entry.text, options_.max_text_bytes); !s.ok()) return s;
  return ValidateMetadata(entry.metadata, options_.max_metadata_bytes);
}

absl::StatusOr<Entry> MemoryStore::Add(std::string_view name_space, const NewEntry& entry,
                                       std::string_view principal) {
  auto added = AddBatch(name_space, std::span<const NewEntry>(&entry, 1), principal);
  if (!added.ok()) {
    // A single add names no index.
    std::string_view message = ToStd(added.status().message());
    if (message.starts_with("entry 0: ")) message.remove_prefix(9);
    return absl::Status(added.status().code(), ToAbsl(message));
  }
  return std::move(added->front());
}

absl::StatusOr<std::vector<Entry>> MemoryStore::AddBatch(std::string_view name_space,
                                                         std::span<const NewEntry> entries,
                                                         std::string_view principal,
                                                         const ProgressFn& progress) {
  if (auto s = ValidateNamespace(name_space); !s.ok()) return s;
  if (auto s = ValidatePrincipal(principal); !s.ok()) return s;
  if (entries.empty()) return absl::InvalidArgumentError("batch is empty");
  if (entries.size() > options_.max_batch_entries) {
    return absl::InvalidArgumentError(absl::StrCat("batch has ", entries.size(), " entries; the limit is ",
                                                   options_.max_batch_entries));
  }
  for (size_t i = 0; i < entries.size(); ++i) {
    if (auto s = ValidateNew(entries[i]); !s.ok()) return AtEntry(i, s);
  }
  // Ids and timestamps in input order; then embedding and signing in parallel slices.
  std::vector<Entry> built(entries.size());
  const int64_t now = env_->NowMicros();
  for (size_t i = 0; i < entries.size(); ++i) {
    Entry& e = built[i];
    e.id = ids_->Next();
    e.name_space = std::string(name_space);
    e.text = entries[i].text;
    e.metadata = entries[i].metadata;
    e.principal = std::string(principal);
    e.source = entries[i].source;
    e.kind = entries[i].kind;
    e.created_at_us = e.updated_at_us = now;
  }
  // Small batches stay on the caller's thread; large imports use every core.
  const size_t threads = entries.size() >= 1024 ? std::max(1u, std::thread::hardware_concurrency()) : 1;
  std::atomic<size_t> embedded{0};
  std::mutex progress_mu;
  {
    std::shared_lock lock(mu_);  // the keyring must not rotate while entries are signed
    absl::Status status = ParallelFor(built.size(), threads, [&](size_t begin, size_t end) -> absl::Status {
      constexpr size_t kChunk = 256;  // progress granularity
      std::vector<std::string> texts;
      for (size_t chunk = begin; chunk < end; chunk += kChunk) {
        const size_t count = std::min(kChunk, end - chunk);
        texts.clear();
        for (size_t i = chunk; i < chunk + count; ++i) texts.push_back(built[i].text);
        auto vectors = embedder_->EmbedBatch(texts);
        if (!vectors.ok()) return vectors.status();
        if (vectors->size() != count) return absl::InternalError("embedder returned the wrong count");
        for (size_t j = 0; j < count; ++j) {
          Entry& e = built[chunk + j];
          if ((*vectors)[j].size() != static_cast<size_t>(embedder_->dimension())) {
            return AtEntry(chunk + j, absl::InternalError("embedder returned a vector of the wrong dimension"));
          }
          e.embedding = std::move((*vectors)[j]);
          GateEntry(&e);  // before signing: the report and the state are signed fields
          signer_->Sign(&e);
        }
        const size_t done = embedded.fetch_add(count) + count;
        if (progress) {
          std::lock_guard<std::mutex> progress_lock(progress_mu);
          progress(done, built.size());
        }
      }
      return absl::OkStatus();
    });
    if (!status.ok()) return status;
  }
  std::vector<HistoryEvent> events;
  events.reserve(built.size());
  for (const Entry& e : built) {
    events.push_back({0, e.id, e.name_space, "add", e.principal, e.created_at_us,
                      {{"text", e.text}, {"metadata", e.metadata}, {"source", ToString(e.source)},
                       {"state", ToString(e.state)}}});
    if (e.state == State::kQuarantined) {  // flagged by the write gate: kept, never retrieved
      events.push_back({0, e.id, e.name_space, "quarantine", kWriteGateActor, e.created_at_us,
                        {{"reasons", e.report["quarantine"]["reasons"]}, {"from_state", "new"}}});
    }
  }
  for (HistoryEvent& ev : events) signer_->Sign(&ev);

  std::unique_lock lock(mu_);
  auto row_ids = backend_->InsertEntries(built, events);
  if (!row_ids.ok()) return row_ids.status();
  NoteOwnEvents();
  const std::string ns(name_space);
  for (size_t i = 0; i < built.size(); ++i) IndexRow((*row_ids)[i], built[i]);
  // After the acknowledgement point: gate bookkeeping failures are logged, never reported as a
  // failed write.
  for (const Entry& e : built) {
    if (e.state != State::kActive) continue;
    if (auto cal = gate_->OnAccepted(ns, e.embedding)) {
      if (auto s = backend_->PutCalibration(ns, cal->ToJson(/*with_data=*/true).dump()); !s.ok()) {
        spdlog::warn("namespace '{}': saving the recalibration: {}", ns, s.ToString());
      }
    }
  }
  if (const QueryHistory* h = gate_->state().FindHistory(ns)) {
    std::lock_guard<std::mutex> save_lock(history_save_mu_);
    if (h->appended() >= history_saved_[ns] + kHistorySaveEvery) {
      if (auto s = SaveHistory(ns, /*replace=*/false); !s.ok()) spdlog::warn("saving the query history: {}", s.ToString());
    }
  }
  return built;
}

absl::Status MemoryStore::SaveHistory(const std::string& name_space, bool replace) {
  const QueryHistory* h = gate_->state().FindHistory(name_space);
  if (h == nullptr) return absl::OkStatus();
  uint64_t& saved = history_saved_[name_space];
  const QueryHistory::Pending pending = h->Since(replace ? 0 : saved);
  if (pending.rows.empty() && !replace) return absl::OkStatus();
  const uint64_t end = pending.first_sequence + pending.rows.size();
  const uint64_t keep_from = end > h->capacity() ? end - h->capacity() : 0;
  if (auto s = backend_->SaveQueryHistory(name_space, pending.first_sequence, pending.rows, keep_from, replace); !s.ok()) {
    return s;
  }
  saved = end;
  return absl::OkStatus();
}

absl::Status MemoryStore::FlushQueryHistory() {
  std::lock_guard<std::mutex> lock(history_save_mu_);
  for (const std::string& ns : gate_->state().HistoryNamespaces()) {
    if (auto s = SaveHistory(ns, /*replace=*/false); !s.ok()) return s;
  }
  return absl::OkStatus();
}

bool MemoryStore::GateEntry(Entry* e) const {
  const GateReport report = gate_->Evaluate({e->name_space, e->text, e->embedding});
  e->report = nlohmann::json::object();
  e->report["gate"] = report.ToJson();
  if (report.flagged && e->state == State::kActive) {
    e->state = State::kQuarantined;
    e->report["quarantine"] = {{"reasons", report.reasons()}, {"by", kWriteGateActor}};
  }
  return report.flagged;
}

absl::StatusOr<SearchResult> MemoryStore::Search(std::string_view name_space, std::string_view query,
                                                 const SearchOptions& options) {
  if (auto s = ValidateNamespace(name_space); !s.ok()) return s;
  if (auto s = ValidateText(query, options_.max_text_bytes); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("query: ", s.message()));
  }
  if (options.k < 1 || options.k > kMaxK) {
    return absl::InvalidArgumentError(absl::StrCat("k must be between 1 and ", kMaxK));
  }
  if (!options.metadata_filter.is_object()) {
    return absl::InvalidArgumentError("metadata filter must be a JSON object");
  }
  auto embedded = options.query_embedding != nullptr
                      ? absl::StatusOr<std::vector<float>>(*options.query_embedding)
                      : embedder_->Embed(query);
  if (!embedded.ok()) return embedded.status();
  if (embedded->size() != static_cast<size_t>(embedder_->dimension())) {
    return absl::InvalidArgumentError("the query embedding does not have the embedder's dimension");
  }
  if (options.record_query) gate_->RecordQuery(name_space, *embedded);  // MemSAD's rolling history H is fed by real searches
  if (auto s = CatchUpWithOtherWriters(); !s.ok()) return s;

  IndexFilter filter;
  if (options.include_quarantined) filter.states |= StateBit(State::kQuarantined);
  SearchResult result;
  std::shared_lock lock(mu_);
  auto it = indexes_.find(ToAbsl(name_space));
  if (it == indexes_.end()) return result;
  const VectorIndex& index = *it->second->vectors;

  // A metadata filter first narrows the rows by the in-memory metadata: a filter that matches no
  // row costs no scan and no read. (nullopt: every row may match.)
  std::optional<std::vector<int64_t>> allowed;
  if (!options.metadata_filter.empty()) {
    allowed = it->second->metadata.Candidates(options.metadata_filter);
    if (allowed && allowed->empty()) return result;
  }
  const size_t searchable = allowed ? allowed->size() : index.size();
  const size_t k = static_cast<size_t>(options.k);

  // Take candidates best first, reading and verifying only as many as are still needed, in one
  // storage read per batch. Over-fetch from the index until k pass or it is exhausted.
  absl::flat_hash_set<int64_t> seen;
  std::vector<IndexHit> batch;
  std::vector<int64_t> batch_ids;
  size_t fetch = k;
  while (true) {
    auto hits = allowed ? index.SearchRows(*embedded, static_cast<int>(fetch), filter, *allowed)
                        : index.Search(*embedded, static_cast<int>(fetch), filter);
    if (!hits.ok()) return hits.status();
    size_t next = 0;
    while (result.hits.size() < k) {
      batch.clear();
      batch_ids.clear();
      for (; next < hits->size() && batch.size() < k - result.hits.size(); ++next) {
        const IndexHit& hit = (*hits)[next];
        if (!seen.insert(hit.row_id).second) continue;
        {
          std::lock_guard<std::mutex> bad_lock(bad_mu_);
          if (bad_rows_.contains(hit.row_id)) continue;
        }
        batch.push_back(hit);
        batch_ids.push_back(hit.row_id);
      }
      if (batch.empty()) break;
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
        result.hits.push_back({std::move(row->entry), batch[i].score});
      }
    }
    if (result.hits.size() >= k || hits->size() < fetch || fetch >= searchable) break;
    fetch = std::min(searchable, fetch * 2);
  }
  return result;
}

absl::StatusOr<StoredRow> MemoryStore::LoadVerified(std::string_view name_space, std::string_view id) {
  if (auto s = ValidateNamespace(name_space); !s.ok()) return s;
  if (!IsValidEntryId(id)) return absl::InvalidArgumentError(absl::StrCat("'", ToAbsl(id), "' is not a valid entry id"));
  auto row = backend_->GetEntry(name_space, id);
  if (!row.ok()) return row.status();
  if (!row->has_value()) return absl::NotFoundError(absl::StrCat("no entry ", ToAbsl(id), " in namespace ", ToAbsl(name_space)));
  if (auto s = CheckRow(**row, name_space); !s.ok()) {
    ReportBadRow((*row)->row_id, id, name_space, ToStd(s.message()));
    return absl::DataLossError(absl::StrCat("entry ", ToAbsl(id), " failed verification: ", s.message()));
  }
  return **std::move(row);
}

absl::StatusOr<Entry> MemoryStore::Get(std::string_view name_space, std::string_view id) {
  std::shared_lock lock(mu_);
  auto row = LoadVerified(name_space, id);
  if (!row.ok()) return row.status();
  return std::move(row->entry);
}

absl::StatusOr<std::vector<HistoryEvent>> MemoryStore::History(std::string_view name_space,
                                                               std::string_view id) {
  std::shared_lock lock(mu_);
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

void MemoryStore::ReportBadEvent(int64_t seq, std::string_view reason) {
  {
    std::lock_guard<std::mutex> lock(bad_mu_);
    if (!bad_events_.insert(seq).second) return;  // counted and logged once
  }
  signature_failures_.fetch_add(1);
  spdlog::warn("rejected history event {}: {}", seq, reason);
}

absl::StatusOr<Entry> MemoryStore::Update(std::string_view name_space, std::string_view id,
                                          const EntryUpdate& update, std::string_view actor) {
  if (auto s = ValidatePrincipal(actor); !s.ok()) return s;
  if (!update.text && !update.metadata) return absl::InvalidArgumentError("update changes nothing");
  if (update.text) {
    if (auto s = ValidateText(*update.text, options_.max_text_bytes); !s.ok()) return s;
  }
  if (update.metadata) {
    if (auto s = ValidateMetadata(*update.metadata, options_.max_metadata_bytes); !s.ok()) return s;
  }
  std::optional<std::vector<float>> embedding;
  if (update.text) {
    auto e = embedder_->Embed(*update.text);
    if (!e.ok()) return e.status();
    embedding = *std::move(e);
  }
  std::unique_lock lock(mu_);
  auto row = LoadVerified(name_space, id);
  if (!row.ok()) return row.status();
  Entry entry = std::move(row->entry);
  if (entry.state != State::kActive && entry.state != State::kQuarantined) {
    return absl::FailedPreconditionError(absl::StrCat("entry ", ToAbsl(id), " is ", ToAbsl(ToString(entry.state))));
  }
  if (update.text) entry.text = *update.text;
  if (update.metadata) entry.metadata = *update.metadata;
  if (embedding) entry.embedding = *std::move(embedding);
  entry.updated_at_us = std::max(env_->NowMicros(), entry.updated_at_us + 1);
  const State before = entry.state;
  if (update.text) {
    // A text update is a write: it passes the gate again. A flagged update of an active entry
    // quarantines it; a quarantined entry stays quarantined until an operator releases it.
    const nlohmann::json quarantine = entry.report.value("quarantine", nlohmann::json());
    GateEntry(&entry);
    if (before == State::kQuarantined && !quarantine.is_null() && !entry.report.contains("quarantine")) {
      entry.report["quarantine"] = quarantine;
    }
  }
  signer_->Sign(&entry);
  HistoryEvent ev{0, entry.id, entry.name_space, "update", std::string(actor), entry.updated_at_us,
                  {{"text", entry.text}, {"metadata", entry.metadata}, {"state", ToString(entry.state)}}};
  if (before != entry.state) ev.detail["quarantined_by"] = {{"actor", kWriteGateActor}, {"reasons", entry.report["quarantine"]["reasons"]}};
  signer_->Sign(&ev);
  if (auto s = backend_->UpdateEntry(entry, ev); !s.ok()) return s;
  NoteOwnEvents();
  NamespaceIndex* index = IndexFor(entry.name_space);
  if (auto s = index->vectors->Remove(row->row_id); !s.ok()) spdlog::warn("reindex {}: {}", entry.id, s.ToString());
  index->metadata.Remove(row->row_id);
  IndexRow(row->row_id, entry);
  return entry;
}

absl::Status MemoryStore::Transition(std::string_view name_space, std::string_view id, std::string_view actor,
                                     const StateChange& change) {
  if (auto s = ValidatePrincipal(actor); !s.ok()) return s;
  std::unique_lock lock(mu_);
  auto row = LoadVerified(name_space, id);
  if (!row.ok()) return row.status();
  Entry entry = std::move(row->entry);
  if (!((change.from_states >> static_cast<int>(entry.state)) & 1u)) {
    return absl::FailedPreconditionError(absl::StrCat("cannot ", change.event, " entry ", ToAbsl(id), ": it is ",
                                                      ToAbsl(ToString(entry.state))));
  }
  entry.updated_at_us = std::max(env_->NowMicros(), entry.updated_at_us + 1);
  nlohmann::json detail = change.detail;
  detail["from_state"] = ToString(entry.state);
  HistoryEvent ev{0, entry.id, entry.name_space, change.event, std::string(actor), entry.updated_at_us, detail};
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
  absl::Status stored;
  if (purge) {
    // Every earlier event loses its detail (the text and metadata it recorded) and is signed anew.
    auto scrubbed = backend_->History(entry.name_space, entry.id);
    if (!scrubbed.ok()) return scrubbed.status();
    for (HistoryEvent& e : *scrubbed) {
      e.detail = {{"purged", true}};
      signer_->Sign(&e);
    }
    stored = backend_->PurgeEntry(entry, *scrubbed, ev);
  } else {
    stored = backend_->UpdateEntry(entry, ev);
  }
  if (!stored.ok()) return stored;
  NoteOwnEvents();
  NoteVersion(row->row_id, entry.updated_at_us);
  NamespaceIndex* index = IndexFor(entry.name_space);
  if (purge || entry.state == State::kDeleted) {
    index->vectors->Remove(row->row_id).IgnoreError();  // may be unindexed
    index->metadata.Remove(row->row_id);
  } else if (!index->vectors->SetState(row->row_id, entry.state).ok()) {
    IndexRow(row->row_id, entry);  // it was not indexed (e.g. it failed to load)
  }
  return absl::OkStatus();
}

absl::Status MemoryStore::Delete(std::string_view name_space, std::string_view id, std::string_view actor) {
  return Transition(name_space, id, actor,
                    {"delete", StateBit(State::kActive) | StateBit(State::kQuarantined), State::kDeleted, {}});
}

absl::Status MemoryStore::Purge(std::string_view name_space, std::string_view id, std::string_view actor) {
  return Transition(name_space, id, actor, {"purge", ~StateBit(State::kPurged), State::kPurged, {}});
}

absl::Status MemoryStore::Quarantine(std::string_view name_space, std::string_view id, std::string_view actor,
                                     const nlohmann::json& reasons) {
  return Transition(name_space, id, actor,
                    {"quarantine", StateBit(State::kActive), State::kQuarantined, {{"reasons", reasons}}});
}

absl::Status MemoryStore::Release(std::string_view name_space, std::string_view id, std::string_view actor) {
  return Transition(name_space, id, actor, {"release", StateBit(State::kQuarantined), State::kActive, {}});
}

absl::Status MemoryStore::Reject(std::string_view name_space, std::string_view id, std::string_view actor) {
  return Transition(name_space, id, actor, {"reject", StateBit(State::kQuarantined), State::kDeleted, {}});
}

absl::StatusOr<std::vector<Entry>> MemoryStore::ListQuarantined(std::string_view name_space, size_t limit) {
  std::vector<Entry> out;
  auto skipped = Export(name_space, StateBit(State::kQuarantined), [&](const Entry& e) {
    if (out.size() < limit) out.push_back(e);
    return absl::OkStatus();
  });
  if (!skipped.ok()) return skipped.status();
  return out;
}

absl::StatusOr<uint32_t> MemoryStore::RotateSigningKey() {
  std::unique_lock lock(mu_);  // no write signs while the keyring changes
  return keyring_->Rotate(env_);
}

absl::StatusOr<int64_t> MemoryStore::Export(std::string_view name_space, uint32_t state_mask,
                                            const std::function<absl::Status(const Entry&)>& visit) {
  if (auto s = ValidateNamespace(name_space); !s.ok()) return s;
  std::shared_lock lock(mu_);
  int64_t skipped = 0;
  absl::Status scanned = backend_->ScanEntries(name_space, [&](const StoredRow& row) {
    if (auto s = CheckRow(row, name_space); !s.ok()) {
      ReportBadRow(row.row_id, row.entry.id, name_space, ToStd(s.message()));
      ++skipped;
      return absl::OkStatus();
    }
    if (row.entry.kind == Kind::kHoneypot || !((state_mask >> static_cast<int>(row.entry.state)) & 1u)) {
      return absl::OkStatus();
    }
    return visit(row.entry);
  });
  if (!scanned.ok()) return scanned;
  return skipped;
}

nlohmann::json ToJson(const VerifyReport& report) {
  nlohmann::json rows = nlohmann::json::array();
  for (const BadRow& b : report.bad_rows) {
    rows.push_back({{"row_id", b.row_id}, {"id", b.id}, {"namespace", b.name_space}, {"reason", b.reason}});
  }
  nlohmann::json events = nlohmann::json::array();
  for (const BadEvent& b : report.bad_events) {
    events.push_back({{"seq", b.seq}, {"entry_id", b.entry_id}, {"namespace", b.name_space}, {"reason", b.reason}});
  }
  return {{"rows_checked", report.rows_checked}, {"bad_rows", std::move(rows)},
          {"events_checked", report.events_checked}, {"bad_events", std::move(events)}, {"ok", report.ok()}};
}

absl::StatusOr<VerifyReport> MemoryStore::Verify() {
  std::shared_lock lock(mu_);
  VerifyReport report;
  absl::Status scanned = backend_->ScanEntries("", [&](const StoredRow& row) {
    ++report.rows_checked;
    absl::Status s = ValidateNamespace(row.entry.name_space);
    if (s.ok()) s = CheckRow(row, row.entry.name_space);
    if (!s.ok()) {
      report.bad_rows.push_back({row.row_id, row.entry.id, row.entry.name_space, std::string(s.message())});
    }
    return absl::OkStatus();
  });
  if (!scanned.ok()) return scanned;
  scanned = backend_->ScanHistory([&](const HistoryEvent& e) {
    ++report.events_checked;
    if (absl::Status s = signer_->Verify(e); !s.ok()) {
      report.bad_events.push_back({e.seq, e.entry_id, e.name_space, std::string(s.message())});
    }
    return absl::OkStatus();
  });
  if (!scanned.ok()) return scanned;
  return report;
}

absl::StatusOr<StoreStats> MemoryStore::Stats() {
  StoreStats stats;
  stats.embedder = embedder_->Fingerprint();
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
      case State::kActive: ns.active += c.count; break;
      case State::kQuarantined: ns.quarantined += c.count; break;
      case State::kDeleted: ns.deleted += c.count; break;
      case State::kPurged: ns.purged += c.count; break;
    }
  }
  return stats;
}

absl::StatusOr<nlohmann::json> MemoryStore::Calibrate(std::string_view name_space, const CalibrationRequest& request) {
  if (auto s = ValidateNamespace(name_space); !s.ok()) return s;
  if (!request.trigger.empty() && request.queries.empty()) {
    return absl::InvalidArgumentError("triggered calibration needs calibration queries to append the trigger to");
  }
  const WriteGateConfig& config = gate_->config();
  CalibrationInput input;
  input.mode = config.memsad.mode;
  input.kappa = request.kappa.value_or(config.memsad.kappa);
  input.delta = config.memsad.delta;
  input.target_fpr = request.target_fpr.value_or(config.target_fpr);
  input.triggered = !request.trigger.empty();
  if (!(input.kappa > 0)) return absl::InvalidArgumentError("kappa must be positive");
  const std::string ns(name_space);
  nlohmann::json provenance = nlohmann::json::object();

  if (!request.queries.empty()) {
    std::vector<std::string> texts;
    for (size_t i = 0; i < request.queries.size(); ++i) {
      std::string q = request.trigger.empty() ? request.queries[i] : request.queries[i] + " " + request.trigger;
      if (auto s = ValidateText(q, options_.max_text_bytes); !s.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("calibration query ", i, ": ", s.message()));
      }
      texts.push_back(std::move(q));
    }
    auto vectors = embedder_->EmbedBatch(texts);
    if (!vectors.ok()) return vectors.status();
    input.history = *std::move(vectors);
    provenance["queries"] = {{"source", "supplied"}, {"count", texts.size()}};
    if (!request.trigger.empty()) provenance["trigger"] = request.trigger;
  } else {
    if (const QueryHistory* h = gate_->state().FindHistory(ns)) input.history = h->Snapshot();
    provenance["queries"] = {{"source", "rolling history of searches"}, {"count", input.history.size()}};
  }

  if (!request.reference.empty()) {
    for (size_t i = 0; i < request.reference.size(); ++i) {
      if (auto s = ValidateText(request.reference[i], options_.max_text_bytes); !s.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("reference entry ", i, ": ", s.message()));
      }
    }
    input.reference_texts = request.reference;
    auto vectors = embedder_->EmbedBatch(input.reference_texts);
    if (!vectors.ok()) return vectors.status();
    input.reference_embeddings = *std::move(vectors);
    provenance["reference"] = {{"source", "supplied"}, {"count", input.reference_texts.size()}};
  } else {
    std::deque<std::pair<std::string, std::vector<float>>> newest;
    auto exported = Export(name_space, StateBit(State::kActive), [&](const Entry& e) {
      newest.emplace_back(e.text, e.embedding);
      if (newest.size() > request.from_store) newest.pop_front();
      return absl::OkStatus();
    });
    if (!exported.ok()) return exported.status();
    for (auto& [text, embedding] : newest) {
      input.reference_texts.push_back(std::move(text));
      input.reference_embeddings.push_back(std::move(embedding));
    }
    provenance["reference"] = {{"source", "store: newest active entries"}, {"count", input.reference_texts.size()}};
  }
  if (config.proactive.enabled) input.probes = gate_->probe_embeddings();

  auto calibration = CalibrateNamespace(input);
  if (!calibration.ok()) return calibration.status();
  calibration->calibrated_at_us = env_->NowMicros();
  for (auto& [key, value] : provenance.items()) calibration->provenance[key] = value;

  std::unique_lock lock(mu_);  // ordered with writes: later writes see the new thresholds
  if (auto s = backend_->PutCalibration(ns, calibration->ToJson(/*with_data=*/true).dump()); !s.ok()) return s;
  if (!request.queries.empty()) {
    gate_->state().History(ns).Replace(input.history);
    std::lock_guard<std::mutex> save_lock(history_save_mu_);
    if (auto s = SaveHistory(ns, /*replace=*/true); !s.ok()) return s;
  }
  auto stored = std::make_shared<const NamespaceCalibration>(*std::move(calibration));
  gate_->state().SetCalibration(ns, stored);
  return stored->ToJson(/*with_data=*/false);
}

std::vector<std::vector<float>> MemoryStore::RecentQueries(std::string_view name_space, size_t limit) const {
  const QueryHistory* history = gate_->state().FindHistory(name_space);
  if (history == nullptr) return {};
  std::vector<std::vector<float>> rows = history->Snapshot();
  if (rows.size() > limit) rows.erase(rows.begin(), rows.end() - static_cast<ptrdiff_t>(limit));
  return rows;
}

nlohmann::json MemoryStore::CalibrationSummary(std::string_view name_space) const {
  auto cal = gate_->state().Calibration(name_space);
  return cal ? cal->ToJson(/*with_data=*/false) : nlohmann::json(nullptr);
}

}  // namespace bulwark
