#include "storage/sqlite/sqlite_util.h"

#include <absl/strings/str_cat.h>

#include "core/strings.h"

namespace bulwark {

absl::Status SqliteError(sqlite3* db, std::string_view what) {
  std::string message = absl::StrCat(ToAbsl(what), ": ", sqlite3_errmsg(db));
  switch (sqlite3_errcode(db) & 0xff) {
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return absl::DataLossError(message);
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_IOERR:
    case SQLITE_FULL:
      return absl::UnavailableError(message);
    case SQLITE_CONSTRAINT:
      return absl::AlreadyExistsError(message);
    default:
      return absl::InternalError(message);
  }
}

absl::Status Exec(sqlite3* db, const char* sql) {
  if (sqlite3_exec(db, sql, nullptr, nullptr, nullptr) != SQLITE_OK) return SqliteError(db, sql);
  return absl::OkStatus();
}

absl::StatusOr<sqlite3*> OpenExistingDatabase(const std::filesystem::path& path, const char* schema) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return absl::NotFoundError(absl::StrCat("no store database at ", path.string()));
  }
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
    absl::Status status = absl::UnavailableError(
        absl::StrCat("cannot open ", path.string(), ": ", db ? sqlite3_errmsg(db) : "out of memory"));
    sqlite3_close(db);
    return status;
  }
  sqlite3_busy_timeout(db, 5000);
  sqlite3_extended_result_codes(db, 1);
  absl::Status status = Exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;");
  if (!status.ok()) {
    status = absl::DataLossError(
        absl::StrCat(path.string(), " is not a usable SQLite database: ", status.message()));
  } else {
    status = Exec(db, schema);
  }
  if (!status.ok()) {
    sqlite3_close(db);
    return status;
  }
  return db;
}

Statement::Statement(sqlite3* db, std::string_view sql) : db_(db) {
  rc_ = sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr);
}

std::string_view Statement::TextView(int col) const {
  const auto* p = sqlite3_column_text(stmt_, col);
  return p ? std::string_view(reinterpret_cast<const char*>(p),
                              static_cast<size_t>(sqlite3_column_bytes(stmt_, col)))
           : std::string_view();
}

std::string_view Statement::BlobView(int col) const {
  const void* p = sqlite3_column_blob(stmt_, col);
  return p ? std::string_view(static_cast<const char*>(p),
                              static_cast<size_t>(sqlite3_column_bytes(stmt_, col)))
           : std::string_view();
}

absl::Status Transaction::Commit() {
  done_ = true;
  absl::Status status = commit_ != nullptr ? RunAndReset(*commit_, "commit") : Exec(db_, "COMMIT");
  if (!status.ok()) Exec(db_, "ROLLBACK").IgnoreError();
  return status;
}

}  // namespace bulwark
