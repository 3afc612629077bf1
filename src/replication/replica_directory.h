// ReplicaDirectory: the replicas of one PostgreSQL store, as they announce themselves (issue #17
// point 2; doc/scale-out.md, "Replicas in bulwark serve"). Every `bulwark serve --replica-id ID`
// writes a row (incarnation, replica id, advertised URL, heartbeat) into the table `replicas` of
// the store's database and refreshes its heartbeat every few seconds; the others read the table
// to find a namespace's leader (by the lease holder, which is the incarnation) and the live
// replicas a namespace is placed on (rendezvous.h).
//
// The table is a directory, never a source of authority: whatever it says, a write is accepted
// only by the holder of the namespace's lease, and every write transaction checks the lease's
// epoch (namespace_lease.h). A stale or forged row can only send a forwarded request to the wrong
// address, whose answer is then a refusal (the API key is checked there) or a timeout.
//
// Times are the database's (clock_timestamp()), as for leases. Thread-safe: one connection,
// serialized by a mutex; a lost connection is reopened at the next call.
#pragma once

#include <absl/status/statusor.h>
#include <absl/synchronization/mutex.h>
#include <absl/time/time.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "storage/postgresql/pg_connection.h"

namespace bulwark {

// The longest advertised URL accepted (bytes).
inline constexpr size_t kMaxReplicaUrlBytes = 512;

struct ReplicaInfo {
  std::string incarnation;  // unique per process start: "<replica id>/<random hex>"
  std::string replica_id;
  std::string url;  // e.g. http://10.0.0.5:8420
};

class ReplicaDirectory {
 public:
  // Connects and creates the table if missing. Unavailable if the server cannot be reached.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<ReplicaDirectory>> Open(std::string_view conninfo);

  // Writes (or refreshes) this incarnation's row with the database's time as its heartbeat.
  // InvalidArgument for an empty or oversized id, incarnation or URL, or a URL that is not
  // http:// or https://; the connection's errors.
  [[nodiscard]] absl::Status Heartbeat(const ReplicaInfo& self);
  // Removes this incarnation's row (a clean stop); OK if it was not there.
  [[nodiscard]] absl::Status Remove(std::string_view incarnation);
  // The replicas whose heartbeat is younger than `ttl`, the newest incarnation of each replica id,
  // ordered by replica id.
  [[nodiscard]] absl::StatusOr<std::vector<ReplicaInfo>> Live(absl::Duration ttl);
  // The row of an incarnation (live or not), or nullopt.
  [[nodiscard]] absl::StatusOr<std::optional<ReplicaInfo>> Find(std::string_view incarnation);

 private:
  ReplicaDirectory(std::string conninfo, std::unique_ptr<pg::PgConnection> conn)
      : conninfo_(std::move(conninfo)), conn_(std::move(conn)) {}
  // The connection, reopened if it was lost. Requires mu_.
  absl::StatusOr<pg::PgConnection*> ConnectionLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string conninfo_;
  absl::Mutex mu_;
  std::unique_ptr<pg::PgConnection> conn_ ABSL_GUARDED_BY(mu_);
};

// A new incarnation id for `replica_id`: the id, '/', and 16 random hex digits.
std::string NewIncarnation(std::string_view replica_id);

}  // namespace bulwark
