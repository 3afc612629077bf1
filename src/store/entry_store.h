// EntryStore: the entries of a store, their signed append-only history, and the in-memory vector
// and metadata indexes over them. It is the persist and index stages of the write path
// (write/write_pipeline.h) and the verified-search stage of the read path; it knows nothing of the
// write-time or read-time defenses that sit above it.
//
// Guarantees (the store's, DESIGN 4.1-4.2):
//   * Commit and every state change are durable when they return OK (the backend's transaction);
//     a batch commits all-or-nothing.
//   * Every row it returns has passed its HMAC check, decodes, belongs to the namespace asked for
//     and is not older than a version of itself this process has seen (rollback detection). Rows
//     that fail are never returned; they are counted, logged and listed by Verify.
//   * A change of one entry (update, delete, purge, quarantine, release, reject) reads the row and
//     writes it back only if nobody changed it in between, in this process or another
//     (compare-and-set on updated_at_us): a purged or deleted entry never comes back.
// Thread-safe: searches run in parallel; changes are serialized with each other.
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>
#include <absl/functional/function_ref.h>
#include <absl/status/status.h>
#include <absl/status/statusor.h>
#include <absl/synchronization/mutex.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bulwark/entry.h"
#include "bulwark/env.h"
#include "index/bm25_index.h"
#include "index/lexical_tokenizer.h"
#include "index/vector_index.h"
#include "storage/storage_backend.h"
#include "store/hybrid_ranking.h"
#include "store/index_snapshot_row_versions.h"
#include "store/lexical_terms.h"
#include "store/memory_store.h"
#include "store/store_options.h"

namespace bulwark {

class HistoryChain;
class Keyring;
class Signer;
class MetadataIndex;
struct SearchObservation;

// The bit of `state` in a state mask (Export, StateChange::from_states).
constexpr uint32_t StateBit(State s) { return 1u << static_cast<int>(s); }

// A page of entries for EntryStore::List (GET /v1/memories, issue #15 point 1).
struct ListRequest {
  std::vector<State> states = {State::kActive};      // not empty
  nlohmann::json filter = nlohmann::json::object();  // flat equality on top-level metadata
  std::optional<std::string> key;                    // only the entry with this client key
  std::string cursor;                                // an entry id: list ids after it; empty: from the start
  int limit = 100;                                   // entries returned, 1..1000
  bool include_expired = false;                      // bulk purges reach expired entries too
};
struct ListPage {
  std::vector<Entry> entries;  // oldest first (ids are time-ordered)
  std::string next_cursor;     // empty: the namespace has no more rows after this page
  int64_t withheld = 0;        // rows that failed verification and were skipped
};

// A verified row read for a change: the entry and the version (updated_at_us) it was read at.
struct RowForUpdate {
  int64_t row_id = 0;
  Entry entry;
};

class EntryStore {
 public:
  struct Options {
    int dimension = 0;                 // the embedder's; every stored vector has it
    int other_writers_check_ms = 100;  // StoreOptions::other_writers_check_ms
    Env* env = nullptr;                // not null
    HybridOptions hybrid;              // the lexical index's tokenizer and BM25 options; fusion
    // The keyring's file: re-read when another process rotated it (RefreshKeyring). Empty: never.
    std::filesystem::path keyring_path;
    // False (a replica of a replica group, doc/scale-out.md "Placement"): the open loads no
    // namespace; HoldNamespace loads the ones placed here, and catching up skips the others.
    bool hold_all_namespaces = true;
    // The index snapshot (store/index_snapshot.h; StoreLayout::index_snapshot()). Empty: none is
    // read or written. When set, the open starts from it if it checks (else scans the rows, with
    // a warning), and the destructor writes a new one when the index holds at least
    // `snapshot_min_rows` rows and the open had none usable, or at least a tenth of the rows
    // changed since the one it read (WriteSnapshot).
    std::filesystem::path snapshot_path;
    int64_t snapshot_min_rows = 10'000;
  };
  // Takes the backend and the keyring; loads every indexable row into the in-memory vector index
  // (reading its vector and state, not its text or metadata; or, from a snapshot that checks, the
  // vector indexes as of its seq, then the rows changed after it) and every honeypot into the pot
  // indexes. A namespace's lexical and metadata indexes are built when a search first needs them.
  // InvalidArgument for a dimension the index cannot hold; the backend's error otherwise.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<EntryStore>> Open(
      std::unique_ptr<StorageBackend> backend, std::unique_ptr<Keyring> keyring, const Options& options);
  ~EntryStore();

