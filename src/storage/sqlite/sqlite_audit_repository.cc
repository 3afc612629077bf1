// SQLite AuditRepository (see sqlite_audit_repository.h): the SQL of the audit log.
#include "storage/sqlite/sqlite_audit_repository.h"

#include <absl/strings/str_cat.h>
#include <absl/synchronization/mutex.h>
#include <sqlite3.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "core/status_macros.h"
#include "storage/sqlite/sqlite_util.h"

namespace bulwark {
namespace {

// PRAGMA user_version of audit.db. 0: made before the file had a version (the table may lack
// key_id and tag); 2: key_id and tag, indexes. (1 is skipped so that the numbers match the
// store's history of "signature columns added".)
constexpr int kAuditSchemaVersion = 2;

constexpr char kAuditSchema[] = R"sql(
CREATE TABLE IF NOT EXISTS audit(
  seq          INTEGER PRIMARY KEY AUTOINCREMENT,
  at_us        INTEGER NOT NULL,
  principal    TEXT NOT NULL,
  session      TEXT NOT NULL,
  namespace    TEXT NOT NULL,
  operation    TEXT NOT NULL,
  query_hash   TEXT NOT NULL,
  returned_ids TEXT NOT NULL,
  detail       TEXT NOT NULL,
  key_id       INTEGER NOT NULL DEFAULT 0,
  tag          BLOB
);
CREATE INDEX IF NOT EXISTS audit_by_principal ON audit(principal, seq);
CREATE INDEX IF NOT EXISTS audit_by_session ON audit(session, seq);
CREATE INDEX IF NOT EXISTS audit_by_namespace ON audit(namespace, seq);
CREATE INDEX IF NOT EXISTS audit_by_time ON audit(at_us);
)sql";

constexpr char kAuditColumns[] =
    "seq, at_us, principal, session, namespace, operation, query_hash, returned_ids, detail, key_id, tag";

AuditRow DecodeAuditRow(const Statement& st) {
  AuditRow r;
  r.seq = st.Int(0);
  r.at_us = st.Int(1);
  r.principal = st.Text(2);
  r.session = st.Text(3);
  r.name_space = st.Text(4);
  r.operation = st.Text(5);
  r.query_hash = st.Text(6);
  r.returned_ids = st.Text(7);
  r.detail = st.Text(8);
  const int64_t key_id = st.Int(9);
  r.key_id = key_id >= 0 && key_id <= UINT32_MAX ? static_cast<uint32_t>(key_id) : 0;  // 0 never verifies
  if (!st.IsNull(10)) r.tag = st.Blob(10);
  return r;
}

// Logs created before records were signed lack key_id and tag: add them (NULL tag = unsigned).
absl::Status AddAuditSigningColumns(sqlite3* db) {
  Statement info(db, "SELECT 1 FROM pragma_table_info('audit') WHERE name = 'tag'");
  if (auto s = info.status(); !s.ok()) return s;
  const int rc = info.Step();
  if (rc == SQLITE_ROW) return absl::OkStatus();
  if (rc != SQLITE_DONE) return SqliteError(db, "read the audit table's columns");
  return Exec(db,
              "ALTER TABLE audit ADD COLUMN key_id INTEGER NOT NULL DEFAULT 0; "
              "ALTER TABLE audit ADD COLUMN tag BLOB");
}

// `id` as a JSON string (compact; invalid UTF-8 replaced, as the audit log writes it).
std::string JsonQuotedId(const std::string& id) {
  return nlohmann::json(id).dump(-1, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
}

absl::StatusOr<int64_t> AuditUserVersion(sqlite3* db) {
  Statement st(db, "PRAGMA user_version");
  if (auto s = st.status(); !s.ok()) return s;
  if (st.Step() != SQLITE_ROW) return SqliteError(db, "read the audit schema version");
  return st.Int(0);
}

class SqliteAuditRepository : public AuditRepository {
 public:
  SqliteAuditRepository(sqlite3* db, std::filesystem::path path, std::filesystem::path legacy)
      : db_(db), path_(std::move(path)), legacy_(std::move(legacy)) {}
  ~SqliteAuditRepository() override {
    // sqlite3_close refuses to close a connection with unfinalized statements.
    for (auto* slot : {&begin_, &commit_, &newest_, &insert_}) slot->reset();
    sqlite3_close(db_);
  }

  absl::Status Append(const BuildBatch& build) override {
    absl::MutexLock lock(&mu_);
    // Every batch runs the same four statements: prepared once (parsing them cost a single add's
    // batch about 4 us).
    BULWARK_ASSIGN_OR_RETURN(Statement * begin, Cached(begin_, "BEGIN IMMEDIATE"));
    BULWARK_ASSIGN_OR_RETURN(Statement * commit, Cached(commit_, "COMMIT"));
    Transaction txn(db_, *begin, *commit);
    if (!txn.status().ok()) return txn.status();
    absl::StatusOr<AuditHead> head = HeadLocked();
    if (!head.ok()) return head.status();
    absl::StatusOr<std::vector<AuditRow>> rows = build(*head);
    if (!rows.ok()) return rows.status();
    BULWARK_ASSIGN_OR_RETURN(Statement * insert,
                             Cached(insert_, absl::StrCat("INSERT INTO audit(", kAuditColumns,
                                                          ") VALUES(?,?,?,?,?,?,?,?,?,?,?)")));
    Statement& st = *insert;
    ResetOnExit reset(st);
    int64_t last = head->seq;
    for (const AuditRow& r : *rows) {
      if (r.seq != 0) {
        if (r.seq <= last) return absl::AlreadyExistsError(absl::StrCat("audit seq ", r.seq, " is taken"));
        st.Bind(1, r.seq);
        last = r.seq;
      }
      st.Bind(2, r.at_us);
      st.Bind(3, r.principal);
      st.Bind(4, r.session);
      st.Bind(5, r.name_space);
      st.Bind(6, r.operation);
      st.Bind(7, r.query_hash);
      st.Bind(8, r.returned_ids);
      st.Bind(9, r.detail);
      st.Bind(10, static_cast<int64_t>(r.key_id));
      if (r.tag) st.BindBlob(11, r.tag->data(), r.tag->size());
      if (auto s = st.Run("insert audit record"); !s.ok()) return s;
      if (r.seq == 0) last = sqlite3_last_insert_rowid(db_);
      st.Reset();
    }
    return txn.Commit();
  }

  absl::StatusOr<AuditHead> Head() override {
    absl::MutexLock lock(&mu_);
    return HeadLocked();
  }

  absl::StatusOr<std::vector<AuditRow>> Query(const AuditFilter& filter) override {
    if (filter.limit < 1 || filter.limit > kMaxQueryLimit) {
      return absl::InvalidArgumentError(absl::StrCat("limit must be 1 to ", kMaxQueryLimit));
    }
    std::string sql = absl::StrCat("SELECT ", kAuditColumns, " FROM audit WHERE 1");
    std::vector<std::string> texts;  // bound in order, then since_us, then limit
    auto match = [&](const std::optional<std::string>& value, const char* column) {
      if (!value) return;
      absl::StrAppend(&sql, " AND ", column, " = ?");
      texts.push_back(*value);
    };
    match(filter.principal, "principal");
    match(filter.session, "session");
    match(filter.name_space, "namespace");
    if (filter.entry_id) {
      // instr() on the JSON-quoted id is a cheap pre-filter; json_each then compares whole
      // elements, so "A1" does not match a record that returned only "A10". CASE keeps json_each
      // away from a row whose JSON is damaged.
      sql +=
          " AND instr(returned_ids, ?) > 0 AND CASE WHEN json_valid(returned_ids) THEN "
          "EXISTS(SELECT 1 FROM json_each(audit.returned_ids) AS e WHERE e.type = 'text' AND e.value = ?) "
          "ELSE 0 END";
      texts.push_back(JsonQuotedId(*filter.entry_id));
      texts.push_back(*filter.entry_id);
    }
    if (filter.since_us != 0) sql += " AND at_us >= ?";
    sql += " ORDER BY seq DESC LIMIT ?";
    absl::MutexLock lock(&mu_);
    Statement st(db_, sql);
    if (auto s = st.status(); !s.ok()) return s;
    int i = 1;
    for (const std::string& text : texts) st.Bind(i++, text);
    if (filter.since_us != 0) st.Bind(i++, filter.since_us);
    st.Bind(i++, static_cast<int64_t>(filter.limit));
    std::vector<AuditRow> out;
    int rc;
    while ((rc = st.Step()) == SQLITE_ROW) out.push_back(DecodeAuditRow(st));
    if (rc != SQLITE_DONE) return SqliteError(db_, "query audit log");
    return out;
  }

  // Through a read-only connection of its own: one snapshot of the WAL database, and the writer
  // keeps committing meanwhile.
  absl::Status Scan(const std::function<absl::Status(const AuditRow&)>& visit) override {
    sqlite3* reader = nullptr;
    if (sqlite3_open_v2(path_.c_str(), &reader, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
      sqlite3_close(reader);
      return absl::UnavailableError(absl::StrCat("cannot open ", path_.string(), " to read it"));
    }
    sqlite3_busy_timeout(reader, 5000);
    absl::Status status = [&]() -> absl::Status {
      Statement st(reader, absl::StrCat("SELECT ", kAuditColumns, " FROM audit ORDER BY seq"));
      if (auto s = st.status(); !s.ok()) return s;
      int rc;
      while ((rc = st.Step()) == SQLITE_ROW) {
        if (auto s = visit(DecodeAuditRow(st)); !s.ok()) return s;
      }
      return rc == SQLITE_DONE ? absl::OkStatus() : SqliteError(reader, "read the audit log");
    }();
    sqlite3_close(reader);
    return status;
  }

  absl::Status Upgrade() override {
    absl::MutexLock lock(&mu_);
    absl::StatusOr<int64_t> version = AuditUserVersion(db_);
    if (!version.ok()) return version.status();
    if (*version > kAuditSchemaVersion) {
      return absl::FailedPreconditionError(absl::StrCat(path_.string(), " has audit schema version ",
                                                        *version, "; this build knows up to ",
                                                        kAuditSchemaVersion));
    }
    {
      // Every open, not only below the version: cheap, and a table dropped by hand comes back.
      Transaction txn(db_);
      if (!txn.status().ok()) return txn.status();
      if (auto s = Exec(db_, kAuditSchema); !s.ok()) return s;
      if (auto s = AddAuditSigningColumns(db_); !s.ok()) return s;
      if (*version < kAuditSchemaVersion) {
        const std::string set_version = absl::StrCat("PRAGMA user_version = ", kAuditSchemaVersion);
        if (auto s = Exec(db_, set_version.c_str()); !s.ok()) return s;
      }
      if (auto s = txn.Commit(); !s.ok()) return s;
    }
    if (legacy_.empty()) return absl::OkStatus();
    if (auto s = MoveLegacyRecords(); !s.ok()) {
      return absl::Status(s.code(),
                          absl::StrCat("moving audit records out of ", legacy_.string(), ": ", s.message()));
    }
    return absl::OkStatus();
  }

 private:
  // The statement cached in `slot`, prepared from `sql` on first use. Requires mu_.
  absl::StatusOr<Statement*> Cached(std::unique_ptr<Statement>& slot, std::string_view sql)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (slot == nullptr) {
      auto prepared = std::make_unique<Statement>(db_, sql);
      BULWARK_RETURN_IF_ERROR(prepared->status());
      slot = std::move(prepared);
    }
    return slot.get();
  }

  absl::StatusOr<AuditHead> HeadLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    BULWARK_ASSIGN_OR_RETURN(Statement * cached,
                             Cached(newest_, "SELECT seq, tag FROM audit ORDER BY seq DESC LIMIT 1"));
    Statement& last = *cached;
    ResetOnExit reset(last);
    AuditHead head;
    const int rc = last.Step();
    if (rc == SQLITE_ROW) {
      head.seq = last.Int(0);
      if (!last.IsNull(1)) head.tag = last.Blob(1);
    } else if (rc != SQLITE_DONE) {
      return SqliteError(db_, "read the newest audit record");
    }
    return head;
  }

  // Copies the records of table `audit` in the store database (where earlier versions kept the log)
  // into this file under their own seq numbers, then drops that table. Idempotent: a record already
  // here is skipped, so a crash between the two steps only repeats the copy on the next open.
  // Requires mu_.
  absl::Status MoveLegacyRecords() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    {
      Statement attach(db_, "ATTACH DATABASE ? AS legacy");
      if (auto s = attach.status(); !s.ok()) return s;
      attach.Bind(1, legacy_.string());
      if (auto s = attach.Run("attach the store database"); !s.ok()) return s;
    }
    absl::Status status = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) -> absl::Status {
      Statement probe(db_, "SELECT 1 FROM legacy.sqlite_master WHERE type = 'table' AND name = 'audit'");
      if (auto s = probe.status(); !s.ok()) return s;
      const int rc = probe.Step();
      if (rc == SQLITE_DONE) return absl::OkStatus();
      if (rc != SQLITE_ROW) return SqliteError(db_, "look for audit records in the store database");
      probe.Reset();
      if (auto s =
              Exec(db_,
                   "INSERT OR IGNORE INTO main.audit(seq, at_us, principal, session, namespace, operation, "
                   "query_hash, returned_ids, detail) SELECT seq, at_us, principal, session, namespace, "
                   "operation, query_hash, returned_ids, detail FROM legacy.audit");
          !s.ok()) {
        return s;
      }
      return Exec(db_, "DROP TABLE legacy.audit");
    }();
    const absl::Status detached = Exec(db_, "DETACH DATABASE legacy");
    return status.ok() ? detached : status;
  }

  absl::Mutex mu_;  // serializes all use of db_
  sqlite3* db_ ABSL_GUARDED_BY(mu_);
  // Append's statements, prepared once; finalized before db_ is closed.
  std::unique_ptr<Statement> begin_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<Statement> commit_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<Statement> newest_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<Statement> insert_ ABSL_GUARDED_BY(mu_);
  const std::filesystem::path path_;
  const std::filesystem::path legacy_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<AuditRepository>> OpenSqliteAuditRepository(
    const std::filesystem::path& path, bool create, const std::filesystem::path& legacy_store_db) {
  std::error_code ec;
  if (create && !std::filesystem::exists(path, ec)) {
    sqlite3* created = nullptr;
    const int rc =
        sqlite3_open_v2(path.c_str(), &created, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
    sqlite3_close(created);
    if (rc != SQLITE_OK) return absl::UnavailableError(absl::StrCat("cannot create ", path.string()));
  }
  // The schema is applied by Upgrade, under its version check.
  auto db = OpenExistingDatabase(path, "");
  if (!db.ok()) return db.status();
  auto repository = std::make_unique<SqliteAuditRepository>(*db, path, legacy_store_db);
  if (auto s = repository->Upgrade(); !s.ok()) return s;
  return std::unique_ptr<AuditRepository>(std::move(repository));
}

}  // namespace bulwark
