// SQLite GateRepository (see sqlite_gate_repository.h): the SQL of the query gates' store.
#include "storage/sqlite_gate_repository.h"

#include <absl/strings/str_cat.h>
#include <sqlite3.h>

#include <mutex>

#include "storage/sqlite_schema.h"
#include "storage/sqlite_util.h"

namespace bulwark {
namespace {

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

  absl::Status FinishSigningUpgrade() override {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto s = DeleteMeta(db_, kUnsignedGateMarker); !s.ok()) return s;
    upgraded_ = false;
    return absl::OkStatus();
  }

 private:
  std::mutex mu_;  // serializes all use of db_
  sqlite3* db_;
  bool upgraded_;  // guarded by mu_ after construction
};

}  // namespace

absl::StatusOr<std::unique_ptr<GateRepository>> OpenSqliteGateRepository(
    const std::filesystem::path& db_path) {
  auto db = OpenStoreDatabase(db_path);
  if (!db.ok()) return db.status();
  absl::StatusOr<bool> upgraded = HasMeta(*db, kUnsignedGateMarker);
  if (!upgraded.ok()) {
    sqlite3_close(*db);
    return upgraded.status();
  }
  return std::unique_ptr<GateRepository>(new SqliteGateRepository(*db, *upgraded));
}

}  // namespace bulwark
