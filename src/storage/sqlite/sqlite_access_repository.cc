// SQLite AccessRepository (see sqlite_access_repository.h): the SQL of the principal registry.
#include "storage/sqlite/sqlite_access_repository.h"

#include <absl/strings/str_cat.h>
#include <absl/synchronization/mutex.h>
#include <sqlite3.h>

#include "storage/sqlite/sqlite_schema.h"
#include "storage/sqlite/sqlite_util.h"

namespace bulwark {
namespace {

constexpr char kPrincipalColumns[] = "name, role, namespaces, revoked, created_at_us, sign_key_id, tag";
constexpr char kKeyColumns[] = "key_id, principal, secret_sha256, created_at_us, revoked, sign_key_id, tag";

PrincipalRow DecodePrincipalRow(const Statement& st) {
  return PrincipalRow{st.Text(0),     st.Text(1), st.Text(2),
                      st.Int(3) != 0, st.Int(4),  static_cast<uint32_t>(st.Int(5)),
                      st.Blob(6)};
}

ApiKeyRow DecodeKeyRow(const Statement& st) {
  return ApiKeyRow{st.Text(0), st.Text(1),     st.Text(2),
                   st.Int(3),  st.Int(4) != 0, static_cast<uint32_t>(st.Int(5)),
                   st.Blob(6)};
}

class SqliteAccessRepository : public AccessRepository {
 public:
  explicit SqliteAccessRepository(sqlite3* db) : db_(db) {}
  ~SqliteAccessRepository() override { sqlite3_close(db_); }

  bool upgraded_from_unsigned() const override {
    absl::MutexLock lock(&mu_);
    return upgraded_;
  }
  void set_upgraded() {
    absl::MutexLock lock(&mu_);
    upgraded_ = true;
  }

  absl::Status FinishSigningUpgrade() override {
    absl::MutexLock lock(&mu_);
    if (auto s = DeleteMeta(db_, kUnsignedAccessMarker); !s.ok()) return s;
    upgraded_ = false;
    return absl::OkStatus();
  }

  absl::Status InsertPrincipal(const PrincipalRow& row) override {
    absl::MutexLock lock(&mu_);
    Statement st(db_,
                 absl::StrCat("INSERT INTO principals(", kPrincipalColumns, ") VALUES(?, ?, ?, ?, ?, ?, ?)"));
    if (auto s = st.status(); !s.ok()) return s;
    BindPrincipal(st, row);
    if (st.Step() == SQLITE_DONE) return absl::OkStatus();
    return SqliteError(db_, "add principal");  // AlreadyExists for a taken name
  }

  absl::StatusOr<std::optional<PrincipalRow>> FindPrincipal(std::string_view name) override {
    absl::MutexLock lock(&mu_);
    Statement st(db_, absl::StrCat("SELECT ", kPrincipalColumns, " FROM principals WHERE name = ?"));
    if (auto s = st.status(); !s.ok()) return s;
    st.Bind(1, name);
    const int rc = st.Step();
    if (rc == SQLITE_ROW) return std::optional<PrincipalRow>(DecodePrincipalRow(st));
    if (rc == SQLITE_DONE) return std::optional<PrincipalRow>();
    return SqliteError(db_, "read principal");
  }

  absl::StatusOr<std::vector<PrincipalRow>> ListPrincipals() override {
    absl::MutexLock lock(&mu_);
    Statement st(db_, absl::StrCat("SELECT ", kPrincipalColumns, " FROM principals ORDER BY name"));
    if (auto s = st.status(); !s.ok()) return s;
    std::vector<PrincipalRow> out;
    int rc;
    while ((rc = st.Step()) == SQLITE_ROW) out.push_back(DecodePrincipalRow(st));
    if (rc != SQLITE_DONE) return SqliteError(db_, "list principals");
    return out;
  }

  absl::Status InsertKey(const ApiKeyRow& row) override {
    absl::MutexLock lock(&mu_);
    Statement st(db_, absl::StrCat("INSERT INTO api_keys(", kKeyColumns, ") VALUES(?, ?, ?, ?, ?, ?, ?)"));
    if (auto s = st.status(); !s.ok()) return s;
    BindKey(st, row);
    if (st.Step() == SQLITE_DONE) return absl::OkStatus();
    return SqliteError(db_, "create key");  // AlreadyExists for a taken key id
  }

