// OpenPostgresRepositories: every repository of a store kept in one PostgreSQL database (issue #17
// point 1), each on a connection of its own: the opener that `bulwark serve --backend
// postgresql://...` and the CLI reach through the storage opener (storage/storage_opener.h,
// OpenStorage for a postgresql:// location), the one place that picks an engine.
#pragma once

#include <absl/status/statusor.h>

#include <memory>
#include <string_view>

#include "storage/access_repository.h"
#include "storage/audit_repository.h"
#include "storage/gate_repository.h"
#include "storage/honeypot_repository.h"
#include "storage/postgresql/postgres_backend.h"

namespace bulwark {

struct PostgresRepositories {
  std::unique_ptr<PostgresBackend> backend;  // entries, history, and the defenses' state
  std::unique_ptr<AccessRepository> access;
  std::unique_ptr<GateRepository> gates;
  std::unique_ptr<HoneypotRepository> honeypots;
  std::unique_ptr<AuditRepository> audit;
};

// True for a PostgreSQL URL ("postgresql://..." or "postgres://..."), the form --backend takes.
bool IsPostgresUrl(std::string_view location);

// Opens every repository of the store in the database named by `conninfo` (a postgresql:// URL or
// a libpq key=value string), creating the store's tables if `create`. Errors as
// PostgresBackend::Open; a repository that cannot open fails the whole call (and closes the
// others).
[[nodiscard]] absl::StatusOr<PostgresRepositories> OpenPostgresRepositories(std::string_view conninfo,
                                                                            bool create);

}  // namespace bulwark
