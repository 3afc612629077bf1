// The PostgreSQL GateRepository: table `query_gates` (as the SQLite one, doc/gate_format.md) in
// the store's PostgreSQL database, on a connection of its own that a mutex serializes. The table
// is always made with the signature columns, so upgraded_from_unsigned() is false.
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
