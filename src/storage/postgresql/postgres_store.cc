// OpenPostgresRepositories (see postgres_store.h).
#include "storage/postgresql/postgres_store.h"

#include <absl/strings/match.h>

#include "core/status_macros.h"
#include "core/strings.h"
#include "storage/postgresql/postgres_access_repository.h"
#include "storage/postgresql/postgres_audit_repository.h"
#include "storage/postgresql/postgres_gate_repository.h"
#include "storage/postgresql/postgres_honeypot_repository.h"

namespace bulwark {

bool IsPostgresUrl(std::string_view location) {
  return absl::StartsWith(ToAbsl(location), "postgresql://") ||
         absl::StartsWith(ToAbsl(location), "postgres://");
}

absl::StatusOr<PostgresRepositories> OpenPostgresRepositories(std::string_view conninfo, bool create) {
  PostgresRepositories repos;
  BULWARK_ASSIGN_OR_RETURN(repos.backend, PostgresBackend::Open(conninfo, create));
  BULWARK_ASSIGN_OR_RETURN(repos.access, OpenPostgresAccessRepository(conninfo));
  BULWARK_ASSIGN_OR_RETURN(repos.gates, OpenPostgresGateRepository(conninfo));
  BULWARK_ASSIGN_OR_RETURN(repos.honeypots, OpenPostgresHoneypotRepository(conninfo));
  BULWARK_ASSIGN_OR_RETURN(repos.audit, OpenPostgresAuditRepository(conninfo));
  return repos;
}

}  // namespace bulwark
