// The storage opener (storage_opener.h): picks the engine from the location and opens its
// repositories. The SQLite files are named by StoreLayout only; a PostgreSQL location is handed to
// the repositories of storage/postgresql as libpq's connection string.
#include "storage/storage_opener.h"

#include <absl/strings/match.h>
#include <absl/strings/str_cat.h>

#include <filesystem>

#include "core/status_macros.h"
#include "core/strings.h"
#include "storage/postgresql/postgres_access_repository.h"
#include "storage/postgresql/postgres_audit_repository.h"
#include "storage/postgresql/postgres_backend.h"
#include "storage/postgresql/postgres_gate_repository.h"
#include "storage/postgresql/postgres_honeypot_repository.h"
#include "storage/postgresql/postgres_store.h"
#include "storage/sqlite/sqlite_access_repository.h"
#include "storage/sqlite/sqlite_audit_repository.h"
#include "storage/sqlite/sqlite_backend.h"
#include "storage/sqlite/sqlite_gate_repository.h"
#include "storage/sqlite/sqlite_honeypot_repository.h"
#include "storage/store_layout.h"

namespace bulwark {
namespace {

// The SQLite layout of a directory location (the callers handle PostgreSQL ones first).
absl::StatusOr<StoreLayout> SqliteLayout(std::string_view location) {
  if (location.empty()) return absl::InvalidArgumentError("no store location");
  return StoreLayout(std::filesystem::path(std::string(location)));
}

}  // namespace

bool IsPostgresLocation(std::string_view location) {
  return absl::StartsWithIgnoreCase(ToAbsl(location), "postgresql://") ||
         absl::StartsWithIgnoreCase(ToAbsl(location), "postgres://");
}

std::string DisplayLocation(std::string_view location) {
  std::string out(location);
  if (!IsPostgresLocation(location)) return out;
  // The userinfo ends at the first '@' before the host's '/': a ':' in it starts the password.
  const size_t start = out.find("://") + 3;
  const size_t at = out.find('@', start);
  const size_t slash = out.find('/', start);
  if (at != std::string::npos && (slash == std::string::npos || at < slash)) {
    const size_t colon = out.find(':', start);
    if (colon != std::string::npos && colon < at) out.replace(colon + 1, at - colon - 1, "***");
  }
  for (size_t p = out.find("password="); p != std::string::npos; p = out.find("password=", p + 1)) {
    const size_t value = p + 9;
    const size_t end = out.find('&', value);
    out.replace(value, (end == std::string::npos ? out.size() : end) - value, "***");
  }
  return out;
}

absl::StatusOr<StorageRepositories> OpenEntryRepositories(std::string_view location, bool create) {
  if (IsPostgresLocation(location)) {
    BULWARK_ASSIGN_OR_RETURN(std::unique_ptr<PostgresBackend> backend,
                             PostgresBackend::Open(location, create));
    StorageRepositories out;
    out.defense_state = backend.get();
    out.entries = std::move(backend);
    return out;
  }
  BULWARK_ASSIGN_OR_RETURN(const StoreLayout layout, SqliteLayout(location));
  BULWARK_ASSIGN_OR_RETURN(std::unique_ptr<SqliteBackend> backend,
                           SqliteBackend::Open(layout.database(), create));
  StorageRepositories out;
  out.defense_state = backend.get();
  out.entries = std::move(backend);
  return out;
}

absl::StatusOr<std::unique_ptr<AuditRepository>> OpenAuditRepository(std::string_view location) {
  if (IsPostgresLocation(location)) return OpenPostgresAuditRepository(location);
  BULWARK_ASSIGN_OR_RETURN(const StoreLayout layout, SqliteLayout(location));
  if (!layout.StoreExists()) {
    return absl::NotFoundError(absl::StrCat("no store database at ", layout.database().string()));
  }
  // The audit file is created beside an existing store, and takes over the records versions
  // before the split kept in the store's own file.
  return OpenSqliteAuditRepository(layout.audit_database(), /*create=*/true, layout.database());
}

absl::StatusOr<std::unique_ptr<AccessRepository>> OpenAccessRepository(std::string_view location) {
  if (IsPostgresLocation(location)) return OpenPostgresAccessRepository(location);
  BULWARK_ASSIGN_OR_RETURN(const StoreLayout layout, SqliteLayout(location));
  return OpenSqliteAccessRepository(layout.database());
}

absl::StatusOr<std::unique_ptr<GateRepository>> OpenGateRepository(std::string_view location) {
  if (IsPostgresLocation(location)) return OpenPostgresGateRepository(location);
  BULWARK_ASSIGN_OR_RETURN(const StoreLayout layout, SqliteLayout(location));
  return OpenSqliteGateRepository(layout.database());
}

absl::StatusOr<std::unique_ptr<HoneypotRepository>> OpenHoneypotRepository(std::string_view location) {
  if (IsPostgresLocation(location)) return OpenPostgresHoneypotRepository(location);
  BULWARK_ASSIGN_OR_RETURN(const StoreLayout layout, SqliteLayout(location));
  BULWARK_ASSIGN_OR_RETURN(std::unique_ptr<SqliteHoneypotRepository> repository,
                           SqliteHoneypotRepository::Open(layout.database()));
  return std::unique_ptr<HoneypotRepository>(std::move(repository));
}

absl::StatusOr<StorageRepositories> OpenStorage(std::string_view location, bool create) {
  if (IsPostgresLocation(location)) {
    // postgres_store.h's opener: the backend first (it creates the schema), then the others.
    BULWARK_ASSIGN_OR_RETURN(PostgresRepositories pg, OpenPostgresRepositories(location, create));
    StorageRepositories out;
    out.defense_state = pg.backend.get();
    out.entries = std::move(pg.backend);
    out.audit = std::move(pg.audit);
    out.access = std::move(pg.access);
    out.gate = std::move(pg.gates);
    out.honeypot = std::move(pg.honeypots);
    return out;
  }
  // The entries' database first: it creates the file and runs the store's migrations.
  BULWARK_ASSIGN_OR_RETURN(StorageRepositories out, OpenEntryRepositories(location, create));
  BULWARK_ASSIGN_OR_RETURN(out.audit, OpenAuditRepository(location));
  BULWARK_ASSIGN_OR_RETURN(out.access, OpenAccessRepository(location));
  BULWARK_ASSIGN_OR_RETURN(out.gate, OpenGateRepository(location));
  BULWARK_ASSIGN_OR_RETURN(out.honeypot, OpenHoneypotRepository(location));
  return out;
}

}  // namespace bulwark
