// NamespaceLeases: one leader per namespace, by a lease with a fencing epoch kept in PostgreSQL
// (issue #17 point 2; the design is the research note ecosystem.md, section 5.2). The write gate's
// per-namespace state (quarantine, calibration, query history) must not be split between two
// writers: each namespace has at most one holder at a time, and every write transaction of the
// holder checks, in the same transaction, that its epoch is still the namespace's (CheckFence).
//
// The table `namespace_leases(namespace, holder, epoch, expires_at)` lives in the store's
// database (so that the backend's write transactions can read it). Its rows are never deleted:
// a namespace's epoch only grows (Release expires a lease and keeps its epoch), so an epoch is
// never handed out twice.
//
// Time is the database's (clock_timestamp()), never a replica's: replicas may have skewed or
// jumping clocks, and expiry is decided by one clock only.
//
// What a holder may assume. A Lease returned by TryAcquire or Renew says: at `as_of_us`
// (database time) this holder held `epoch` until `expires_at_us`. Nobody else can be granted the
// namespace before `expires_at_us` of the database's clock, unless this holder releases it. (A
// step of the database host's clock shortens or stretches leases; it cannot let two holders
// write, since every fenced write compares epochs, and epochs only grow.) A holder that wants to act on its
// own clock (e.g. stop serving leader-only reads) must count conservatively: from the moment it
// SENT the request, at most (expires_at_us - as_of_us), minus a margin for clock rate error.
// But a holder's own clock is never what keeps its writes safe: a holder paused past its lease
// (SIGSTOP, a GC pause, a stalled VM) wakes up believing it still leads. Its writes are refused
// by fencing: CheckFence runs inside the write transaction and fails once the epoch moved on or
// the lease expired, and a takeover waits for every write transaction that already passed the
// fence to end (the fence holds a FOR SHARE lock on the lease row; TryAcquire updates that row),
// so in commit order all writes of epoch e precede the grant of epoch e+1.
//
// Status codes. FailedPrecondition means "you are not (or no longer) the holder": TryAcquire of
// a lease held by someone else, Renew / Release of a lease whose epoch moved on or expired, and a
// fenced write. It is not Aborted on purpose: Aborted in this code base means "retry the same
// call" (a compare-and-set conflict, a serialization failure), while a fenced holder must not
// retry; it must step down and, if it still wants the namespace, TryAcquire a new epoch.
// InvalidArgument for an empty or oversized namespace or holder, a holder with a NUL byte, or a
// ttl outside (0, kMaxLeaseTtl]. Unavailable / Internal from the connection (pg_connection.h).
//
// Holder ids must be unique per process incarnation (e.g. replica id + boot id): two processes
// sharing a holder id would share a lease.
//
// Thread-safe: one connection, serialized by a mutex. A lost connection (the server restarted or
// failed over) fails the call that meets it with Unavailable and is reopened by the next call
// (pg_connection.h); a holder that cannot renew steps down on its own clock meanwhile.
#pragma once

#include <absl/status/status.h>
#include <absl/status/statusor.h>
#include <absl/synchronization/mutex.h>
#include <absl/time/time.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "storage/postgresql/pg_connection.h"

namespace bulwark {

// The longest lease TryAcquire and Renew grant; the bound keeps a typo from parking a namespace.
inline constexpr absl::Duration kMaxLeaseTtl = absl::Hours(1);
// The longest namespace and holder names accepted (bytes).
inline constexpr size_t kMaxLeaseNameBytes = 256;

// A lease as the database saw it (all times are database microseconds since the Unix epoch).
struct Lease {
  std::string name_space;
  std::string holder;
  int64_t epoch = 0;
  int64_t expires_at_us = 0;
  int64_t as_of_us = 0;  // the database's time when it answered
  // True if the lease had not expired when the database answered.
  bool live() const { return expires_at_us > as_of_us; }
};

// What a write transaction checks: that `epoch` is still the live epoch of `name_space`.
struct Fence {
  std::string name_space;
  int64_t epoch = 0;
};

class NamespaceLeases {
 public:
  // Connects and creates the lease table if it does not exist (under the schema lock of
  // ExecSchema, so concurrent openers do not race). Unavailable if the server cannot be reached.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<NamespaceLeases>> Open(std::string_view conninfo);

  // Takes the lease of `name_space` for `holder` for `ttl` when it is free (never leased,
  // released or expired): the epoch becomes the previous one + 1 (1 for a namespace never
  // leased). If `holder` already holds a live lease, renews it with the same epoch. Of several
  // holders racing for a free lease exactly one wins (one conditional upsert; the row lock
  // serializes them). FailedPrecondition (naming the holder) if another holder's lease is live.
  [[nodiscard]] absl::StatusOr<Lease> TryAcquire(std::string_view name_space, std::string_view holder,
                                                 absl::Duration ttl);
  // Extends the live lease (`holder`, `epoch`) to now + ttl. FailedPrecondition if it expired or
  // the epoch moved on (then nothing changed: TryAcquire again for a new epoch).
  [[nodiscard]] absl::StatusOr<Lease> Renew(std::string_view name_space, std::string_view holder,
                                            int64_t epoch, absl::Duration ttl);
  // Ends the lease (`holder`, `epoch`) now, keeping its epoch, so that the next TryAcquire by
  // anyone gets epoch + 1 at once. OK also if it had already expired (and was not taken over);
  // FailedPrecondition if the epoch moved on (nothing changed).
  [[nodiscard]] absl::Status Release(std::string_view name_space, std::string_view holder, int64_t epoch);
  // The namespace's lease row (live or expired; see Lease::live), or nullopt if it was never
  // leased.
  [[nodiscard]] absl::StatusOr<std::optional<Lease>> Current(std::string_view name_space);

 private:
  explicit NamespaceLeases(std::unique_ptr<pg::PgConnection> conn) : conn_(std::move(conn)) {}

  absl::Mutex mu_;  // serializes all use of conn_
  std::unique_ptr<pg::PgConnection> conn_ ABSL_GUARDED_BY(mu_);
};

// Creates the lease table on `conn` if missing (NamespaceLeases::Open calls it; so may a backend
// that fences its writes).
[[nodiscard]] absl::Status CreateLeaseTable(pg::PgConnection& conn);

// The fence of a write transaction: call it inside the transaction (after BEGIN, before the
// writes). It locks the namespace's lease row FOR SHARE until the transaction ends, so that no
// takeover commits between this check and the transaction's commit; a takeover already in flight
// is waited for and then seen. OK if `fence.epoch` is the namespace's epoch and its lease is live
// by the database's clock; FailedPrecondition if the namespace was never leased, the epoch moved
// on (naming the new epoch and holder), or the lease expired (a holder paused past its ttl: the
// write is refused even if nobody took over yet). The caller must then roll back.
[[nodiscard]] absl::Status CheckFence(pg::PgConnection& conn, const Fence& fence);

}  // namespace bulwark
