// Test helper: runs SQL on a store's SQLite file through a connection of its own, as another
// process (or an attacker with the file) would; a test failure if it does not succeed. The SQL
// runs through storage/sqlite/raw_sql.h, so no test outside src/storage includes the SQLite header.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "storage/sqlite/raw_sql.h"

namespace bulwark::testing {

inline void ExecSql(const std::filesystem::path& db, const std::string& sql) {
  auto file = RawSqlFile::Open(db, /*create=*/true);
  ASSERT_TRUE(file.ok()) << file.status();
  const absl::Status status = (*file)->Exec(sql);
  ASSERT_TRUE(status.ok()) << status;
}

}  // namespace bulwark::testing