  // Sign stage: sets key_id and tag of entries and events with the newest key (RefreshKeyring
  // first). Holds keyring_mu_, not mu_: waits for key rotations, never for another write's commit.
  void Sign(std::span<Entry> entries, std::span<HistoryEvent> events) ABSL_LOCKS_EXCLUDED(keyring_mu_);

  // Persist + index stages of an add: inserts signed entries and their events in one transaction,
  // then indexes the entries. Returns their row ids. AlreadyExists if an id is taken.
  [[nodiscard]] absl::StatusOr<std::vector<int64_t>> Commit(std::span<const Entry> entries,
                                                            std::span<const HistoryEvent> events);

  // Commit with a claim (StorageBackend::InsertEntriesOnce) checked in the same transaction: an
  // idempotency record or a client key. Indexes the entries only if they were inserted.
  [[nodiscard]] absl::StatusOr<InsertOutcome> CommitOnce(std::span<const Entry> entries,
                                                         std::span<const HistoryEvent> events,
                                                         const InsertClaim& claim);

  // --- Listing (entry_listing.cc) ---
  // One page of the namespace's verified memories (never honeypots) in the request's states that
  // match its filter and key and have not expired (now: the store's clock), in id order after the
  // cursor. Reads at most 10,000 rows per call: a page may then be short (even empty) with a
  // next_cursor to continue from. InvalidArgument for a malformed namespace, cursor, key or a limit
  // outside 1..1000; the backend's errors.
  [[nodiscard]] absl::StatusOr<ListPage> List(std::string_view name_space, const ListRequest& request);
  // The live (active or quarantined), unexpired, verified entry of the namespace holding `key`, or
  // nullopt. InvalidArgument for a malformed namespace or key.
  [[nodiscard]] absl::StatusOr<std::optional<Entry>> FindByKey(std::string_view name_space,
                                                               std::string_view key);
  Env* env() const { return options_.env; }

  // The verified row of (namespace, id), for a change. NotFound if absent; DataLoss if it fails
  // verification; InvalidArgument for a malformed namespace or id.
  [[nodiscard]] absl::StatusOr<RowForUpdate> ReadForUpdate(std::string_view name_space, std::string_view id);
  // Persist + index stages of an update: writes the signed `entry` and `event` if the row still has
  // the version `read` was read at, then re-indexes it. Aborted if another writer changed the row
  // since (read it again and retry); NotFound if it is gone.
  [[nodiscard]] absl::Status CommitUpdate(const RowForUpdate& read, const Entry& entry,
                                          const HistoryEvent& event);

  // A state change: applies to entries whose state is in `from_states`, sets `to_state`, and
  // records `event` in the history with `detail` plus {"from_state"}. Purge also erases text,
  // metadata, embedding and report from the entry and the detail of every earlier event.
  struct StateChange {
    std::string event;     // history event name
    uint32_t from_states;  // bit set of states the change applies to
    State to_state;
    nlohmann::json detail;
  };
  // FailedPrecondition if the entry is in another state; NotFound/DataLoss as ReadForUpdate.
  [[nodiscard]] absl::Status Transition(std::string_view name_space, std::string_view id,
                                        std::string_view actor, const StateChange& change);

