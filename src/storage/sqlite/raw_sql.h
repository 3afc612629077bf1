// RawSqlFile: direct SQL on a store's SQLite file, past every repository and every check -- what
// someone who holds the file can do. For tests that tamper with a store (testing/exec_sql.h) and
// for the red team's unsigned writer (attack/unsigned_injection.h), so that nothing outside
// src/storage includes sqlite3.h. The product's own reads and writes never use it: they go
// through the repositories of storage_opener.h.
#pragma once

#include <absl/status/status.h>
#include <absl/status/statusor.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

struct sqlite3;

namespace bulwark {

// A bound parameter: an integer, a text or a blob.
struct SqlParam {
  static SqlParam Int(int64_t v) { return {v, false}; }
  static SqlParam Text(std::string_view v) { return {std::string(v), false}; }
  static SqlParam Blob(std::string_view v) { return {std::string(v), true}; }
  std::variant<int64_t, std::string> value;
  bool blob = false;
};

// A column value: NULL, an integer, a real, or the bytes of a text or blob.
using SqlValue = std::variant<std::monostate, int64_t, double, std::string>;
// The integer (0 unless the value is one) and the bytes (empty unless text or blob) of a value.
int64_t SqlInt(const SqlValue& value);
std::string SqlBytes(const SqlValue& value);

class RawSqlFile {
 public:
  // Opens the file at `path` read-write (busy timeout 5 s), creating an empty database there with
  // `create`. NotFound if there is none and !create; Unavailable if it cannot be opened.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<RawSqlFile>> Open(const std::filesystem::path& path,
                                                                        bool create = false);
  ~RawSqlFile();
  RawSqlFile(const RawSqlFile&) = delete;
  RawSqlFile& operator=(const RawSqlFile&) = delete;

  // Runs one or more statements without results. Internal (with SQLite's message) on failure.
  [[nodiscard]] absl::Status Exec(const std::string& sql);
  // Runs one statement with `params` bound to ?1, ?2, ... and returns its rows.
  [[nodiscard]] absl::StatusOr<std::vector<std::vector<SqlValue>>> Query(
      std::string_view sql, std::span<const SqlParam> params = {});
  // The row id of the last row this connection inserted.
  int64_t last_insert_rowid() const;

 private:
  explicit RawSqlFile(sqlite3* db) : db_(db) {}
  sqlite3* db_;
};

}  // namespace bulwark
