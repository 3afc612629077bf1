// The replicas table (see replica_directory.h).
#include "replication/replica_directory.h"

#include <absl/strings/match.h>
#include <absl/strings/str_cat.h>

#include <array>
#include <cstdint>
#include <utility>

#include "bulwark/env.h"
#include "core/hex.h"
#include "core/status_macros.h"
#include "core/strings.h"
#include "storage/postgresql/rendezvous.h"

namespace bulwark {
namespace {

using pg::PgParam;

constexpr char kSchema[] = R"sql(
CREATE TABLE IF NOT EXISTS replicas(
  incarnation  TEXT COLLATE "C" PRIMARY KEY,
  replica_id   TEXT COLLATE "C" NOT NULL,
  url          TEXT COLLATE "C" NOT NULL,
  started_at   TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
  heartbeat_at TIMESTAMPTZ NOT NULL
);
)sql";

constexpr char kHeartbeat[] =
    "INSERT INTO replicas(incarnation, replica_id, url, heartbeat_at) VALUES($1, $2, $3, clock_timestamp()) "
    "ON CONFLICT(incarnation) DO UPDATE SET url = excluded.url, heartbeat_at = excluded.heartbeat_at";
constexpr char kRemove[] = "DELETE FROM replicas WHERE incarnation = $1";
// The newest incarnation of each replica id among the live rows.
constexpr char kLive[] =
    "SELECT DISTINCT ON (replica_id) incarnation, replica_id, url FROM replicas "
    "WHERE heartbeat_at > clock_timestamp() - $1::bigint * interval '1 microsecond' "
    "ORDER BY replica_id, started_at DESC, incarnation";
constexpr char kFind[] = "SELECT incarnation, replica_id, url FROM replicas WHERE incarnation = $1";
// Rows not heard of for a day are gone for good (a replica's every restart adds one).
constexpr char kPrune[] = "DELETE FROM replicas WHERE heartbeat_at < clock_timestamp() - interval '1 day'";

absl::Status CheckField(std::string_view what, std::string_view value, size_t max) {
  if (value.empty() || value.size() > max || value.find('\0') != std::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("the replica ", ToAbsl(what), " must be 1..", max, " bytes without NUL"));
  }
  return absl::OkStatus();
}

ReplicaInfo InfoFromRow(const pg::PgResult& r, int row) {
  return ReplicaInfo{r.Bytes(row, 0), r.Bytes(row, 1), r.Bytes(row, 2)};
}

}  // namespace

std::string NewIncarnation(std::string_view replica_id) {
  std::array<uint8_t, 8> random{};
  Env::Default()->RandomBytes(random);
  return absl::StrCat(ToAbsl(replica_id), "/", HexEncode(std::span<const uint8_t>(random)));
}

absl::StatusOr<std::unique_ptr<ReplicaDirectory>> ReplicaDirectory::Open(std::string_view conninfo) {
  BULWARK_ASSIGN_OR_RETURN(auto conn, pg::PgConnection::Open(conninfo));
  BULWARK_RETURN_IF_ERROR(pg::ExecSchema(*conn, kSchema, "replicas"));
  BULWARK_RETURN_IF_ERROR(conn->Exec(kPrune));
  return std::unique_ptr<ReplicaDirectory>(new ReplicaDirectory(std::string(conninfo), std::move(conn)));
}

absl::StatusOr<pg::PgConnection*> ReplicaDirectory::ConnectionLocked() {
  if (conn_ == nullptr || !conn_->healthy()) {
    conn_.reset();
    BULWARK_ASSIGN_OR_RETURN(conn_, pg::PgConnection::Open(conninfo_));
  }
  return conn_.get();
}

absl::Status ReplicaDirectory::Heartbeat(const ReplicaInfo& self) {
  BULWARK_RETURN_IF_ERROR(CheckField("id", self.replica_id, kMaxReplicaIdBytes));
  BULWARK_RETURN_IF_ERROR(CheckField("incarnation", self.incarnation, kMaxReplicaIdBytes + 17));
  BULWARK_RETURN_IF_ERROR(CheckField("url", self.url, kMaxReplicaUrlBytes));
  if (!absl::StartsWith(self.url, "http://") && !absl::StartsWith(self.url, "https://")) {
    return absl::InvalidArgumentError("a replica's advertised URL starts with http:// or https://");
  }
  absl::MutexLock lock(&mu_);
  BULWARK_ASSIGN_OR_RETURN(pg::PgConnection * conn, ConnectionLocked());
  const std::vector<PgParam> params = {PgParam::Text(self.incarnation), PgParam::Text(self.replica_id),
                                       PgParam::Text(self.url)};
  return conn->Prepared("replica_heartbeat", kHeartbeat, params).status();
}

absl::Status ReplicaDirectory::Remove(std::string_view incarnation) {
  absl::MutexLock lock(&mu_);
  BULWARK_ASSIGN_OR_RETURN(pg::PgConnection * conn, ConnectionLocked());
  const std::vector<PgParam> params = {PgParam::Text(incarnation)};
  return conn->Prepared("replica_remove", kRemove, params).status();
}

absl::StatusOr<std::vector<ReplicaInfo>> ReplicaDirectory::Live(absl::Duration ttl) {
  absl::MutexLock lock(&mu_);
  BULWARK_ASSIGN_OR_RETURN(pg::PgConnection * conn, ConnectionLocked());
  const std::vector<PgParam> params = {PgParam::Int(absl::ToInt64Microseconds(ttl))};
  BULWARK_ASSIGN_OR_RETURN(auto r, conn->Prepared("replica_live", kLive, params));
  std::vector<ReplicaInfo> live;
  live.reserve(r.rows());
  for (int i = 0; i < r.rows(); ++i) live.push_back(InfoFromRow(r, i));
  return live;
}

absl::StatusOr<std::optional<ReplicaInfo>> ReplicaDirectory::Find(std::string_view incarnation) {
  absl::MutexLock lock(&mu_);
  BULWARK_ASSIGN_OR_RETURN(pg::PgConnection * conn, ConnectionLocked());
  const std::vector<PgParam> params = {PgParam::Text(incarnation)};
  BULWARK_ASSIGN_OR_RETURN(auto r, conn->Prepared("replica_find", kFind, params));
  if (r.rows() == 0) return std::nullopt;
  return InfoFromRow(r, 0);
}

}  // namespace bulwark