  // Verified search over a namespace with an embedded query (MemoryStore::Search's contract).
  [[nodiscard]] absl::StatusOr<SearchResult> Search(std::string_view name_space,
                                                    const std::vector<float>& query,
                                                    const SearchOptions& options);
  // Search with hybrid ranking (store/hybrid_ranking.h): the vector ranking and the BM25 ranking of
  // `query_text` over the namespace's active memories, fused by Eq. 1 of hybrid_ranking.h, then
  // read and verified best first exactly as Search does (same guarantees: only verified rows of
  // the namespace in the requested states that match the metadata filter; never a honeypot).
  // Quarantined entries (include_quarantined) are ranked by the vector side only. Hit scores are
  // the cosine with the query (the order is the fused one). Errors as Search.
  [[nodiscard]] absl::StatusOr<SearchResult> SearchHybrid(std::string_view name_space,
                                                          const std::vector<float>& query,
                                                          std::string_view query_text,
                                                          const SearchOptions& options);
  // Documents and distinct terms in the namespace's lexical index (tests, stats); builds it if it
  // is not built yet (zeros, logged, if that fails).
  struct LexicalStats {
    size_t documents = 0;
    size_t terms = 0;
  };
  LexicalStats Lexical(std::string_view name_space);
  // Whether the namespace's lexical and metadata indexes are built yet (tests).
  struct SideIndexState {
    bool lexical = false;
    bool metadata = false;
  };
  SideIndexState SideIndexes(std::string_view name_space) const;
  struct ObservedRow {  // one observation row: cosine to the query, honeypot or not, row id
    float score = 0;
    bool is_pot = false;
    int64_t row_id = -1;
  };
  // The MemPot observation of one query (DESIGN 3; doc/honeypots.md, "The observation"): the first
  // `k_obs` rows, best first, of the unfiltered ranking over the namespace's active memories and
  // active honeypots, independent of a request's k and filter. Computed from the in-memory indexes
  // only: the k_obs best memory scores of the vector index and the namespace's small pot index
  // (2-4 % of its rows); no row is read back. Every indexed vector came from a row that passed
  // verification when it was indexed (load, commit, other writers' catch-up), so a row forged in
  // storage afterwards is never indexed as a pot; a memory row damaged after indexing still counts
  // with its indexed score (it can only raise the threshold a pot must beat, see doc/honeypots.md).
  // Only the session monitor sees it; nothing of it reaches a caller. InvalidArgument for a query
  // of the wrong dimension or k_obs outside [1, 64].
  // True if the namespace has indexed honeypots (any state); searches of a namespace without pots
  // need no observation.
  bool HasHoneypots(std::string_view name_space) const;
  // `query_text` non-empty: the observation is over the hybrid (fused) ranking of the same rows
  // (SearchHybrid's; honeypots take part in the lexical side through Bm25Index::ScoreDocument, so
  // they never change a caller's hits); each row reports its cosine with the query.
  // Search and SearchHybrid compute the same observation from their own scan when
  // SearchOptions::observation is set (one scan; a second memory scan only for a search with a
  // metadata filter or quarantined entries, whose scan is not the unfiltered ranking).
  [[nodiscard]] absl::StatusOr<std::vector<ObservedRow>> Observe(std::string_view name_space,
                                                                 const std::vector<float>& query, int k_obs,
                                                                 std::string_view query_text = {});
  [[nodiscard]] absl::StatusOr<Entry> Get(std::string_view name_space, std::string_view id);
  [[nodiscard]] absl::StatusOr<std::vector<HistoryEvent>> History(std::string_view name_space,
                                                                  std::string_view id);
  // Calls `visit` with every verified entry of the namespace whose state is in `state_mask`, oldest
  // first; honeypots are never visited. Returns how many rows failed verification.
  [[nodiscard]] absl::StatusOr<int64_t> Export(std::string_view name_space, uint32_t state_mask,
                                               const std::function<absl::Status(const Entry&)>& visit);
  // Calls `visit` with every verified active honeypot of the namespace, oldest first (the admin
  // path of `bulwark honeypots`; Export never shows them). Returns how many rows failed verification.
  [[nodiscard]] absl::StatusOr<int64_t> ExportHoneypots(
      std::string_view name_space, const std::function<absl::Status(const Entry&)>& visit);
  // Every row's signature. A clean report also lifts a write freeze (below).
  [[nodiscard]] absl::StatusOr<VerifyReport> Verify();
  // Runs the backend's integrity check (issue #18 point 9: `bulwark serve` at start). On DataLoss
  // it freezes writes: Commit, CommitUpdate and Transition answer Unavailable until a Verify of
  // the whole store passes; reads go on (rows that fail their tags are withheld as always).
  // Returns the check's status.
  [[nodiscard]] absl::Status CheckIntegrityOrFreeze();
  // Replication (doc/scale-out.md, "Replicas in bulwark serve"): reflects every history event
  // committed so far in the indexes now, whatever other_writers_check_ms says, and returns the
  // newest seq reflected (every event up to it is applied, in seq order). The backend's error
  // otherwise (nothing is marked applied then).
  [[nodiscard]] absl::StatusOr<int64_t> CatchUpNow();
  bool writes_frozen() const { return writes_frozen_.load(); }

