// PostgreSQL GateRepository (see postgres_gate_repository.h); mirrors sqlite_gate_repository.cc.
#include "storage/postgresql/postgres_gate_repository.h"

#include <absl/strings/str_cat.h>
#include <absl/synchronization/mutex.h>

#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "core/hex.h"
#include "core/status_macros.h"
#include "storage/postgresql/pg_connection.h"
#include "storage/signed_meta_json.h"
#include "storage/sqlite/sqlite_schema.h"  // the names of the meta rows (kGateManifestKey, ...)

namespace bulwark {
namespace {

using pg::PgParam;

constexpr char kGateSchema[] = R"sql(
CREATE TABLE IF NOT EXISTS query_gates(
  namespace    TEXT COLLATE "C" PRIMARY KEY,
  mode         TEXT COLLATE "C" NOT NULL,
  embedder     TEXT NOT NULL,
  fitted_at_us BIGINT NOT NULL,
  source       TEXT NOT NULL,
  model        BYTEA NOT NULL,
  sign_key_id  BIGINT NOT NULL DEFAULT 0,
  tag          BYTEA NOT NULL DEFAULT ''::bytea
);
)sql";

constexpr char kGateColumns[] = "namespace, mode, embedder, fitted_at_us, source, model, sign_key_id, tag";

GateRow DecodeGate(const pg::PgResult& r, int i) {
  return GateRow{r.Bytes(i, 0),
                 r.Bytes(i, 1),
                 r.Bytes(i, 2),
                 r.Int(i, 3),
                 r.Bytes(i, 4),
                 r.Bytes(i, 5),
                 static_cast<uint32_t>(r.Int(i, 6)),
                 r.Bytes(i, 7)};
}

constexpr char kMetaValue[] = "SELECT value FROM meta WHERE key = $1";
constexpr char kPutMeta[] =
    "INSERT INTO meta(key, value) VALUES($1, $2) ON CONFLICT(key) DO UPDATE SET value = excluded.value";
constexpr char kDeleteMeta[] = "DELETE FROM meta WHERE key = $1";

class PostgresGateRepository : public GateRepository {
 public:
  PostgresGateRepository(std::unique_ptr<pg::PgConnection> conn, bool upgraded, bool manifest_pending)
      : conn_(std::move(conn)), upgraded_(upgraded), manifest_pending_(manifest_pending) {}

  absl::Status Save(const GateRow& row) override {
    absl::MutexLock lock(&mu_);
    static const std::string sql = absl::StrCat(
        "INSERT INTO query_gates(", kGateColumns,
        ") VALUES($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT(namespace) DO UPDATE SET mode = excluded.mode, "
        "embedder = excluded.embedder, fitted_at_us = excluded.fitted_at_us, source = excluded.source, "
        "model = excluded.model, sign_key_id = excluded.sign_key_id, tag = excluded.tag");
    const std::vector<PgParam> params = {
        PgParam::Text(row.name_space),          PgParam::Text(row.mode),   PgParam::Text(row.embedder),
        PgParam::Int(row.fitted_at_us),         PgParam::Text(row.source), PgParam::Bytes(row.model),
        PgParam::Int(int64_t{row.sign_key_id}), PgParam::Bytes(row.tag)};
    pg::PgTransaction txn(*conn_);
    BULWARK_RETURN_IF_ERROR(txn.status());
    BULWARK_RETURN_IF_ERROR(LockWritersLocked());
    BULWARK_RETURN_IF_ERROR(conn_->Prepared("save_gate", sql, params).status());
    BULWARK_RETURN_IF_ERROR(ReplaceManifestLocked());
    return txn.Commit();
  }

  absl::StatusOr<std::optional<GateRow>> Find(std::string_view name_space) override {
    absl::MutexLock lock(&mu_);
    static const std::string sql =
        absl::StrCat("SELECT ", kGateColumns, " FROM query_gates WHERE namespace = $1");
    const std::vector<PgParam> params = {PgParam::Text(name_space)};
    BULWARK_ASSIGN_OR_RETURN(auto r, conn_->Prepared("find_gate", sql, params));
    if (r.rows() == 0) return std::optional<GateRow>();
    return std::optional<GateRow>(DecodeGate(r, 0));
  }

  absl::StatusOr<std::vector<GateRow>> List() override {
    absl::MutexLock lock(&mu_);
    BULWARK_ASSIGN_OR_RETURN(
        auto r, conn_->Query(absl::StrCat("SELECT ", kGateColumns, " FROM query_gates ORDER BY namespace")));
    std::vector<GateRow> out;
    for (int i = 0; i < r.rows(); ++i) out.push_back(DecodeGate(r, i));
    return out;
  }

  absl::Status Remove(std::string_view name_space) override {
    absl::MutexLock lock(&mu_);
    const std::vector<PgParam> params = {PgParam::Text(name_space)};
    pg::PgTransaction txn(*conn_);
    BULWARK_RETURN_IF_ERROR(txn.status());
    BULWARK_RETURN_IF_ERROR(LockWritersLocked());
    BULWARK_ASSIGN_OR_RETURN(auto r, conn_->Query("DELETE FROM query_gates WHERE namespace = $1", params));
    if (r.AffectedRows() == 0) {
      return absl::NotFoundError(absl::StrCat("no query gate for namespace ", std::string(name_space)));
    }
    BULWARK_RETURN_IF_ERROR(ReplaceManifestLocked());
    return txn.Commit();
  }

