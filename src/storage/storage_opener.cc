// The storage opener (storage_opener.h): picks the engine from the location and opens its
// repositories. The SQLite files are named by StoreLayout only.
#include "storage/storage_opener.h"

#include <absl/strings/match.h>
#include <absl/strings/str_cat.h>

#include <filesystem>

#include "core/status_macros.h"
#include "core/strings.h"
#include "storage/sqlite/sqlite_access_repository.h"
#include "storage/sqlite/sqlite_audit_repository.h"
#include "storage/sqlite/sqlite_backend.h"
#include "storage/sqlite/sqlite_gate_repository.h"
#include "storage/sqlite/sqlite_honeypot_repository.h"
#include "storage/store_layout.h"

namespace bulwark {
namespace {

// The SQLite layout of a directory location; Unimplemented for a PostgreSQL one.
absl::StatusOr<StoreLayout> SqliteLayout(std::string_view location) {
  if (IsPostgresLocation(location)) {
    return absl::UnimplementedError(
        "PostgreSQL storage is not available in this build (src/storage/postgresql is not linked)");
  }
  if (location.empty()) return absl::InvalidArgumentError("no store location");
  return StoreLayout(std::filesystem::path(std::string(location)));
}

}  // namespace

bool IsPostgresLocation(std::string_view location) {
  return absl::StartsWithIgnoreCase(ToAbsl(location), "postgresql://") ||
         absl::StartsWithIgnoreCase(ToAbsl(location), "postgres://");
}

absl::StatusOr<StorageRepositories> OpenEntryRepositories(std::string_view location, bool create) {
  BULWARK_ASSIGN_OR_RETURN(const StoreLayout layout, SqliteLayout(location));
  BULWARK_ASSIGN_OR_RETURN(std::unique_ptr<SqliteBackend> backend,
                           SqliteBackend::Open(layout.database(), create));
  StorageRepositories out;
  out.defense_state = backend.get();
  out.entries = std::move(backend);
  return out;
}

absl::StatusOr<std::unique_ptr<AuditRepository>> OpenAuditRepository(std::string_view location) {
  BULWARK_ASSIGN_OR_RETURN(const StoreLayout layout, SqliteLayout(location));
  if (!layout.StoreExists()) {
    return absl::NotFoundError(absl::StrCat("no store database at ", layout.database().string()));
  }
  // The audit file is created beside an existing store, and takes over the records versions
  // before the split kept in the store's own file.
  return OpenSqliteAuditRepository(layout.audit_database(), /*create=*/true, layout.database());
}

absl::StatusOr<std::unique_ptr<AccessRepository>> OpenAccessRepository(std::string_view location) {
  BULWARK_ASSIGN_OR_RETURN(const StoreLayout layout, SqliteLayout(location));
  return OpenSqliteAccessRepository(layout.database());
}

absl::StatusOr<std::unique_ptr<GateRepository>> OpenGateRepository(std::string_view location) {
  BULWARK_ASSIGN_OR_RETURN(const StoreLayout layout, SqliteLayout(location));
  return OpenSqliteGateRepository(layout.database());
}

absl::StatusOr<std::unique_ptr<HoneypotRepository>> OpenHoneypotRepository(std::string_view location) {
  BULWARK_ASSIGN_OR_RETURN(const StoreLayout layout, SqliteLayout(location));
  BULWARK_ASSIGN_OR_RETURN(std::unique_ptr<SqliteHoneypotRepository> repository,
                           SqliteHoneypotRepository::Open(layout.database()));
  return std::unique_ptr<HoneypotRepository>(std::move(repository));
}

absl::StatusOr<StorageRepositories> OpenStorage(std::string_view location, bool create) {
  // The entries' database first: it creates the file and runs the store's migrations.
  BULWARK_ASSIGN_OR_RETURN(StorageRepositories out, OpenEntryRepositories(location, create));
  BULWARK_ASSIGN_OR_RETURN(out.audit, OpenAuditRepository(location));
  BULWARK_ASSIGN_OR_RETURN(out.access, OpenAccessRepository(location));
  BULWARK_ASSIGN_OR_RETURN(out.gate, OpenGateRepository(location));
  BULWARK_ASSIGN_OR_RETURN(out.honeypot, OpenHoneypotRepository(location));
  return out;
}

}  // namespace bulwark