  // --- Placement (entry_store_placement.cc; Options::hold_all_namespaces = false) ---
  // Whether the namespace's vectors are held (always true when every namespace is held). Search,
  // SearchHybrid and Observe of a namespace not held answer FailedPrecondition ("not held"); reads
  // of single rows (Get, List, History, Export) read storage and work for any namespace.
  bool Holds(std::string_view name_space) const;
  // Loads the namespace's verified rows into a new index (built outside the lock, so searches of
  // other namespaces go on), then applies the namespace's events committed since the load began.
  // As at an open, a row older than its history's newest event (rolled back in storage) is
  // withheld from every read.
  // OK at once if it is held; the backend's error otherwise (then it is not held).
  [[nodiscard]] absl::Status HoldNamespace(std::string_view name_space) ABSL_LOCKS_EXCLUDED(mu_);
  // Drops the namespace's index (nothing of it stays in memory but row versions). No-op when every
  // namespace is held or it is not held.
  void DropNamespace(std::string_view name_space) ABSL_LOCKS_EXCLUDED(mu_);
  struct Holding {
    std::vector<std::string> held;   // the namespaces held, sorted
    std::vector<std::string> known;  // every namespace seen (open, catch-up), held or not, sorted
    int64_t vectors = 0;             // rows in the held namespaces' vector indexes
  };
  Holding Held() const;
  // Catches up with every writer, then writes the index snapshot (Options::snapshot_path) of the
  // vector indexes, the BM25 indexes built so far and the rollback bookkeeping as of the newest seq,
  // atomically; searches wait meanwhile. Returns its size in bytes. FailedPrecondition without a snapshot
  // path or while the history chain is broken; the backend's or the file's error otherwise (the old file
  // stays).
  [[nodiscard]] absl::StatusOr<uint64_t> WriteSnapshot() ABSL_LOCKS_EXCLUDED(mu_);
  // How the open loaded the index (tests, stats): from a snapshot (and how many entries it then
  // re-indexed from the history after it), or by scanning the rows.
  struct OpenReport {
    bool from_snapshot = false;
    int64_t caught_up_entries = 0;
    int lexical_from_snapshot = 0;  // namespaces whose BM25 index the snapshot holds (read on first use)
    int lexical_restored = 0;       // of those, restored since (RestoreLexicalLocked)
  };
  OpenReport open_report() const {
    absl::ReaderMutexLock lock(&mu_);
    return open_report_;
  }
  // Entry counts per namespace and the keyring's state.
  [[nodiscard]] absl::StatusOr<StoreStats> Stats(const EmbedderFingerprint& embedder);
  [[nodiscard]] absl::StatusOr<uint32_t> RotateSigningKey();

  StorageBackend& backend() { return *backend_; }
  const Keyring& keyring() const { return *keyring_; }
  int64_t signature_failures() const { return signature_failures_.load(); }

 private:
  struct NamespaceIndex;  // vectors and metadata of one namespace
  EntryStore(std::unique_ptr<StorageBackend> backend, std::unique_ptr<Keyring> keyring,
             const Options& options);

