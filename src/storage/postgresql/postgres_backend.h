// PostgresBackend: StorageBackend (entries and their history) and DefenseStateRepository (query
// history, calibrations) in a PostgreSQL database (issue #17 point 1), with the same tables,
// columns and bytes as SqliteBackend (doc/store_format.md): text columns are TEXT COLLATE "C" so
// that every ORDER BY sorts bytewise as SQLite does, byte columns are BYTEA, integers BIGINT.
// Signatures are computed above storage, so a row copied between the two verifies in both.
//
// Write transactions and the commit order of history seqs (StorageBackend::EventsAfter's
// contract). Every write that appends history (InsertEntries, InsertEntriesOnce, UpdateEntry,
// PurgeEntry, SignEventsFromBeforeSigning) first locks the single row of `history_counter`
// (SELECT ... FOR UPDATE), and before committing sets it to the last seq it assigned. The lock is
// held until the transaction ends, and PostgreSQL makes a commit visible before it releases the
// committer's locks, so the next writer reads a counter whose events are all visible and draws
// the next seqs: seqs are gap-free (a rolled-back writer's counter update rolls back with it) and
// in commit order, and a reader (one statement, one snapshot) never sees seq n+1 without seq n.
// It is the PostgreSQL analogue of SQLite's BEGIN IMMEDIATE, and it orders the history chain
// (StorageBackend, "The history chain"): a writer reads the newest event's link and the head only
// after it holds the counter lock, in the same transaction that appends and replaces the head, so
// two writers never link to the same event. Those writers are serialized store-wide, which also makes
// InsertEntriesOnce's claim check and its insert atomic against every other writer, as in SQLite.
// (Per-namespace counters would let namespaces write in parallel, but EventsAfter takes one store-wide seq;
// that is issue #17 point 2.)
//
// UpdateEntry's compare-and-set is one statement (UPDATE ... WHERE updated_at_us = expected),
// inside the serialized write transaction. Reads are single statements (one snapshot each);
// scans page through the table in one REPEATABLE READ READ ONLY transaction (one snapshot).
//
// What differs from SQLite: PurgeEntry removes the text from every live row, but PostgreSQL keeps
// dead row versions until VACUUM and keeps its WAL until recycled, so the erased text may remain
// on disk for a while (SQLite checkpoints and uses secure_delete); CheckIntegrity checks the
// store's own invariants (tables present, the counter not behind the history), not pages (that
// would need the amcheck extension, which needs a superuser); TEXT cannot hold NUL bytes or
// invalid UTF-8 (the write path validates text before it gets here).
//
// Fencing (issue #17 point 2, namespace_lease.h). A replica that leads a namespace sets a fence
// (SetFence: the namespace and its lease epoch); from then on every write transaction that
// changes that namespace's entries, history, query history or calibration first runs CheckFence
// in the same transaction and fails with FailedPrecondition, changing nothing, once the epoch
// moved on or the lease expired by the database's clock. Namespaces without a fence are written
// unchecked (a single replica needs no leases). Store-wide writes (PutMeta,
// SignEventsFromBeforeSigning, DeleteIdempotencyRecords) are not fenced. A fence needs the lease
// table in this database (NamespaceLeases::Open or CreateLeaseTable makes it). The fence's row
// lock (FOR SHARE on the lease row) is taken before the history counter's; TryAcquire locks only
// the lease row, so the two never wait on each other in a cycle.
//
// One connection per backend, serialized by a mutex (as SqliteBackend). Open several backends
// for several connections. A lost connection (the server restarted, or its primary failed over to a
// standby: give every host in the connection string with target_session_attrs=read-write) fails
// the call that meets it with Unavailable and is reopened by the next call (pg_connection.h). A
// write is never retried: one whose COMMIT was cut off may or may not have committed, so it
// returns Unavailable and the caller must not acknowledge it (EventsAfter tells what happened).
// The single-statement reads (GetMeta, GetEntry, GetRows, History, LastEventSeq, EventsAfter)
// run once more on a reopened connection when the first try met a lost one.
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/synchronization/mutex.h>

#include <memory>
#include <string>
#include <string_view>

