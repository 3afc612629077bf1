// PostgreSQL GateRepository (see postgres_gate_repository.h); mirrors sqlite_gate_repository.cc.
#include "storage/postgresql/postgres_gate_repository.h"

#include <absl/strings/str_cat.h>

#include <mutex>
#include <vector>

#include "core/status_macros.h"
#include "storage/postgresql/pg_connection.h"

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

class PostgresGateRepository : public GateRepository {
 public:
  explicit PostgresGateRepository(std::unique_ptr<pg::PgConnection> conn) : conn_(std::move(conn)) {}

  absl::Status Save(const GateRow& row) override {
    std::lock_guard<std::mutex> lock(mu_);
    static const std::string sql = absl::StrCat(
        "INSERT INTO query_gates(", kGateColumns,
        ") VALUES($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT(namespace) DO UPDATE SET mode = excluded.mode, "
        "embedder = excluded.embedder, fitted_at_us = excluded.fitted_at_us, source = excluded.source, "
        "model = excluded.model, sign_key_id = excluded.sign_key_id, tag = excluded.tag");
    const std::vector<PgParam> params = {
        PgParam::Text(row.name_space),          PgParam::Text(row.mode),   PgParam::Text(row.embedder),
        PgParam::Int(row.fitted_at_us),         PgParam::Text(row.source), PgParam::Bytes(row.model),
        PgParam::Int(int64_t{row.sign_key_id}), PgParam::Bytes(row.tag)};
    return conn_->Prepared("save_gate", sql, params).status();
  }

  absl::StatusOr<std::optional<GateRow>> Find(std::string_view name_space) override {
    std::lock_guard<std::mutex> lock(mu_);
    static const std::string sql =
        absl::StrCat("SELECT ", kGateColumns, " FROM query_gates WHERE namespace = $1");
    const std::vector<PgParam> params = {PgParam::Text(name_space)};
    BULWARK_ASSIGN_OR_RETURN(auto r, conn_->Prepared("find_gate", sql, params));
    if (r.rows() == 0) return std::optional<GateRow>();
    return std::optional<GateRow>(DecodeGate(r, 0));
  }

  absl::StatusOr<std::vector<GateRow>> List() override {
    std::lock_guard<std::mutex> lock(mu_);
    BULWARK_ASSIGN_OR_RETURN(
        auto r, conn_->Query(absl::StrCat("SELECT ", kGateColumns, " FROM query_gates ORDER BY namespace")));
    std::vector<GateRow> out;
    for (int i = 0; i < r.rows(); ++i) out.push_back(DecodeGate(r, i));
    return out;
  }

  absl::Status Remove(std::string_view name_space) override {
    std::lock_guard<std::mutex> lock(mu_);
    const std::vector<PgParam> params = {PgParam::Text(name_space)};
    BULWARK_ASSIGN_OR_RETURN(auto r, conn_->Query("DELETE FROM query_gates WHERE namespace = $1", params));
    if (r.AffectedRows() == 0) {
      return absl::NotFoundError(absl::StrCat("no query gate for namespace ", std::string(name_space)));
    }
    return absl::OkStatus();
  }

  bool upgraded_from_unsigned() const override { return false; }

 private:
  std::mutex mu_;  // serializes all use of conn_
  std::unique_ptr<pg::PgConnection> conn_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<GateRepository>> OpenPostgresGateRepository(std::string_view conninfo) {
  BULWARK_ASSIGN_OR_RETURN(auto conn, pg::PgConnection::Open(conninfo));
  BULWARK_RETURN_IF_ERROR(pg::RequireStore(*conn));
  BULWARK_RETURN_IF_ERROR(pg::ExecSchema(*conn, kGateSchema, "query_gates"));
  return std::unique_ptr<GateRepository>(new PostgresGateRepository(std::move(conn)));
}

}  // namespace bulwark