  absl::Status LoadIndexes();
  // The open's scan of every row (no usable snapshot). Requires mu_ (unique).
  absl::Status ScanIndexes(const absl::flat_hash_map<std::string, int64_t>& expected_rows)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Starts the indexes from the snapshot if it reads and checks against the store (entry_store_
  // snapshot.cc): installs its vector indexes and row versions, sets seen_event_seq_ to its seq and
  // returns true; false (with a warning unless there is none) if the open must scan. Requires mu_.
  bool LoadSnapshot(const absl::flat_hash_map<std::string, int64_t>& expected_rows,
                    std::vector<int64_t>* pot_rows) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The destructor's part: WriteSnapshot if Options::snapshot_path asks for it (see Options).
  void MaybeWriteSnapshot();
  // Restores the BM25 index the snapshot holds (NamespaceIndex) and replays the rows changed since:
  // true; false (logged) if the section or a row cannot be read. Requires mu_ (unique).
  bool RestoreLexicalLocked(NamespaceIndex& index) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // After the open's scan: reads the honeypot rows (2-4 % of a namespace) in full and puts them in
  // their pot indexes (SyncSideIndexes verifies each). Requires mu_ (unique).
  absl::Status LoadPots(std::span<const int64_t> pot_rows) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The namespace's index, made on first use with room for `expected_rows` vectors; `from_open`:
  // made by the open's scan, its side indexes not built (NamespaceIndex). Requires mu_ (unique).
  NamespaceIndex* IndexFor(const std::string& name_space, int64_t expected_rows = 0, bool from_open = false)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Builds the namespace's lexical index (if `lexical`) and metadata index (if `metadata`) when not
  // built yet: one scan of the namespace's text and/or metadata columns under mu_ (unique). Each row
  // is taken as the vector index holds it (its state and kind decide whether it is lexical; a row
  // the vector index does not hold is skipped, and one another process changed is re-indexed by
  // the next catch-up). OK if the namespace has no index; the backend's error otherwise (nothing is
  // marked built then).
  absl::Status EnsureSideIndexes(std::string_view name_space, bool lexical, bool metadata)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Adds a row to its namespace's index, logging instead of failing. Requires mu_ (unique).
  void IndexRow(int64_t row_id, const Entry& entry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The observation from the k_obs best active memory hits of the vector ranking (best first) and
  // the best pots (NamespaceIndex::BestPots of `scanned_pots`). Requires mu_ (shared).
  std::vector<ObservedRow> ObserveVector(const NamespaceIndex& index, const std::vector<float>& query,
                                         std::span<const IndexHit> memory_hits, size_t k_obs,
                                         const std::vector<IndexHit>* scanned_pots) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // The observation over the fused ranking from the active memories' vector and BM25 hits at the
  // same depth (best first) and the best pots as above (hybrid_search.cc). Callers pass depth =
  // k_obs: the hybrid observation fuses each ranking's first k_obs rows over memories and pots, a
  // fixed depth independent of the search's (doc/honeypots.md, "The observation"). Requires mu_.
  std::vector<ObservedRow> ObserveFused(const NamespaceIndex& index, const std::vector<float>& query,
                                        const QueryTerms& terms, std::span<const IndexHit> memory_vector_hits,
                                        std::span<const Bm25Hit> memory_lexical_hits, size_t depth,
                                        size_t k_obs, const std::vector<IndexHit>* scanned_pots,
                                        bool cosines = true) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // InvalidArgument for a SearchOptions::observation whose k_obs is outside [1, 64].
  static absl::Status CheckObservation(const SearchObservation* observation);
  // What Search and SearchHybrid do before ranking: check the query's dimension and the
  // observation, catch up with other writers, and build the side indexes the search needs (the
  // lexical one if `lexical`, the metadata one for a metadata filter).
  absl::Status PrepareSearch(std::string_view name_space, const std::vector<float>& query,
                             const SearchOptions& options, bool lexical) ABSL_LOCKS_EXCLUDED(mu_);
  // Observe's work under mu_ (shared), with the namespace's index (hybrid when terms is set;
  // `cosines` as SearchObservation::cosines).
  absl::StatusOr<std::vector<ObservedRow>> ObserveLocked(const NamespaceIndex& index,
                                                         const std::vector<float>& query,
                                                         const QueryTerms* terms, size_t k_obs,
                                                         bool cosines = true) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // Puts the row in the namespace's lexical index if it is an active memory, and in its pot index
  // (vector and tokens) if it is an active honeypot; else takes it out. Requires mu_ (unique).
  void SyncSideIndexes(NamespaceIndex* index, int64_t row_id, const Entry& entry)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Reads and verifies the rows of `ordered` (best first) not yet in `seen`, in batches, appending
  // those that pass (verified, in the namespace, accepted by `filter` and the metadata filter, not
  // expired) to result->hits until it holds `k`, with their score: scores[i] for ordered[i] if
  // `scores` has it (the index's), else their cosine to `query`. Requires mu_ (shared).
  absl::Status TakeVerified(std::string_view name_space, std::span<const int64_t> ordered,
                            std::span<const float> scores, const IndexFilter& filter,
                            const SearchOptions& options, const std::vector<float>& query, size_t k,
                            absl::flat_hash_set<int64_t>* seen, SearchResult* result)
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // Drops a row from its namespace's index (if indexed). Requires mu_ (unique).
  void UnindexRow(const std::string& name_space, int64_t row_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Checks a row read back from storage: decoded, in `name_space`, right embedding size, valid
  // tag, not rolled back. Requires mu_ (shared).
  absl::Status CheckRow(const StoredRow& row, std::string_view name_space) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // CheckRow without the history chain's fail-closed gate (Verify reports the chain apart).
  absl::Status CheckRowItself(const StoredRow& row, std::string_view name_space) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  absl::StatusOr<StoredRow> LoadVerified(std::string_view name_space, std::string_view id)
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // Calls `visit` with every verified entry of the namespace that `wanted` accepts, oldest first;
  // returns how many rows failed verification.
  absl::StatusOr<int64_t> ScanVerified(std::string_view name_space,
                                       const std::function<bool(const Entry&)>& wanted,
                                       const std::function<absl::Status(const Entry&)>& visit);
  // One attempt of Transition on a row read at its current version. Requires mu_ (unique).
  absl::Status ApplyTransition(const RowForUpdate& read, std::string_view actor, const StateChange& change)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ReportBadRow(int64_t row_id, std::string_view id, std::string_view name_space,
                    std::string_view reason);
  void ReportBadEvent(int64_t seq, std::string_view reason);
  // Brings the index up to date with entries other processes changed (Options::
  // other_writers_check_ms); a no-op until the next check is due.
  absl::Status CatchUpWithOtherWriters();
  // Reads the events after seen_event_seq_ and re-indexes the entries other writers changed.
  // Requires mu_ (unique).
  absl::Status CatchUpLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Re-reads the entry and re-indexes it as LoadIndexes would (or drops it). Requires mu_ (unique).
  absl::Status ReindexEntry(const std::string& name_space, const std::string& id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Notes the events this process's last write appended, so catching up skips them. Requires mu_.
  void NoteOwnEvents() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Rollback detection: the row has reached at least this version (updated_at_us); a row later
  // read back older than the newest version noted was rolled back (RolledBack). Requires mu_.
  void NoteVersion(int64_t row_id, int64_t updated_at_us) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool RolledBack(const StoredRow& row) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // True if the row belongs in the index: not deleted or purged, decodes, has the embedder's
  // dimension and a valid namespace; a row that does not is reported (ReportBadRow).
  bool Indexable(const StoredRow& row);

  const Options options_;
  std::unique_ptr<StorageBackend> backend_;
  std::unique_ptr<Keyring> keyring_;
  // Another process may rotate the keyring (`bulwark keys rotate` beside a server); the rows and
  // the history head it signs afterwards name a key this copy lacks, so reads would withhold them
  // and writes would find the head unverifiable. Before writes and catch-ups, at most every
  // other_writers_check_ms, the file's identity (device, inode, modification time, size) is
  // compared and a changed file re-read (it only ever gains keys). The inode matters: a rotation
  // renames a new file over the old one, and two rotations within the file system's timestamp
  // granularity leave the modification time unchanged. Takes keyring_mu_, mu_ if it changed.
  void RefreshKeyring() ABSL_LOCKS_EXCLUDED(keyring_mu_, mu_);
  // Re-reads the keyring file now, whatever its stamp and the check interval say; true if it
  // gained a key (then it signs and verifies here too). Takes keyring_mu_, mu_.
  bool ReloadKeyringIfGrown() ABSL_LOCKS_EXCLUDED(keyring_mu_, mu_);
  // Runs `write`, which takes mu_ itself. RefreshKeyring and a write's transaction are not atomic
  // across processes: another process may rotate the keyring and write (signing the history head
  // with the new key) in between, and the write then finds the head unverifiable (DataLoss). So a
  // DataLoss is answered by re-reading the keyring and, if it gained a key since the attempt
  // began, running `write` again (at most 3 attempts); a DataLoss with no new key is returned
  // (real damage).
  absl::Status WriteWithFreshKeyring(absl::FunctionRef<absl::Status()> write);
  struct FileStamp {
    uint64_t device = 0;
    uint64_t inode = 0;
    int64_t mtime_ns = 0;
    int64_t size = -1;
    bool operator==(const FileStamp&) const = default;
  };
  std::atomic<int64_t> next_keyring_check_us_{0};
  FileStamp keyring_stamp_ ABSL_GUARDED_BY(mu_){};
  mutable absl::Mutex keyring_mu_ ABSL_ACQUIRED_BEFORE(mu_);  // Sign: shared; keyring changes: unique
  // The write freeze of CheckIntegrityOrFreeze.
  absl::Status WritesAllowed() const;
  void ThawWrites();
  std::atomic<bool> writes_frozen_{false};
  mutable absl::Mutex freeze_mu_;
  std::string freeze_reason_ ABSL_GUARDED_BY(freeze_mu_);
  std::unique_ptr<Signer> signer_;
  std::unique_ptr<HistoryChain> chain_;  // the backend links events with it (history_chain.h)
  // The history chain (history_chain.h) checked at open (its head against the newest event) and by
  // every Verify (the whole chain). While it is broken -- events deleted, renumbered or
  // reordered, or the head replaced -- every read fails closed: CheckRow refuses every row, since
  // which entries lost events cannot be told (doc/entry_format.md, "History chain").
  absl::Status CheckChainHead();
  // Verify's part for the history: every event's tag and link in seq order, then the head against
  // the newest event; sets or clears the chain problem. Requires mu_ (shared).
  absl::Status VerifyHistory(VerifyReport* report) ABSL_SHARED_LOCKS_REQUIRED(mu_);
  void SetChainProblem(std::string problem);  // empty: the chain is whole
  std::atomic<bool> chain_broken_{false};
  std::string chain_problem_ ABSL_GUARDED_BY(freeze_mu_);
  const LexicalTerms terms_;  // the lexical index's terms (hybrid ranking)
  // Guards the indexes, the keyring (a rotation invalidates its keys) and the bookkeeping below,
  // and orders changes.
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::unique_ptr<NamespaceIndex>> indexes_ ABSL_GUARDED_BY(mu_);
  // Catching up with other writers: every history event up to seen_event_seq_ is reflected in the
  // index, and so are own_event_seqs_ (this process's events after it).
  int64_t seen_event_seq_ ABSL_GUARDED_BY(mu_) = 0;
  // By row id, the newest updated_at_us this process has seen the row reach: from the row at open,
  // the newest event of its history, and every write since (its own and, caught up, others').
  RowVersionTable row_versions_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<int64_t> own_event_seqs_ ABSL_GUARDED_BY(mu_);
  // Placement (Options::hold_all_namespaces = false): the namespaces held, and every namespace
  // seen, so a replica can place the ones it does not hold.
  bool HoldsLocked(std::string_view name_space) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // FailedPrecondition naming the namespace: a search of a namespace not held here.
  static absl::Status NotHeldError(std::string_view name_space);
  // One HoldNamespace load at a time (a namespace is never loaded twice at once).
  absl::Mutex hold_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  absl::flat_hash_set<std::string> held_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<std::string> known_namespaces_ ABSL_GUARDED_BY(mu_);
  // Index changes (rows indexed, re-indexed or changed state) since the snapshot the open read,
  // or since the open's scan (counting every row then): what MaybeWriteSnapshot weighs.
  int64_t changes_since_snapshot_ ABSL_GUARDED_BY(mu_) = 0;
  // A namespace's BM25 index was built from the rows since the open (the snapshot lacked it): the
  // next close writes a snapshot holding it.
  bool lexical_built_since_snapshot_ ABSL_GUARDED_BY(mu_) = false;
  OpenReport open_report_ ABSL_GUARDED_BY(mu_);
  std::atomic<int64_t> next_catch_up_us_{0};
  mutable absl::Mutex bad_mu_;
  absl::flat_hash_set<int64_t> bad_rows_ ABSL_GUARDED_BY(bad_mu_);    // rows that failed verification
  absl::flat_hash_set<int64_t> bad_events_ ABSL_GUARDED_BY(bad_mu_);  // history events (by seq) that did
  std::atomic<int64_t> signature_failures_{0};
};

// The honeypot observation a search computes from its own scan (SearchOptions::observation; the
// honeypot guard sets it). `k_obs` and `cosines` are read, the rest is written by EntryStore::Search
// and SearchHybrid (EntryStore::Observe's contract). `cosines` false (a monitor that reads only pot
// counts): a hybrid observation's row only the lexical ranking placed has score 0, not its cosine.
struct SearchObservation {
  int k_obs = 4;                              // 1 .. 64; InvalidArgument from the search otherwise
  bool cosines = true;                        // see above
  bool observed = false;                      // rows hold the observation
  bool own_scan = false;                      // taken from the search's scan (no second memory scan)
  std::vector<EntryStore::ObservedRow> rows;  // best first, at most k_obs
};

}  // namespace bulwark