#include "storage/defense_state_repository.h"
#include "storage/postgresql/pg_connection.h"
#include "storage/storage_backend.h"

namespace bulwark {

class PostgresBackend final : public StorageBackend, public DefenseStateRepository {
 public:
  // Connects (libpq connection string or postgresql:// URL) and creates the schema if `create`.
  // Unavailable if the server cannot be reached; NotFound if the database holds no store and
  // !create; DataLoss if its tables hold someone else's data; FailedPrecondition for a schema
  // version this build does not know.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<PostgresBackend>> Open(std::string_view conninfo,
                                                                             bool create);

  // Fences the writes of `name_space` with `epoch` (replacing its previous fence), or lifts the
  // fence (see the file comment). Waits for a write in flight.
  void SetFence(std::string_view name_space, int64_t epoch);
  void ClearFence(std::string_view name_space);
  // Required fences (a replica of a replica group): a write of a namespace without a fence is
  // refused like a fenced one (FailedPrecondition "fenced: ... not led here"), so no write path
  // (Mem0, MCP, the expiry sweeper, the write gate's state) writes a namespace unfenced.
  void RequireFences(bool required);

  absl::StatusOr<std::optional<std::string>> GetMeta(std::string_view key) override;
  absl::Status PutMeta(std::string_view key, std::string_view value) override;
  absl::Status ScanMeta(
      std::string_view prefix,
      const std::function<absl::Status(std::string_view, std::string_view)>& visit) override;
  absl::Status DeleteMeta(std::string_view key) override;
  absl::StatusOr<std::vector<int64_t>> InsertEntries(std::span<const Entry> entries,
                                                     std::span<const HistoryEvent> events) override;
  absl::Status UpdateEntry(const Entry& entry, int64_t expected_updated_at_us,
                           const HistoryEvent& event) override;
  absl::Status PurgeEntry(const Entry& purged, int64_t expected_updated_at_us,
                          std::span<const HistoryEvent> scrubbed, const HistoryEvent& event) override;
  absl::StatusOr<std::optional<StoredRow>> GetEntry(std::string_view name_space,
                                                    std::string_view id) override;
  absl::StatusOr<std::vector<std::optional<StoredRow>>> GetRows(std::span<const int64_t> row_ids) override;
  absl::Status ScanEntries(std::string_view name_space,
                           const std::function<absl::Status(const StoredRow&)>& visit) override;
  absl::StatusOr<std::vector<HistoryEvent>> History(std::string_view name_space,
                                                    std::string_view id) override;
  absl::Status ScanHistory(const std::function<absl::Status(const HistoryEvent&)>& visit) override;
  absl::Status ScanNewestEventTimes(std::string_view name_space,
                                    const std::function<void(int64_t, int64_t)>& visit) override;
  absl::StatusOr<int64_t> LastEventSeq() override;
  absl::StatusOr<std::vector<EventRef>> EventsAfter(int64_t seq) override;
  absl::StatusOr<std::vector<EventRef>> HeldEventsAfter(int64_t seq,
                                                        const std::vector<std::string>& held) override;
  std::vector<int64_t> TakeInsertedEventSeqs() override;
  absl::StatusOr<int64_t> SignEventsFromBeforeSigning(
      const std::function<void(HistoryEvent*)>& sign) override;
  void SetHistoryChain(const HistoryChainSigner* signer) override;
  absl::Status ScanHistoryChain(
      const std::function<absl::Status(const HistoryEvent&, const HistoryLink&)>& visit) override;
  absl::StatusOr<std::optional<HistoryHead>> HistoryChainHead() override;
  absl::StatusOr<std::pair<int64_t, HistoryLink>> NewestLink() override;
  absl::StatusOr<int64_t> LinkEventsFromBeforeTheChain() override;
  absl::StatusOr<std::vector<StateCount>> CountByState() override;
  absl::Status CheckIntegrity() override;
  absl::StatusOr<InsertOutcome> InsertEntriesOnce(std::span<const Entry> entries,
                                                  std::span<const HistoryEvent> events,
                                                  const InsertClaim& claim) override;
  absl::StatusOr<std::vector<StoredRow>> ListEntries(const ListQuery& query) override;
  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ExpiredEntries(int64_t now_us,
                                                                                  int limit) override;
  absl::StatusOr<int64_t> DeleteIdempotencyRecords(int64_t before_us) override;
  absl::Status SaveQueryHistory(std::string_view name_space, uint64_t first_sequence,
                                std::span<const std::vector<float>> rows, uint64_t keep_from_sequence,
                                bool replace) override;
  absl::Status ScanQueryHistory(
      const std::function<absl::Status(std::string_view, uint64_t, std::vector<float>)>& visit) override;
  absl::Status PutCalibration(std::string_view name_space, std::string_view calibration) override;
  absl::Status ScanCalibrations(
      const std::function<absl::Status(std::string_view, std::string_view)>& visit) override;

