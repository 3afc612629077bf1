// Namespace leases and the write fence (see namespace_lease.h).
#include "storage/postgresql/namespace_lease.h"

#include <absl/strings/str_cat.h>
#include <absl/synchronization/mutex.h>

#include <utility>
#include <vector>

#include "core/status_macros.h"
#include "core/strings.h"

namespace bulwark {
namespace {

using pg::PgParam;

constexpr char kLeaseSchema[] = R"sql(
CREATE TABLE IF NOT EXISTS namespace_leases(
  namespace  TEXT COLLATE "C" PRIMARY KEY,
  holder     TEXT COLLATE "C" NOT NULL,
  epoch      BIGINT NOT NULL CHECK (epoch > 0),
  expires_at TIMESTAMPTZ NOT NULL
);
)sql";

// Microseconds since the Unix epoch of a timestamptz expression (database time).
#define BULWARK_LEASE_US(x) "(extract(epoch FROM " x ") * 1000000)::bigint"
#define BULWARK_LEASE_ROW \
  "holder, epoch, " BULWARK_LEASE_US("expires_at") ", " BULWARK_LEASE_US("clock_timestamp()")

// One conditional upsert: a free (new, released or expired) lease is taken with epoch + 1, the
// holder's own live lease is renewed with its epoch, another holder's live lease is left alone
// (no row returned). The row lock of ON CONFLICT DO UPDATE serializes racing acquirers: the
// second one re-checks the WHERE on the winner's row and finds it live.
constexpr char kAcquire[] =
    "INSERT INTO namespace_leases AS l(namespace, holder, epoch, expires_at) "
    "VALUES($1, $2, 1, clock_timestamp() + $3::bigint * interval '1 microsecond') "
    "ON CONFLICT(namespace) DO UPDATE SET "
    "epoch = CASE WHEN l.holder = excluded.holder AND l.expires_at > clock_timestamp() "
    "THEN l.epoch ELSE l.epoch + 1 END, "
    "holder = excluded.holder, expires_at = excluded.expires_at "
    "WHERE l.expires_at <= clock_timestamp() OR l.holder = excluded.holder "
    "RETURNING " BULWARK_LEASE_ROW;
constexpr char kRenew[] =
    "UPDATE namespace_leases SET expires_at = clock_timestamp() + $4::bigint * interval '1 microsecond' "
    "WHERE namespace = $1 AND holder = $2 AND epoch = $3 AND expires_at > clock_timestamp() "
    "RETURNING " BULWARK_LEASE_ROW;
constexpr char kRelease[] =
    "UPDATE namespace_leases SET expires_at = LEAST(expires_at, clock_timestamp()) "
    "WHERE namespace = $1 AND holder = $2 AND epoch = $3";
constexpr char kCurrent[] = "SELECT " BULWARK_LEASE_ROW " FROM namespace_leases WHERE namespace = $1";
constexpr char kFence[] = "SELECT " BULWARK_LEASE_ROW " FROM namespace_leases WHERE namespace = $1 FOR SHARE";

#undef BULWARK_LEASE_ROW
#undef BULWARK_LEASE_US

absl::Status CheckName(std::string_view what, std::string_view name) {
  if (name.empty()) return absl::InvalidArgumentError(absl::StrCat("the lease ", ToAbsl(what), " is empty"));
  if (name.size() > kMaxLeaseNameBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("the lease ", ToAbsl(what), " is longer than ", kMaxLeaseNameBytes, " bytes"));
  }
  if (name.find('\0') != std::string_view::npos)
    return absl::InvalidArgumentError(absl::StrCat("the lease ", ToAbsl(what), " holds a NUL byte"));
  return absl::OkStatus();
}

absl::Status CheckNames(std::string_view name_space, std::string_view holder) {
  BULWARK_RETURN_IF_ERROR(CheckName("namespace", name_space));
  return CheckName("holder", holder);
}

absl::StatusOr<int64_t> TtlMicros(absl::Duration ttl) {
  const int64_t us = absl::ToInt64Microseconds(ttl);
  if (us < 1 || ttl > kMaxLeaseTtl) {
    return absl::InvalidArgumentError(absl::StrCat("a lease ttl must be in [1us, ",
                                                   absl::FormatDuration(kMaxLeaseTtl), "], not ",
                                                   absl::FormatDuration(ttl)));
  }
  return us;
}

// Row `row` of a result of BULWARK_LEASE_ROW columns.
Lease LeaseFromRow(std::string_view name_space, const pg::PgResult& r, int row) {
  Lease lease;
  lease.name_space = std::string(name_space);
  lease.holder = r.Bytes(row, 0);
  lease.epoch = r.Int(row, 1);
  lease.expires_at_us = r.Int(row, 2);
  lease.as_of_us = r.Int(row, 3);
  return lease;
}

std::string Describe(const Lease& lease) {
  if (!lease.live()) return absl::StrCat("epoch ", lease.epoch, " of holder ", lease.holder, ", expired");
  return absl::StrCat("epoch ", lease.epoch, " of holder ", lease.holder, ", live for another ",
                      (lease.expires_at_us - lease.as_of_us) / 1000, " ms");
}

