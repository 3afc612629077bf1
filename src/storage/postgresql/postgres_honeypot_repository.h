// The PostgreSQL HoneypotRepository: tables honeypot_runs, honeypot_blocks and honeypot_settings
// (as the SQLite ones, doc/store_format.md) in the store's PostgreSQL database, on a connection of
// its own that a mutex serializes. Same limits and errors as SqliteHoneypotRepository.
#pragma once

#include <absl/status/statusor.h>

#include <memory>
#include <string_view>

#include "storage/honeypot_repository.h"

namespace bulwark {

// Connects and creates the tables if absent. Unavailable if the server cannot be reached;
// NotFound if the database holds no store.
[[nodiscard]] absl::StatusOr<std::unique_ptr<HoneypotRepository>> OpenPostgresHoneypotRepository(
    std::string_view conninfo);

}  // namespace bulwark
