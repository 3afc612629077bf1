// SQLite GateRepository (see sqlite_gate_repository.h): the SQL of the query gates' store.
#include "storage/sqlite_gate_repository.h"

#include <absl/strings/str_cat.h>
#include <sqlite3.h>

#include <mutex>

#include "storage/sqlite_util.h"

namespace bulwark {
namespace {

constexpr char kGateSchema[] = R"sql(
CREATE TABLE IF NOT EXISTS query_gates(
  namespace    TEXT PRIMARY KEY,
  mode         TEXT NOT NULL,
  embedder     TEXT NOT NULL,
  fitted_at_us INTEGER NOT NULL,
  source       TEXT NOT NULL,
  model        BLOB NOT NULL,
  sign_key_id  INTEGER NOT NULL DEFAULT 0,
  tag          BLOB NOT NULL DEFAULT x''
);
)sql";

constexpr char kGateColumns[] = "namespace, mode, embedder, fitted_at_us, source, model, sign_key_id, tag";

GateRow DecodeGateRow(const Statement& st) {
  return GateRow{
      st.Text(0), st.Text(1), st.Text(2), st.Int(3), st.Text(4), st.Blob(5), static_cast<uint32_t>(st.Int(6)),
      st.Blob(7)};
}

class SqliteGateRepository : public GateRepository {
 public:
  SqliteGateRepository(sqlite3* db, bool upgraded) : db_(db), upgraded_(upgraded) {}
  ~SqliteGateRepository() override { sqlite3_close(db_); }

  absl::Status Save(const GateRow& row) override {
    std::lock_guard<std::mutex> lock(mu_);
    Statement st(db_, absl::StrCat("INSERT OR REPLACE INTO query_gates(", kGateColumns,
                                   ") VALUES (?, ?, ?, ?, ?, ?, ?, ?)"));
    if (auto s = st.status(); !s.ok()) return s;
    st.Bind(1, row.name_space);
    st.Bind(2, row.mode);
    st.Bind(3, row.embedder);
    st.Bind(4, row.fitted_at_us);
    st.Bind(5, row.source);
    st.BindBlob(6, row.model.data(), row.model.size());
    st.Bind(7, int64_t{row.sign_key_id});
    st.BindBlob(8, row.tag.data(), row.tag.size());
    return st.Run("save query gate");
  }

  absl::StatusOr<std::optional<GateRow>> Find(std::string_view name_space) override {
    std::lock_guard<std::mutex> lock(mu_);
    Statement st(db_, absl::StrCat("SELECT ", kGateColumns, " FROM query_gates WHERE namespace = ?"));
    if (auto s = st.status(); !s.ok()) return s;
    st.Bind(1, name_space);
    const int rc = st.Step();
    if (rc == SQLITE_DONE) return std::optional<GateRow>();
    if (rc != SQLITE_ROW) return SqliteError(db_, "load query gate");
    return std::optional<GateRow>(DecodeGateRow(st));
  }

  absl::StatusOr<std::vector<GateRow>> List() override {
    std::lock_guard<std::mutex> lock(mu_);
    Statement st(db_, absl::StrCat("SELECT ", kGateColumns, " FROM query_gates ORDER BY namespace"));
    if (auto s = st.status(); !s.ok()) return s;
    std::vector<GateRow> out;
    int rc;
    while ((rc = st.Step()) == SQLITE_ROW) out.push_back(DecodeGateRow(st));
    if (rc != SQLITE_DONE) return SqliteError(db_, "list query gates");
    return out;
  }

  absl::Status Remove(std::string_view name_space) override {
    std::lock_guard<std::mutex> lock(mu_);
    Statement st(db_, "DELETE FROM query_gates WHERE namespace = ?");
    if (auto s = st.status(); !s.ok()) return s;
    st.Bind(1, name_space);
    if (auto s = st.Run("remove query gate"); !s.ok()) return s;
    if (sqlite3_changes(db_) == 0) {
      return absl::NotFoundError(absl::StrCat("no query gate for namespace ", std::string(name_space)));
    }
    return absl::OkStatus();
  }

  bool upgraded_from_unsigned() const override { return upgraded_; }

 private:
  std::mutex mu_;  // serializes all use of db_
  sqlite3* db_;
  const bool upgraded_;
};

// Adds the signature columns to a table made before rows were signed; true if it did.
absl::StatusOr<bool> AddSignatureColumns(sqlite3* db) {
  Transaction txn(db);
  if (!txn.status().ok()) return txn.status();
  {
    Statement info(db, "SELECT count(*) FROM pragma_table_info('query_gates') WHERE name = 'tag'");
    if (auto s = info.status(); !s.ok()) return s;
    if (info.Step() != SQLITE_ROW) return SqliteError(db, "read table layout");
    if (info.Int(0) > 0) return false;
  }
  if (auto s = Exec(db,
                    "ALTER TABLE query_gates ADD COLUMN sign_key_id INTEGER NOT NULL DEFAULT 0; "
                    "ALTER TABLE query_gates ADD COLUMN tag BLOB NOT NULL DEFAULT x''");
      !s.ok()) {
    return s;
  }
  if (auto s = txn.Commit(); !s.ok()) return s;
  return true;
}

}  // namespace

absl::StatusOr<std::unique_ptr<GateRepository>> OpenSqliteGateRepository(
    const std::filesystem::path& db_path) {
  auto db = OpenExistingDatabase(db_path, kGateSchema);
  if (!db.ok()) return db.status();
  absl::StatusOr<bool> upgraded = AddSignatureColumns(*db);
  if (!upgraded.ok()) {
    sqlite3_close(*db);
    return upgraded.status();
  }
  return std::unique_ptr<GateRepository>(new SqliteGateRepository(*db, *upgraded));
}

}  // namespace bulwark