 private:
  explicit PostgresBackend(std::unique_ptr<pg::PgConnection> conn) : conn_(std::move(conn)) {}
  // Checks the store's format and version, and creates the schema (serialized across processes by
  // an advisory lock) when the database holds no store yet.
  absl::Status InitSchema(bool create);
  // Sets *found if the meta table names a store; then DataLoss if it is not a Bulwark store and
  // FailedPrecondition for another schema version. Requires mu_.
  absl::Status CheckFormatLocked(bool* found) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // In a write transaction: CheckFence for `name_space` if it has a fence, for each namespace of
  // `entries` (each once). Requires mu_.
  absl::Status CheckFenceLocked(std::string_view name_space) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status CheckFencesLocked(std::span<const Entry> entries) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // In a write transaction: locks the history counter (see the file comment). Requires mu_.
  absl::Status LockWritersLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Appends `events` with the next seqs and advances the counter; with a chain signer, links them
  // after the newest event and replaces the head. Requires mu_ and the lock.
  absl::Status AppendEventsLocked(std::span<const HistoryEvent> events) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // With the writers' lock held: the newest event's link, after checking that the stored head names
  // that event and its tag checks (postgres_backend_chain.cc). DataLoss (the caller writes nothing)
  // if not: events were deleted or the head was replaced. Requires mu_, chain_ and the lock.
  absl::StatusOr<std::string> ChainTailLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The stored head, read in the caller's transaction (or its own statement). Requires mu_.
  absl::StatusOr<std::optional<HistoryHead>> HeadLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Upserts the head in meta, in the caller's transaction. Requires mu_.
  absl::Status PutHeadLocked(const HistoryHead& head) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<std::vector<int64_t>> InsertLocked(std::span<const Entry> entries,
                                                    std::span<const HistoryEvent> events)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status CheckClaimLocked(std::string_view name_space, std::string_view principal,
                                const InsertClaim& claim, InsertOutcome* outcome)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status UpdateLocked(const Entry& entry, int64_t expected_updated_at_us,
                            std::span<const HistoryEvent> scrubbed, const HistoryEvent& event)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Runs the prepared read `name` (one statement, no transaction); when it failed because the
  // connection was lost, once more on the reopened connection. Requires mu_.
  absl::StatusOr<pg::PgResult> ReadLocked(std::string_view name, std::string_view sql,
                                          std::span<const pg::PgParam> params)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  static constexpr int kScanPage = 500;  // rows per page of a scan (ScanPagesLocked's LIMIT)
  // Runs `sql` (which must take the last key as its final parameter `$n` and ORDER BY the key
  // column, the first column) page by page in one read-only snapshot, calling `visit` per row.
  absl::Status ScanPagesLocked(const std::string& sql, std::vector<pg::PgParam> params,
                               const std::function<absl::Status(const pg::PgResult&, int)>& visit)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  absl::Mutex mu_;  // serializes all use of conn_
  std::unique_ptr<pg::PgConnection> conn_ ABSL_GUARDED_BY(mu_);
  const HistoryChainSigner* chain_ ABSL_GUARDED_BY(mu_) = nullptr;
  // Seqs of the events the current (or last) write appended; guarded by mu_.
  std::vector<int64_t> inserted_event_seqs_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, int64_t> fences_ ABSL_GUARDED_BY(mu_);  // namespace -> epoch
  bool fences_required_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace bulwark