  absl::StatusOr<std::optional<ApiKeyRow>> FindKey(std::string_view key_id) override {
    absl::MutexLock lock(&mu_);
    Statement st(db_, absl::StrCat("SELECT ", kKeyColumns, " FROM api_keys WHERE key_id = ?"));
    if (auto s = st.status(); !s.ok()) return s;
    st.Bind(1, key_id);
    const int rc = st.Step();
    if (rc == SQLITE_ROW) return std::optional<ApiKeyRow>(DecodeKeyRow(st));
    if (rc == SQLITE_DONE) return std::optional<ApiKeyRow>();
    return SqliteError(db_, "look up API key");
  }

  absl::StatusOr<std::vector<ApiKeyRow>> ListKeys(std::string_view principal) override {
    absl::MutexLock lock(&mu_);
    Statement st(db_, absl::StrCat("SELECT ", kKeyColumns, " FROM api_keys",
                                   principal.empty() ? "" : " WHERE principal = ?",
                                   " ORDER BY created_at_us, key_id"));
    if (auto s = st.status(); !s.ok()) return s;
    if (!principal.empty()) st.Bind(1, principal);
    std::vector<ApiKeyRow> out;
    int rc;
    while ((rc = st.Step()) == SQLITE_ROW) out.push_back(DecodeKeyRow(st));
    if (rc != SQLITE_DONE) return SqliteError(db_, "list keys");
    return out;
  }

  absl::Status Update(const std::vector<PrincipalRow>& principals,
                      const std::vector<ApiKeyRow>& keys) override {
    absl::MutexLock lock(&mu_);
    Transaction txn(db_);
    if (!txn.status().ok()) return txn.status();
    for (const PrincipalRow& row : principals) {
      Statement st(
          db_,
          "UPDATE principals SET name = ?1, role = ?2, namespaces = ?3, revoked = ?4, created_at_us = ?5, "
          "sign_key_id = ?6, tag = ?7 WHERE name = ?1");
      if (auto s = st.status(); !s.ok()) return s;
      BindPrincipal(st, row);
      if (auto s = st.Run("update principal"); !s.ok()) return s;
      if (sqlite3_changes(db_) == 0) return absl::NotFoundError(absl::StrCat("no principal ", row.name));
    }
    for (const ApiKeyRow& row : keys) {
      Statement st(db_,
                   "UPDATE api_keys SET key_id = ?1, principal = ?2, secret_sha256 = ?3, created_at_us = ?4, "
                   "revoked = ?5, sign_key_id = ?6, tag = ?7 WHERE key_id = ?1");
      if (auto s = st.status(); !s.ok()) return s;
      BindKey(st, row);
      if (auto s = st.Run("update key"); !s.ok()) return s;
      if (sqlite3_changes(db_) == 0) return absl::NotFoundError(absl::StrCat("no API key ", row.key_id));
    }
    return txn.Commit();
  }

 private:
  static void BindPrincipal(Statement& st, const PrincipalRow& row) {
    st.Bind(1, row.name);
    st.Bind(2, row.role);
    st.Bind(3, row.grants);
    st.Bind(4, int64_t{row.revoked ? 1 : 0});
    st.Bind(5, row.created_at_us);
    st.Bind(6, int64_t{row.sign_key_id});
    st.BindBlob(7, row.tag.data(), row.tag.size());
  }
  static void BindKey(Statement& st, const ApiKeyRow& row) {
    st.Bind(1, row.key_id);
    st.Bind(2, row.principal);
    st.Bind(3, row.secret_sha256);
    st.Bind(4, row.created_at_us);
    st.Bind(5, int64_t{row.revoked ? 1 : 0});
    st.Bind(6, int64_t{row.sign_key_id});
    st.BindBlob(7, row.tag.data(), row.tag.size());
  }

  mutable absl::Mutex mu_;  // serializes all use of db_
  sqlite3* db_ ABSL_GUARDED_BY(mu_);
  bool upgraded_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace

absl::StatusOr<std::unique_ptr<AccessRepository>> OpenSqliteAccessRepository(
    const std::filesystem::path& db_path) {
  auto opened = OpenStoreDatabase(db_path);
  if (!opened.ok()) return opened.status();
  auto repository = std::make_unique<SqliteAccessRepository>(*opened);
  absl::StatusOr<bool> upgraded = HasMeta(*opened, kUnsignedAccessMarker);
  if (!upgraded.ok()) return upgraded.status();
  if (*upgraded) repository->set_upgraded();
  return std::unique_ptr<AccessRepository>(std::move(repository));
}

}  // namespace bulwark
