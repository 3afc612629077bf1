// Small RAII helpers over the SQLite C API, shared by every component that keeps tables in the
// store's database file (entries, principals, audit).
#pragma once

#include <absl/status/status.h>
#include <absl/status/statusor.h>
#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace bulwark {

// Maps the connection's last error to a status: corruption -> DataLoss, busy/locked/IO/full ->
// Unavailable, constraint violations -> AlreadyExists, anything else -> Internal.
absl::Status SqliteError(sqlite3* db, std::string_view what);

// Opens an existing store database for a component that keeps its own tables there: refuses a
// missing file (NotFound: a typo must not leave a stray database), sets busy_timeout 5 s,
// extended result codes, WAL and synchronous=FULL, then runs `schema`. The caller owns the
// returned handle (sqlite3_close).
absl::StatusOr<sqlite3*> OpenExistingDatabase(const std::filesystem::path& path, const char* schema);

// Runs SQL without results (one or more statements).
absl::Status Exec(sqlite3* db, const char* sql);

// A prepared statement, finalized on destruction. Check status() before use.
class Statement {
 public:
  Statement(sqlite3* db, std::string_view sql);
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  absl::Status status() const { return rc_ == SQLITE_OK ? absl::OkStatus() : SqliteError(db_, "prepare"); }

  void Bind(int i, std::string_view text) {
    sqlite3_bind_text(stmt_, i, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  }
  void Bind(int i, int64_t value) { sqlite3_bind_int64(stmt_, i, value); }
  // A zero-length blob still binds as a blob, not NULL.
  void BindBlob(int i, const void* data, size_t size) {
    sqlite3_bind_blob(stmt_, i, size ? data : "", static_cast<int>(size), SQLITE_TRANSIENT);
  }

  // SQLITE_ROW, SQLITE_DONE or an error code.
  int Step() { return sqlite3_step(stmt_); }
  // Steps a statement that returns no rows; OK on SQLITE_DONE.
  absl::Status Run(std::string_view what) {
    return Step() == SQLITE_DONE ? absl::OkStatus() : SqliteError(db_, what);
  }
  void Reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }

  std::string Text(int col) const { return std::string(TextView(col)); }
  std::string Blob(int col) const { return std::string(BlobView(col)); }
  // The column's bytes in SQLite's buffer: valid until the statement steps, resets or is finalized.
  std::string_view TextView(int col) const;
  std::string_view BlobView(int col) const;
  int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }
  bool IsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  int rc_;
};

// Resets a statement (kept prepared for reuse) when the scope ends, on every path.
class ResetOnExit {
 public:
  explicit ResetOnExit(Statement& st) : st_(st) {}
  ~ResetOnExit() { st_.Reset(); }
  ResetOnExit(const ResetOnExit&) = delete;
  ResetOnExit& operator=(const ResetOnExit&) = delete;

 private:
  Statement& st_;
};

// BEGIN IMMEDIATE ... COMMIT; rolls back on destruction unless committed.
class Transaction {
 public:
  explicit Transaction(sqlite3* db) : db_(db), status_(Exec(db, "BEGIN IMMEDIATE")) {}
  // The same with statements the caller prepared once: `begin` is "BEGIN IMMEDIATE" and `commit`
  // "COMMIT" (parsing the two again cost a single add about 3 us). Both are reset after they run;
  // both must outlive the transaction.
  Transaction(sqlite3* db, Statement& begin, Statement& commit)
      : db_(db), status_(RunAndReset(begin, "begin a write transaction")), commit_(&commit) {}
  ~Transaction() {
    if (status_.ok() && !done_) Exec(db_, "ROLLBACK").IgnoreError();
  }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  const absl::Status& status() const { return status_; }
  absl::Status Commit();

 private:
  static absl::Status RunAndReset(Statement& st, std::string_view what) {
    absl::Status status = st.Run(what);
    st.Reset();
    return status;
  }

  sqlite3* db_;
  absl::Status status_;
  Statement* commit_ = nullptr;  // prepared "COMMIT", or nullptr to parse it
  bool done_ = false;
};

}  // namespace bulwark