// The reason a (holder, epoch) call found nothing to change: the namespace's row as it is now.
absl::Status NotHeld(pg::PgConnection& conn, std::string_view name_space, std::string_view verb,
                     std::string_view holder, int64_t epoch) {
  const std::vector<PgParam> key = {PgParam::Text(name_space)};
  BULWARK_ASSIGN_OR_RETURN(auto now, conn.Prepared("lease_current", kCurrent, key));
  const std::string state = now.rows() == 0
                                ? "was never leased"
                                : absl::StrCat("is at ", Describe(LeaseFromRow(name_space, now, 0)));
  return absl::FailedPreconditionError(absl::StrCat("cannot ", ToAbsl(verb), " the lease of namespace ",
                                                    ToAbsl(name_space), " as ", ToAbsl(holder), " epoch ",
                                                    epoch, ": it ", state));
}

}  // namespace

absl::Status CreateLeaseTable(pg::PgConnection& conn) {
  return pg::ExecSchema(conn, kLeaseSchema, "namespace_leases");
}

absl::StatusOr<std::unique_ptr<NamespaceLeases>> NamespaceLeases::Open(std::string_view conninfo) {
  BULWARK_ASSIGN_OR_RETURN(auto conn, pg::PgConnection::Open(conninfo));
  BULWARK_RETURN_IF_ERROR(CreateLeaseTable(*conn));
  return std::unique_ptr<NamespaceLeases>(new NamespaceLeases(std::move(conn)));
}

absl::StatusOr<Lease> NamespaceLeases::TryAcquire(std::string_view name_space, std::string_view holder,
                                                  absl::Duration ttl) {
  BULWARK_RETURN_IF_ERROR(CheckNames(name_space, holder));
  BULWARK_ASSIGN_OR_RETURN(const int64_t ttl_us, TtlMicros(ttl));
  absl::MutexLock lock(&mu_);
  const std::vector<PgParam> params = {PgParam::Text(name_space), PgParam::Text(holder),
                                       PgParam::Int(ttl_us)};
  BULWARK_ASSIGN_OR_RETURN(auto got, conn_->Prepared("lease_acquire", kAcquire, params));
  if (got.rows() == 1) return LeaseFromRow(name_space, got, 0);
  const std::vector<PgParam> key = {PgParam::Text(name_space)};
  BULWARK_ASSIGN_OR_RETURN(auto now, conn_->Prepared("lease_current", kCurrent, key));
  const std::string state =
      now.rows() == 0 ? "changed meanwhile" : Describe(LeaseFromRow(name_space, now, 0));
  return absl::FailedPreconditionError(
      absl::StrCat("namespace ", ToAbsl(name_space), " is leased by another holder (", state, ")"));
}

absl::StatusOr<Lease> NamespaceLeases::Renew(std::string_view name_space, std::string_view holder,
                                             int64_t epoch, absl::Duration ttl) {
  BULWARK_RETURN_IF_ERROR(CheckNames(name_space, holder));
  BULWARK_ASSIGN_OR_RETURN(const int64_t ttl_us, TtlMicros(ttl));
  if (epoch < 1) return absl::InvalidArgumentError("a lease epoch is at least 1");
  absl::MutexLock lock(&mu_);
  const std::vector<PgParam> params = {PgParam::Text(name_space), PgParam::Text(holder), PgParam::Int(epoch),
                                       PgParam::Int(ttl_us)};
  BULWARK_ASSIGN_OR_RETURN(auto got, conn_->Prepared("lease_renew", kRenew, params));
  if (got.rows() == 1) return LeaseFromRow(name_space, got, 0);
  return NotHeld(*conn_, name_space, "renew", holder, epoch);
}

absl::Status NamespaceLeases::Release(std::string_view name_space, std::string_view holder, int64_t epoch) {
  BULWARK_RETURN_IF_ERROR(CheckNames(name_space, holder));
  if (epoch < 1) return absl::InvalidArgumentError("a lease epoch is at least 1");
  absl::MutexLock lock(&mu_);
  const std::vector<PgParam> params = {PgParam::Text(name_space), PgParam::Text(holder), PgParam::Int(epoch)};
  BULWARK_ASSIGN_OR_RETURN(auto done, conn_->Prepared("lease_release", kRelease, params));
  if (done.AffectedRows() == 1) return absl::OkStatus();
  return NotHeld(*conn_, name_space, "release", holder, epoch);
}

absl::StatusOr<std::optional<Lease>> NamespaceLeases::Current(std::string_view name_space) {
  BULWARK_RETURN_IF_ERROR(CheckName("namespace", name_space));
  absl::MutexLock lock(&mu_);
  const std::vector<PgParam> key = {PgParam::Text(name_space)};
  BULWARK_ASSIGN_OR_RETURN(auto now, conn_->Prepared("lease_current", kCurrent, key));
  if (now.rows() == 0) return std::optional<Lease>();
  return std::optional<Lease>(LeaseFromRow(name_space, now, 0));
}

absl::Status CheckFence(pg::PgConnection& conn, const Fence& fence) {
  const std::vector<PgParam> key = {PgParam::Text(fence.name_space)};
  BULWARK_ASSIGN_OR_RETURN(auto row, conn.Prepared("lease_fence", kFence, key));
  if (row.rows() == 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "fenced: namespace ", fence.name_space, " has no lease (this writer holds epoch ", fence.epoch, ")"));
  }
  const Lease now = LeaseFromRow(fence.name_space, row, 0);
  if (now.epoch != fence.epoch || !now.live()) {
    return absl::FailedPreconditionError(absl::StrCat("fenced: namespace ", fence.name_space, " is at ",
                                                      Describe(now), "; this writer holds epoch ",
                                                      fence.epoch));
  }
  return absl::OkStatus();
}

}  // namespace bulwark
