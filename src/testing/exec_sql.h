// Test helper: runs SQL on a store's SQLite file through a connection of its own, as another
// process (or an attacker with the file) would; a test failure if it does not succeed.
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <string>

namespace bulwark::testing {

inline void ExecSql(const std::filesystem::path& db, const std::string& sql) {
  sqlite3* handle = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &handle), SQLITE_OK);
  sqlite3_busy_timeout(handle, 5000);
  char* error = nullptr;
  const int rc = sqlite3_exec(handle, sql.c_str(), nullptr, nullptr, &error);
  const std::string message = error ? error : "";
  sqlite3_free(error);
  sqlite3_close(handle);
  ASSERT_EQ(rc, SQLITE_OK) << message << " in " << sql;
}

}  // namespace bulwark::testing