  void SetManifestSigner(ManifestSigner signer) override {
    absl::MutexLock lock(&mu_);
    manifest_signer_ = std::move(signer);
  }

  absl::StatusOr<std::optional<GateManifest>> Manifest() override {
    absl::MutexLock lock(&mu_);
    const std::vector<PgParam> key = {PgParam::Text(kGateManifestKey)};
    BULWARK_ASSIGN_OR_RETURN(auto r, conn_->Prepared("meta_value", kMetaValue, key));
    if (r.rows() == 0) return std::optional<GateManifest>();
    return DecodeGateManifest(r.View(0, 0));
  }

  bool manifest_pending() const override {
    absl::MutexLock lock(&mu_);
    return manifest_pending_;
  }

  absl::Status WriteManifest() override {
    absl::MutexLock lock(&mu_);
    if (!manifest_signer_) return absl::FailedPreconditionError("no manifest signer");
    pg::PgTransaction txn(*conn_);
    BULWARK_RETURN_IF_ERROR(txn.status());
    BULWARK_RETURN_IF_ERROR(LockWritersLocked());
    BULWARK_RETURN_IF_ERROR(ReplaceManifestLocked());
    const std::vector<PgParam> key = {PgParam::Text(kGateManifestMarker)};
    BULWARK_RETURN_IF_ERROR(conn_->Prepared("delete_meta", kDeleteMeta, key).status());
    BULWARK_RETURN_IF_ERROR(txn.Commit());
    manifest_pending_ = false;
    return absl::OkStatus();
  }

  // The table is always made with the signature columns: only a marker copied from an upgraded
  // SQLite store sets this. Deleting the marker is what SQLite's does.
  bool upgraded_from_unsigned() const override {
    absl::MutexLock lock(&mu_);
    return upgraded_;
  }

  absl::Status FinishSigningUpgrade() override {
    absl::MutexLock lock(&mu_);
    const std::vector<PgParam> key = {PgParam::Text(kUnsignedGateMarker)};
    BULWARK_RETURN_IF_ERROR(conn_->Prepared("delete_meta", kDeleteMeta, key).status());
    upgraded_ = false;
    return absl::OkStatus();
  }

 private:
  mutable absl::Mutex mu_;  // serializes all use of conn_
  std::unique_ptr<pg::PgConnection> conn_ ABSL_GUARDED_BY(mu_);
  bool upgraded_ ABSL_GUARDED_BY(mu_);
  bool manifest_pending_ ABSL_GUARDED_BY(mu_);
  ManifestSigner manifest_signer_ ABSL_GUARDED_BY(mu_);

  // In a write transaction: serializes the writers of query gates across connections, so that a
  // manifest is always computed from the rows every earlier writer committed (SQLite: BEGIN
  // IMMEDIATE). SHARE ROW EXCLUSIVE conflicts with itself and with writes, not with reads; each
  // later statement of a READ COMMITTED transaction sees every commit before the lock was granted.
  absl::Status LockWritersLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return conn_->Exec("LOCK TABLE query_gates IN SHARE ROW EXCLUSIVE MODE");
  }

  // With a signer: the manifest of the rows as they are in the caller's transaction. Requires mu_.
  absl::Status ReplaceManifestLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (!manifest_signer_) return absl::OkStatus();
    GateManifest manifest;
    BULWARK_ASSIGN_OR_RETURN(
        auto r,
        conn_->Prepared("gate_namespaces", "SELECT namespace FROM query_gates ORDER BY namespace", {}));
    for (int i = 0; i < r.rows(); ++i) manifest.namespaces.push_back(r.Bytes(i, 0));
    manifest_signer_(&manifest);
    const std::string json = EncodeGateManifest(manifest);
    const std::vector<PgParam> params = {PgParam::Text(kGateManifestKey), PgParam::Text(json)};
    return conn_->Prepared("put_meta", kPutMeta, params).status();
  }
};

// Whether meta has the row `key` (an upgrade marker).
absl::StatusOr<bool> HasMarker(pg::PgConnection& conn, const char* key) {
  const std::vector<PgParam> params = {PgParam::Text(key)};
  BULWARK_ASSIGN_OR_RETURN(auto r, conn.Query(kMetaValue, params));
  return r.rows() > 0;
}

}  // namespace

absl::StatusOr<std::unique_ptr<GateRepository>> OpenPostgresGateRepository(std::string_view conninfo) {
  BULWARK_ASSIGN_OR_RETURN(auto conn, pg::PgConnection::Open(conninfo));
  BULWARK_RETURN_IF_ERROR(pg::RequireStore(*conn));
  BULWARK_RETURN_IF_ERROR(pg::ExecSchema(*conn, kGateSchema, "query_gates"));
  BULWARK_ASSIGN_OR_RETURN(const bool upgraded, HasMarker(*conn, kUnsignedGateMarker));
  BULWARK_ASSIGN_OR_RETURN(const bool manifest_pending, HasMarker(*conn, kGateManifestMarker));
  return std::unique_ptr<GateRepository>(
      new PostgresGateRepository(std::move(conn), upgraded, manifest_pending));
}

}  // namespace bulwark
