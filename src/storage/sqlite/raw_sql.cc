// RawSqlFile (see raw_sql.h).
#include "storage/sqlite/raw_sql.h"

#include <absl/strings/str_cat.h>
#include <sqlite3.h>

namespace bulwark {

int64_t SqlInt(const SqlValue& value) {
  const int64_t* v = std::get_if<int64_t>(&value);
  return v ? *v : 0;
}

std::string SqlBytes(const SqlValue& value) {
  const std::string* v = std::get_if<std::string>(&value);
  return v ? *v : std::string();
}

absl::StatusOr<std::unique_ptr<RawSqlFile>> RawSqlFile::Open(const std::filesystem::path& path, bool create) {
  std::error_code ec;
  if (!create && !std::filesystem::exists(path, ec)) {
    return absl::NotFoundError(absl::StrCat("no file at ", path.string()));
  }
  sqlite3* db = nullptr;
  const int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);
  if (sqlite3_open_v2(path.c_str(), &db, flags, nullptr) != SQLITE_OK) {
    sqlite3_close(db);
    return absl::UnavailableError(absl::StrCat("cannot open ", path.string()));
  }
  sqlite3_busy_timeout(db, 5000);
  return std::unique_ptr<RawSqlFile>(new RawSqlFile(db));
}

RawSqlFile::~RawSqlFile() { sqlite3_close(db_); }

absl::Status RawSqlFile::Exec(const std::string& sql) {
  char* error = nullptr;
  const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error);
  const std::string message = error ? error : "";
  sqlite3_free(error);
  if (rc != SQLITE_OK) return absl::InternalError(absl::StrCat(message, " in ", sql));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::vector<SqlValue>>> RawSqlFile::Query(std::string_view sql,
                                                                     std::span<const SqlParam> params) {
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &st, nullptr) != SQLITE_OK) {
    sqlite3_finalize(st);
    return absl::InternalError(absl::StrCat("prepare: ", sqlite3_errmsg(db_)));
  }
  for (size_t i = 0; i < params.size(); ++i) {
    const int index = static_cast<int>(i) + 1;
    if (const int64_t* v = std::get_if<int64_t>(&params[i].value)) {
      sqlite3_bind_int64(st, index, *v);
      continue;
    }
    const std::string& bytes = std::get<std::string>(params[i].value);
    if (params[i].blob) {
      sqlite3_bind_blob(st, index, bytes.empty() ? "" : bytes.data(), static_cast<int>(bytes.size()),
                        SQLITE_TRANSIENT);
    } else {
      sqlite3_bind_text(st, index, bytes.data(), static_cast<int>(bytes.size()), SQLITE_TRANSIENT);
    }
  }
  std::vector<std::vector<SqlValue>> rows;
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    std::vector<SqlValue>& row = rows.emplace_back();
    for (int c = 0; c < sqlite3_column_count(st); ++c) {
      switch (sqlite3_column_type(st, c)) {
        case SQLITE_INTEGER:
          row.emplace_back(static_cast<int64_t>(sqlite3_column_int64(st, c)));
          break;
        case SQLITE_FLOAT:
          row.emplace_back(sqlite3_column_double(st, c));
          break;
        case SQLITE_NULL:
          row.emplace_back(std::monostate());
          break;
        default: {
          const void* p = sqlite3_column_blob(st, c);
          const int n = sqlite3_column_bytes(st, c);
          row.emplace_back(p ? std::string(static_cast<const char*>(p), static_cast<size_t>(n))
                             : std::string());
        }
      }
    }
  }
  absl::Status status =
      rc == SQLITE_DONE ? absl::OkStatus() : absl::InternalError(absl::StrCat("step: ", sqlite3_errmsg(db_)));
  sqlite3_finalize(st);
  if (!status.ok()) return status;
  return rows;
}

int64_t RawSqlFile::last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }

}  // namespace bulwark
