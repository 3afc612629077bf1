// PostgreSQL AccessRepository (see postgres_access_repository.h); mirrors
// sqlite_access_repository.cc statement by statement.
#include "storage/postgresql/postgres_access_repository.h"

#include <absl/strings/str_cat.h>
#include <absl/synchronization/mutex.h>

#include <vector>

#include "core/status_macros.h"
#include "storage/postgresql/pg_connection.h"
#include "storage/sqlite/sqlite_schema.h"  // the names of the meta rows (kUnsignedAccessMarker)

namespace bulwark {
namespace {

using pg::PgParam;

constexpr char kAccessSchema[] = R"sql(
CREATE TABLE IF NOT EXISTS principals(
  name          TEXT COLLATE "C" PRIMARY KEY,
  role          TEXT COLLATE "C" NOT NULL,
  namespaces    TEXT NOT NULL,
  revoked       BIGINT NOT NULL DEFAULT 0,
  created_at_us BIGINT NOT NULL,
  sign_key_id   BIGINT NOT NULL DEFAULT 0,
  tag           BYTEA NOT NULL DEFAULT ''::bytea
);
CREATE TABLE IF NOT EXISTS api_keys(
  key_id        TEXT COLLATE "C" PRIMARY KEY,
  principal     TEXT COLLATE "C" NOT NULL,
  secret_sha256 TEXT NOT NULL,
  created_at_us BIGINT NOT NULL,
  revoked       BIGINT NOT NULL DEFAULT 0,
  sign_key_id   BIGINT NOT NULL DEFAULT 0,
  tag           BYTEA NOT NULL DEFAULT ''::bytea
);
CREATE INDEX IF NOT EXISTS api_keys_by_principal ON api_keys(principal);
)sql";

constexpr char kPrincipalColumns[] = "name, role, namespaces, revoked, created_at_us, sign_key_id, tag";
constexpr char kKeyColumns[] = "key_id, principal, secret_sha256, created_at_us, revoked, sign_key_id, tag";

std::vector<PgParam> PrincipalParams(const PrincipalRow& row) {
  return {PgParam::Text(row.name),         PgParam::Text(row.role),
          PgParam::Text(row.grants),       PgParam::Int(row.revoked ? 1 : 0),
          PgParam::Int(row.created_at_us), PgParam::Int(int64_t{row.sign_key_id}),
          PgParam::Bytes(row.tag)};
}

std::vector<PgParam> KeyParams(const ApiKeyRow& row) {
  return {PgParam::Text(row.key_id),
          PgParam::Text(row.principal),
          PgParam::Text(row.secret_sha256),
          PgParam::Int(row.created_at_us),
          PgParam::Int(row.revoked ? 1 : 0),
          PgParam::Int(int64_t{row.sign_key_id}),
          PgParam::Bytes(row.tag)};
}

PrincipalRow DecodePrincipal(const pg::PgResult& r, int i) {
  return PrincipalRow{r.Bytes(i, 0),    r.Bytes(i, 1), r.Bytes(i, 2),
                      r.Int(i, 3) != 0, r.Int(i, 4),   static_cast<uint32_t>(r.Int(i, 5)),
                      r.Bytes(i, 6)};
}

ApiKeyRow DecodeKey(const pg::PgResult& r, int i) {
  return ApiKeyRow{r.Bytes(i, 0), r.Bytes(i, 1),    r.Bytes(i, 2),
                   r.Int(i, 3),   r.Int(i, 4) != 0, static_cast<uint32_t>(r.Int(i, 5)),
                   r.Bytes(i, 6)};
}

class PostgresAccessRepository : public AccessRepository {
 public:
  PostgresAccessRepository(std::unique_ptr<pg::PgConnection> conn, bool upgraded)
      : conn_(std::move(conn)), upgraded_(upgraded) {}

  // The tables are always made signed, so only the marker of a store copied from an upgraded
  // SQLite one sets this; FinishSigningUpgrade deletes it, as SQLite's does.
  bool upgraded_from_unsigned() const override {
    absl::MutexLock lock(&mu_);
    return upgraded_;
  }

  absl::Status FinishSigningUpgrade() override {
    absl::MutexLock lock(&mu_);
    const std::vector<PgParam> key = {PgParam::Text(kUnsignedAccessMarker)};
    BULWARK_RETURN_IF_ERROR(conn_->Prepared("delete_meta", "DELETE FROM meta WHERE key = $1", key).status());
    upgraded_ = false;
    return absl::OkStatus();
  }

  absl::Status InsertPrincipal(const PrincipalRow& row) override {
    absl::MutexLock lock(&mu_);
    static const std::string sql =
        absl::StrCat("INSERT INTO principals(", kPrincipalColumns, ") VALUES($1, $2, $3, $4, $5, $6, $7)");
    return conn_->Prepared("insert_principal", sql, PrincipalParams(row)).status();  // AlreadyExists if taken
  }

