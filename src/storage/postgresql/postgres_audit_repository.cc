// PostgreSQL AuditRepository (see postgres_audit_repository.h); mirrors sqlite_audit_repository.cc.
#include "storage/postgresql/postgres_audit_repository.h"

#include <absl/strings/str_cat.h>
#include <absl/synchronization/mutex.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "core/status_macros.h"
#include "storage/postgresql/pg_connection.h"

namespace bulwark {
namespace {

using pg::PgParam;

constexpr char kAuditSchema[] = R"sql(
CREATE TABLE IF NOT EXISTS audit(
  seq          BIGINT PRIMARY KEY,
  at_us        BIGINT NOT NULL,
  principal    TEXT COLLATE "C" NOT NULL,
  session      TEXT COLLATE "C" NOT NULL,
  namespace    TEXT COLLATE "C" NOT NULL,
  operation    TEXT COLLATE "C" NOT NULL,
  query_hash   TEXT COLLATE "C" NOT NULL,
  returned_ids TEXT COLLATE "C" NOT NULL,
  detail       TEXT COLLATE "C" NOT NULL,
  key_id       BIGINT NOT NULL DEFAULT 0,
  tag          BYTEA
);
CREATE INDEX IF NOT EXISTS audit_by_principal ON audit(principal, seq);
CREATE INDEX IF NOT EXISTS audit_by_session ON audit(session, seq);
CREATE INDEX IF NOT EXISTS audit_by_namespace ON audit(namespace, seq);
CREATE INDEX IF NOT EXISTS audit_by_time ON audit(at_us);
)sql";

constexpr char kAuditColumns[] =
    "seq, at_us, principal, session, namespace, operation, query_hash, returned_ids, detail, key_id, tag";
constexpr int kScanPage = 1000;

AuditRow DecodeAuditRow(const pg::PgResult& r, int i) {
  AuditRow row;
  row.seq = r.Int(i, 0);
  row.at_us = r.Int(i, 1);
  row.principal = r.Bytes(i, 2);
  row.session = r.Bytes(i, 3);
  row.name_space = r.Bytes(i, 4);
  row.operation = r.Bytes(i, 5);
  row.query_hash = r.Bytes(i, 6);
  row.returned_ids = r.Bytes(i, 7);
  row.detail = r.Bytes(i, 8);
  const int64_t key_id = r.Int(i, 9);
  row.key_id = key_id >= 0 && key_id <= UINT32_MAX ? static_cast<uint32_t>(key_id) : 0;  // 0 never verifies
  if (!r.IsNull(i, 10)) row.tag = r.Bytes(i, 10);
  return row;
}

// `id` as a JSON string (compact; invalid UTF-8 replaced, as the audit log writes it).
std::string JsonQuotedId(const std::string& id) {
  return nlohmann::json(id).dump(-1, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
}

// True if `returned_ids` is a JSON array holding the string `id` (SQLite's json_each check; a
// damaged row matches nothing).
bool ReturnedIdsHold(const std::string& returned_ids, const std::string& id) {
  const nlohmann::json ids = nlohmann::json::parse(returned_ids, nullptr, /*allow_exceptions=*/false);
  if (!ids.is_array()) return false;
  return std::any_of(ids.begin(), ids.end(), [&](const nlohmann::json& e) {
    return e.is_string() && e.get_ref<const std::string&>() == id;
  });
}

std::vector<PgParam> InsertParams(const AuditRow& r, int64_t seq) {
  return {PgParam::Int(seq),
          PgParam::Int(r.at_us),
          PgParam::Text(r.principal),
          PgParam::Text(r.session),
          PgParam::Text(r.name_space),
          PgParam::Text(r.operation),
          PgParam::Text(r.query_hash),
          PgParam::Text(r.returned_ids),
          PgParam::Text(r.detail),
          PgParam::Int(int64_t{r.key_id}),
          r.tag ? PgParam::Bytes(*r.tag) : PgParam::Null()};
}

class PostgresAuditRepository : public AuditRepository {
 public:
  PostgresAuditRepository(std::unique_ptr<pg::PgConnection> conn, std::string conninfo)
      : conn_(std::move(conn)), conninfo_(std::move(conninfo)) {}

  absl::Status Append(const BuildBatch& build) override {
    static const std::string insert = absl::StrCat("INSERT INTO audit(", kAuditColumns,
                                                   ") VALUES($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)");
    absl::MutexLock lock(&mu_);
    pg::PgTransaction txn(*conn_);
    BULWARK_RETURN_IF_ERROR(txn.status());
    BULWARK_RETURN_IF_ERROR(conn_->Exec("LOCK TABLE audit IN SHARE ROW EXCLUSIVE MODE"));
    BULWARK_ASSIGN_OR_RETURN(const AuditHead head, HeadLocked());
    BULWARK_ASSIGN_OR_RETURN(const std::vector<AuditRow> rows, build(head));
    std::vector<std::vector<PgParam>> params;
    params.reserve(rows.size());
    int64_t last = head.seq;
    for (const AuditRow& r : rows) {
      if (r.seq != 0 && r.seq <= last) {
        return absl::AlreadyExistsError(absl::StrCat("audit seq ", r.seq, " is taken"));
      }
      last = r.seq != 0 ? r.seq : last + 1;
      params.push_back(InsertParams(r, last));
    }
    if (!params.empty()) {
      BULWARK_RETURN_IF_ERROR(conn_->ExecBatch("insert_audit", insert, params).status());
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
    std::string sql = absl::StrCat("SELECT ", kAuditColumns, " FROM audit WHERE seq < $1");
    std::vector<PgParam> params = {PgParam::Int(INT64_MAX)};  // $1: the paging cursor
    auto match = [&](const std::optional<std::string>& value, const char* column) {
      if (!value) return;
      params.push_back(PgParam::Text(*value));
      absl::StrAppend(&sql, " AND ", column, " = $", params.size());
    };
    match(filter.principal, "principal");
    match(filter.session, "session");
    match(filter.name_space, "namespace");
    if (filter.entry_id) {
      // strpos() on the JSON-quoted id is the SQL pre-filter; the rows it passes are then checked
      // element by element here, so "A1" does not match a record that returned only "A10" and a
      // damaged row matches nothing (PostgreSQL 15 has no json_valid to guard a cast with).
      params.push_back(PgParam::Text(JsonQuotedId(*filter.entry_id)));
      absl::StrAppend(&sql, " AND strpos(returned_ids, $", params.size(), ") > 0");
    }
    if (filter.since_us != 0) {
      params.push_back(PgParam::Int(filter.since_us));
      absl::StrAppend(&sql, " AND at_us >= $", params.size());
    }
    absl::StrAppend(&sql, " ORDER BY seq DESC LIMIT ", filter.limit);
    absl::MutexLock lock(&mu_);
    std::vector<AuditRow> out;
    // Without an entry filter every row of the first page is kept; with one, pages follow until
    // `limit` rows held the id or the log ends (bounded by the log's size).
    while (true) {
      BULWARK_ASSIGN_OR_RETURN(const pg::PgResult r, conn_->Query(sql, params));
      for (int i = 0; i < r.rows() && static_cast<int>(out.size()) < filter.limit; ++i) {
        AuditRow row = DecodeAuditRow(r, i);
        params[0] = PgParam::Int(row.seq);
        if (filter.entry_id && !ReturnedIdsHold(row.returned_ids, *filter.entry_id)) continue;
        out.push_back(std::move(row));
      }
      if (!filter.entry_id || r.rows() < filter.limit || static_cast<int>(out.size()) >= filter.limit) break;
    }
    return out;
  }

  // On a connection of its own: one snapshot, and Append goes on meanwhile.
  absl::Status Scan(const std::function<absl::Status(const AuditRow&)>& visit) override {
    BULWARK_ASSIGN_OR_RETURN(std::unique_ptr<pg::PgConnection> reader, pg::PgConnection::Open(conninfo_));
    pg::PgTransaction txn(*reader, pg::PgTransaction::Mode::kRepeatableReadOnly);
    BULWARK_RETURN_IF_ERROR(txn.status());
    static const std::string sql =
        absl::StrCat("SELECT ", kAuditColumns, " FROM audit WHERE seq > $1 ORDER BY seq LIMIT ", kScanPage);
    int64_t after = INT64_MIN;
    while (true) {
      const std::vector<PgParam> params = {PgParam::Int(after)};
      BULWARK_ASSIGN_OR_RETURN(const pg::PgResult r, reader->Prepared("scan_audit", sql, params));
      for (int i = 0; i < r.rows(); ++i) {
        const AuditRow row = DecodeAuditRow(r, i);
        after = row.seq;
        BULWARK_RETURN_IF_ERROR(visit(row));
      }
      if (r.rows() < kScanPage) break;
    }
    return txn.Commit();
  }

  absl::Status Upgrade() override {
    absl::MutexLock lock(&mu_);
    return pg::ExecSchema(*conn_, kAuditSchema, "audit_by_time");
  }

 private:
  absl::StatusOr<AuditHead> HeadLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    BULWARK_ASSIGN_OR_RETURN(
        const pg::PgResult r,
        conn_->Prepared("audit_head", "SELECT seq, tag FROM audit ORDER BY seq DESC LIMIT 1", {}));
    AuditHead head;
    if (r.rows() > 0) {
      head.seq = r.Int(0, 0);
      if (!r.IsNull(0, 1)) head.tag = r.Bytes(0, 1);
    }
    return head;
  }

  absl::Mutex mu_;  // serializes all use of conn_
  std::unique_ptr<pg::PgConnection> conn_ ABSL_GUARDED_BY(mu_);
  const std::string conninfo_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<AuditRepository>> OpenPostgresAuditRepository(std::string_view conninfo) {
  BULWARK_ASSIGN_OR_RETURN(auto conn, pg::PgConnection::Open(conninfo));
  BULWARK_RETURN_IF_ERROR(pg::RequireStore(*conn));
  auto repository = std::make_unique<PostgresAuditRepository>(std::move(conn), std::string(conninfo));
  BULWARK_RETURN_IF_ERROR(repository->Upgrade());
  return std::unique_ptr<AuditRepository>(std::move(repository));
}

}  // namespace bulwark
