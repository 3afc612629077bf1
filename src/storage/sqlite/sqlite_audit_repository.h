// The SQLite AuditRepository: table `audit` in its own file beside the store's database
// (StoreLayout::audit_database; WAL, synchronous=FULL). Not in the store's file: a commit there (one
// per flush interval while searches run) would make the store's connection drop its page cache
// before its next read. The file keeps its own schema version (PRAGMA user_version, see
// doc/store_format.md "Audit log"): it is opened, upgraded and copied on its own.
#pragma once

#include <absl/status/statusor.h>

#include <filesystem>
#include <memory>

#include "storage/audit_repository.h"

namespace bulwark {

// Opens the audit database at `path` and upgrades it (AuditRepository::Upgrade). With `create`, an
// absent file is created; without, NotFound. `legacy_store_db` (may be empty): the store database
// whose table `audit` (where versions before the split kept the log) is moved into this file on
// upgrade and dropped there. Unavailable if the file cannot be opened; DataLoss if it is not an
// SQLite database; FailedPrecondition for a schema version newer than this build knows.
[[nodiscard]] absl::StatusOr<std::unique_ptr<AuditRepository>> OpenSqliteAuditRepository(
    const std::filesystem::path& path, bool create, const std::filesystem::path& legacy_store_db = {});

}  // namespace bulwark
