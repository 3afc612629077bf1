// AuditLog: which memories fed which answer (DESIGN 4.9). Every search appends a record; an
// operator reads them back by time, principal, session or namespace.
//
// Records are group-committed: Append queues the record and returns; a background thread writes
// queued records in one transaction at least every `flush_interval_ms` (and Flush() forces it).
// A crash can lose at most the records not yet written (normally those of the last interval);
// entries themselves are unaffected.
//
// Memory is bounded: at most `queue_capacity` records are queued (a record leaves the queue when
// its transaction commits, so a failing disk cannot grow it). When the queue is full, Append
// blocks until the writer makes room -- backpressure that slows callers to the disk's pace -- but
// for at most one second; after that the record is dropped, counted in DroppedCount(), and the
// next Flush() returns ResourceExhausted. A request is never stalled indefinitely by the audit log.
//
// Persistence: an AuditRepository (storage/audit_repository.h; the SQLite one keeps table `audit`
// in its own file beside the store's, audit.db). This file holds no SQL. Opened with a keyring,
// the writer signs records as a hash chain (audit_chain.h; one HMAC per record, off the request
// path) and Verify checks it. Thread-safe.
#pragma once

#include <absl/status/status.h>
#include <absl/status/statusor.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace bulwark {

struct AuditRecord {
  int64_t seq = 0;  // assigned when written
  int64_t at_us = 0;
  std::string principal;
  std::string session;  // X-Bulwark-Session, may be empty
  std::string name_space;
  std::string operation;                  // ToString of an AuditOperation (audit_operation.h)
  std::string query_hash;                 // SHA-256 hex of the query text; the query itself is not kept
  std::vector<std::string> returned_ids;  // in the order they were returned
  nlohmann::json detail = nlohmann::json::object();  // e.g. gate decision and score (issue #5)
};

struct AuditVerification;  // audit_chain.h
class AuditRepository;     // storage/audit_repository.h

struct AuditQuery {
  std::optional<std::string> principal;
  std::optional<std::string> session;
  std::optional<std::string> name_space;
  std::optional<std::string> entry_id;  // records that returned this entry (whole-id match)
  int64_t since_us = 0;                 // at_us >= since_us; 0 means no lower bound
  int limit = 100;                      // 1 .. 10000, newest (highest seq) first
};

// The audit database of the store whose SQLite file is `store_db` (StoreLayout::audit_database).
std::filesystem::path AuditDatabaseFor(const std::filesystem::path& store_db);

class AuditLog {
 public:
  static constexpr size_t kDefaultQueueCapacity = 100'000;

  // The audit log over `rows` (storage/storage_opener.h opens them); starts the writer thread.
  // InvalidArgument for a null repository or the limits below; the keyring's Load errors.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<AuditLog>> Open(
      std::unique_ptr<AuditRepository> rows, int flush_interval_ms = 50,
      size_t queue_capacity = kDefaultQueueCapacity, const std::filesystem::path& keyring_path = {});
  // Opens (creating the table and indexes if needed) the audit log in the existing SQLite
  // database at `db_path` and starts the writer thread. InvalidArgument unless
  // 1 <= flush_interval_ms <= 60000 and 1 <= queue_capacity <= 10^7; NotFound if there is no file
  // at `db_path`; Unavailable if it cannot be opened; DataLoss if it is not an SQLite database.
  //
  // With `keyring_path`, new records are signed in a hash chain (audit_chain.h) with the newest key
  // of that keyring as loaded now, and Verify checks the chain; the keyring's Load errors are
  // returned. Without it records are written unsigned.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<AuditLog>> Open(
      const std::filesystem::path& db_path, int flush_interval_ms = 50,
      size_t queue_capacity = kDefaultQueueCapacity, const std::filesystem::path& keyring_path = {});
  // The audit log of the store whose SQLite file is `store_db`: opens AuditDatabaseFor(store_db),
  // creating it if needed, and moves into it the records earlier versions kept in the store's own
  // file (table `audit`, dropped there afterwards). Signs with `keyring_path`, by default the
  // store's keyring beside `store_db` (StoreLayout::keyring) when there is one. NotFound if
  // `store_db` does not exist; other errors as Open. A PostgreSQL store (`store_db` is its
  // postgresql:// location, StoreLayout::database) keeps the log in its database and has no
  // default keyring: InvalidArgument without `keyring_path`.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<AuditLog>> OpenForStore(
      const std::filesystem::path& store_db, int flush_interval_ms = 50,
      size_t queue_capacity = kDefaultQueueCapacity, std::filesystem::path keyring_path = {});
  // Writes every queued record, then stops the writer. If writes keep failing, gives up after
  // three attempts and reports the number of lost records on stderr.
  ~AuditLog();

  // Queues `record` (seq is assigned when it is written; at_us is kept as given). Returns at once
  // unless the queue is full (see above). Records are written in the order Append accepted them.
  void Append(AuditRecord record);
  // Returns once every record accepted by Append before this call is committed to disk. Otherwise
  // the error of the failed write attempt (Unavailable for a busy or failing disk; the records stay
  // queued and are retried), or ResourceExhausted if records were dropped since the last Flush.
  [[nodiscard]] absl::Status Flush();
  // Records written so far that match every given filter, newest first. Records still queued are
  // not seen: call Flush() first to include them. InvalidArgument for a limit outside 1..10000.
  // A stored row that does not decode is returned with detail {"corrupt": "..."}.
  [[nodiscard]] absl::StatusOr<std::vector<AuditRecord>> Query(const AuditQuery& query);
  // Records dropped since Open because the queue stayed full, or lost at close (for /metrics).
  uint64_t DroppedCount();
  // Whether records are being written now: OK unless the writer's latest attempt failed (then that
  // attempt's error, e.g. Unavailable for a locked or failing disk; records stay queued and are
  // retried every interval, and the next successful write makes this OK again). Never blocks on a
  // write. The service refuses requests while this is not OK (doc/api.md, "Audit fails closed").
  [[nodiscard]] absl::Status WriteHealth();
  // Checks every written record's place in the signed chain (audit_chain.h) with the keyring as it
  // is on disk now. FailedPrecondition for a log opened without a keyring; the keyring's Load
  // errors; Unavailable if the log cannot be read. Records still queued are not checked.
  [[nodiscard]] absl::StatusOr<AuditVerification> Verify();

 private:
  class Impl;
  explicit AuditLog(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// {"seq", "at_us", "principal", "session", "namespace", "operation", "query_hash",
//  "returned_ids", "detail"}: one JSON object per record, for APIs and tools that print records.
nlohmann::json ToJson(const AuditRecord& record);

}  // namespace bulwark
