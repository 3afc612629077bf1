// The PostgreSQL AuditRepository: table `audit` (the columns and bytes of the SQLite one,
// sqlite_audit_repository.h and doc/store_format.md "Audit log") in the store's PostgreSQL
// database, on a connection of its own that a mutex serializes. PostgreSQL has no page cache to
// protect, so the log lives in the store's database rather than in a database of its own; there
// are no records of earlier versions to move in.
//
// Append takes the table's write lock (LOCK TABLE audit IN SHARE ROW EXCLUSIVE MODE: it conflicts
// with itself and with every write, not with reads), reads the head in the same transaction and
// numbers unsigned rows head + 1, head + 2, ...: two processes appending at once never fork the
// chain, and seqs are assigned in commit order (the lock is released only after the commit is
// visible). The batch is written in one pipeline (one round trip). Scan opens a second connection
// and pages through one REPEATABLE READ READ ONLY snapshot, so appends go on meanwhile.
#pragma once

#include <absl/status/statusor.h>

#include <memory>
#include <string_view>

#include "storage/audit_repository.h"

namespace bulwark {

// Connects to the store in the database named by `conninfo` and creates the table and its
// indexes if absent (AuditRepository::Upgrade). Unavailable if the server cannot be reached;
// NotFound if the database holds no store (PostgresBackend makes it).
[[nodiscard]] absl::StatusOr<std::unique_ptr<AuditRepository>> OpenPostgresAuditRepository(
    std::string_view conninfo);

}  // namespace bulwark
