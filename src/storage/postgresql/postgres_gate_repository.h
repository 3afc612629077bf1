// The PostgreSQL GateRepository: table `query_gates` (as the SQLite one, doc/gate_format.md) in
// the store's PostgreSQL database, on a connection of its own that a mutex serializes. The table
// is always made with the signature columns, so upgraded_from_unsigned() is false unless the store
// carries SQLite's upgrade marker. The signed manifest of the namespaces with a gate is the meta
// row SQLite's is, with the same JSON; a new store is marked manifest_pending (PostgresBackend
// makes it so), as a new SQLite store is. Save, Remove and WriteManifest lock `query_gates`
// against other writers (SHARE ROW EXCLUSIVE: readers go on) so that the manifest each writes
// names every committed row.
#pragma once

#include <absl/status/statusor.h>

#include <memory>
#include <string_view>

#include "storage/gate_repository.h"

namespace bulwark {

// Connects and creates the table if absent. Unavailable if the server cannot be reached;
// NotFound if the database holds no store.
[[nodiscard]] absl::StatusOr<std::unique_ptr<GateRepository>> OpenPostgresGateRepository(
    std::string_view conninfo);

}  // namespace bulwark