  absl::StatusOr<std::optional<PrincipalRow>> FindPrincipal(std::string_view name) override {
    absl::MutexLock lock(&mu_);
    static const std::string sql =
        absl::StrCat("SELECT ", kPrincipalColumns, " FROM principals WHERE name = $1");
    const std::vector<PgParam> params = {PgParam::Text(name)};
    BULWARK_ASSIGN_OR_RETURN(auto r, conn_->Prepared("find_principal", sql, params));
    if (r.rows() == 0) return std::optional<PrincipalRow>();
    return std::optional<PrincipalRow>(DecodePrincipal(r, 0));
  }

  absl::StatusOr<std::vector<PrincipalRow>> ListPrincipals() override {
    absl::MutexLock lock(&mu_);
    BULWARK_ASSIGN_OR_RETURN(
        auto r, conn_->Query(absl::StrCat("SELECT ", kPrincipalColumns, " FROM principals ORDER BY name")));
    std::vector<PrincipalRow> out;
    for (int i = 0; i < r.rows(); ++i) out.push_back(DecodePrincipal(r, i));
    return out;
  }

  absl::Status InsertKey(const ApiKeyRow& row) override {
    absl::MutexLock lock(&mu_);
    static const std::string sql =
        absl::StrCat("INSERT INTO api_keys(", kKeyColumns, ") VALUES($1, $2, $3, $4, $5, $6, $7)");
    return conn_->Prepared("insert_key", sql, KeyParams(row)).status();  // AlreadyExists if taken
  }

  absl::StatusOr<std::optional<ApiKeyRow>> FindKey(std::string_view key_id) override {
    absl::MutexLock lock(&mu_);
    static const std::string sql = absl::StrCat("SELECT ", kKeyColumns, " FROM api_keys WHERE key_id = $1");
    const std::vector<PgParam> params = {PgParam::Text(key_id)};
    BULWARK_ASSIGN_OR_RETURN(auto r, conn_->Prepared("find_key", sql, params));
    if (r.rows() == 0) return std::optional<ApiKeyRow>();
    return std::optional<ApiKeyRow>(DecodeKey(r, 0));
  }

  absl::StatusOr<std::vector<ApiKeyRow>> ListKeys(std::string_view principal) override {
    absl::MutexLock lock(&mu_);
    std::vector<PgParam> params;
    if (!principal.empty()) params.push_back(PgParam::Text(principal));
    BULWARK_ASSIGN_OR_RETURN(auto r,
                             conn_->Query(absl::StrCat("SELECT ", kKeyColumns, " FROM api_keys",
                                                       principal.empty() ? "" : " WHERE principal = $1",
                                                       " ORDER BY created_at_us, key_id"),
                                          params));
    std::vector<ApiKeyRow> out;
    for (int i = 0; i < r.rows(); ++i) out.push_back(DecodeKey(r, i));
    return out;
  }

  absl::Status Update(const std::vector<PrincipalRow>& principals,
                      const std::vector<ApiKeyRow>& keys) override {
    absl::MutexLock lock(&mu_);
    pg::PgTransaction txn(*conn_);
    BULWARK_RETURN_IF_ERROR(txn.status());
    for (const PrincipalRow& row : principals) {
      BULWARK_ASSIGN_OR_RETURN(
          auto r, conn_->Prepared("update_principal",
                                  "UPDATE principals SET role = $2, namespaces = $3, revoked = $4, "
                                  "created_at_us = $5, sign_key_id = $6, tag = $7 WHERE name = $1",
                                  PrincipalParams(row)));
      if (r.AffectedRows() == 0) return absl::NotFoundError(absl::StrCat("no principal ", row.name));
    }
    for (const ApiKeyRow& row : keys) {
      BULWARK_ASSIGN_OR_RETURN(
          auto r,
          conn_->Prepared("update_key",
                          "UPDATE api_keys SET principal = $2, secret_sha256 = $3, created_at_us = $4, "
                          "revoked = $5, sign_key_id = $6, tag = $7 WHERE key_id = $1",
                          KeyParams(row)));
      if (r.AffectedRows() == 0) return absl::NotFoundError(absl::StrCat("no API key ", row.key_id));
    }
    return txn.Commit();
  }

 private:
  mutable absl::Mutex mu_;  // serializes all use of conn_
  std::unique_ptr<pg::PgConnection> conn_ ABSL_GUARDED_BY(mu_);
  bool upgraded_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

absl::StatusOr<std::unique_ptr<AccessRepository>> OpenPostgresAccessRepository(std::string_view conninfo) {
  BULWARK_ASSIGN_OR_RETURN(auto conn, pg::PgConnection::Open(conninfo));
  BULWARK_RETURN_IF_ERROR(pg::RequireStore(*conn));
  BULWARK_RETURN_IF_ERROR(pg::ExecSchema(*conn, kAccessSchema, "api_keys_by_principal"));
  const std::vector<PgParam> marker = {PgParam::Text(kUnsignedAccessMarker)};
  BULWARK_ASSIGN_OR_RETURN(auto marked, conn->Query("SELECT 1 FROM meta WHERE key = $1", marker));
  return std::unique_ptr<AccessRepository>(new PostgresAccessRepository(std::move(conn), marked.rows() > 0));
}

}  // namespace bulwark
