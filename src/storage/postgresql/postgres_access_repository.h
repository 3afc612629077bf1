// The PostgreSQL AccessRepository: tables `principals` and `api_keys` (as the SQLite ones,
// doc/auth.md) in the store's PostgreSQL database, on a connection of its own that a mutex
// serializes. The tables are always made with the signature columns, so upgraded_from_unsigned()
// is false unless the store carries SQLite's upgrade marker (a store copied from an upgraded SQLite
// one, whose rows keep their tags); FinishSigningUpgrade deletes it.
#pragma once

#include <absl/status/statusor.h>

#include <memory>
#include <string_view>

#include "storage/access_repository.h"

namespace bulwark {

// Connects and creates the tables if absent. Unavailable if the server cannot be reached;
// NotFound if the database holds no store (PostgresBackend::Open with create makes one).
[[nodiscard]] absl::StatusOr<std::unique_ptr<AccessRepository>> OpenPostgresAccessRepository(
    std::string_view conninfo);

}  // namespace bulwark
