// The SQLite GateRepository: table `query_gates` in the store's database (doc/gate_format.md), on
// a connection of its own that a mutex serializes. A table made before rows were signed gains the
// columns `sign_key_id` and `tag` when opened.
#pragma once

#include <absl/status/statusor.h>

#include <filesystem>
#include <memory>

#include "storage/gate_repository.h"

namespace bulwark {

// NotFound if there is no database file at `db_path`; Unavailable / DataLoss as
// OpenExistingDatabase (storage/sqlite/sqlite_util.h).
[[nodiscard]] absl::StatusOr<std::unique_ptr<GateRepository>> OpenSqliteGateRepository(
    const std::filesystem::path& db_path);

}  // namespace bulwark
