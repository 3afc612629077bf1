// The SQLite AccessRepository: tables `principals` and `api_keys` in the store's database file
// (bulwark.db), on a connection of its own that a mutex serializes (WAL lets it sit beside the
// entry backend's). Stores made before rows were signed gain the columns `sign_key_id` and `tag`
// when opened (ALTER TABLE; existing rows read as unsigned). Layout: doc/auth.md.
#pragma once

#include <absl/status/statusor.h>

#include <filesystem>
#include <memory>

#include "storage/access_repository.h"

namespace bulwark {

// Opens the tables in the existing database at `db_path`, creating or upgrading them. NotFound if
// there is no file; Unavailable if it cannot be opened; DataLoss if it is not an SQLite database.
[[nodiscard]] absl::StatusOr<std::unique_ptr<AccessRepository>> OpenSqliteAccessRepository(
    const std::filesystem::path& db_path);

}  // namespace bulwark
