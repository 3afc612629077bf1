// ReplicaCoordinator: one `bulwark serve` replica's part in a group of replicas over one
// PostgreSQL store (issue #17 point 2; doc/scale-out.md, "Replicas in bulwark serve"). It
//
//   - announces the replica in the store's directory (replica_directory.h) and keeps its
//     heartbeat fresh from a thread;
//   - decides where a write of a namespace runs (RouteWrite): here when this replica holds the
//     namespace's lease (NamespaceLeadership fences the backend's writes with its epoch), else at
//     the lease holder's advertised URL, else (no live lease) at the first live replica of the
//     namespace's rendezvous placement, which takes the lease when the write reaches it;
//   - sends the LISTEN/NOTIFY wake-up hint after each committed write (Committed), and applies
//     the store's change feed from a follower thread on every hint and every poll interval (the
//     `catch_up` callback: EntryStore::CatchUpNow, which applies events in seq order);
//   - waits, bounded, for a read's minimum version (WaitApplied);
//   - with placement hooks, holds only the namespaces rendezvous hashing places on this replica
//     (replica_placement.h): reconciled at start and after every heartbeat against the live
//     replicas, and says where a read of a namespace held elsewhere goes (RouteRead).
//
// Safety never rests on this class: a write is accepted only inside a transaction that checks the
// lease's epoch (namespace_lease.h, CheckFence), so a replica with a stale view forwards to the
// wrong place or refuses, and never forks a namespace.
//
// Thread-safe.
#pragma once

#include <absl/base/thread_annotations.h>
#include <absl/container/flat_hash_map.h>
#include <absl/status/statusor.h>
#include <absl/synchronization/mutex.h>
#include <absl/time/time.h>

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "replication/namespace_leadership.h"
#include "replication/replica_directory.h"
#include "replication/replica_placement.h"
#include "storage/postgresql/change_notify.h"
#include "storage/postgresql/namespace_lease.h"
#include "storage/postgresql/postgres_backend.h"

namespace bulwark {

struct ReplicaOptions {
  std::string replica_id;     // 1..256 bytes, unique in the group
  std::string advertise_url;  // where the other replicas reach this one (http://HOST:PORT)
  size_t copies = 2;          // R: the replicas a namespace is placed on (its leader is the first)
  // A leader's lease; a dead leader's namespaces are taken over after at most this long.
  absl::Duration lease_ttl = absl::Seconds(10);
  // The follower's poll interval: a lost NOTIFY hint delays it by at most this much.
  absl::Duration poll_every = absl::Milliseconds(500);
};

class ReplicaCoordinator {
 public:
  // Where a write runs.
  struct WriteRoute {
    enum class Kind { kLocal, kForward, kUnavailable };
    Kind kind = Kind::kUnavailable;
    std::string url;  // kForward: the replica to send it to
    std::string why;  // kUnavailable: for the 503's message
  };

  // Opens the lease table, the directory, the notifier and the listener on `conninfo`, announces
  // this replica and starts the heartbeat and follower threads. `backend` is the store's entry
  // backend (fenced by the leaderships); `catch_up` applies the feed and returns the newest seq
  // applied. Both must outlive this object. InvalidArgument for an empty replica id, copies == 0
  // or a lease ttl under 1 s; Unavailable if the database cannot be reached. `placement` set (its
  // hooks all non-empty): this replica holds only the namespaces placed on it, loaded before Start
  // returns; empty hooks: it holds every namespace.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<ReplicaCoordinator>> Start(
      std::string_view conninfo, ReplicaOptions options, PostgresBackend* backend,
      std::function<absl::StatusOr<int64_t>()> catch_up, PlacementHooks placement = {});
  // Stops the threads, releases the leases still held and removes this replica's directory row.
  ~ReplicaCoordinator();
  ReplicaCoordinator(const ReplicaCoordinator&) = delete;
  ReplicaCoordinator& operator=(const ReplicaCoordinator&) = delete;

  // Where a write of `name_space` runs (see the file comment). `forwarded`: the request already
  // came from another replica, so it is not sent on again; this replica leads it if the lease is
  // free. kUnavailable when the lease is held by a replica the directory does not know, or the
  // database cannot be reached.
  WriteRoute RouteWrite(std::string_view name_space, bool forwarded);
  // After a write of `name_space` committed here: the followers' wake-up hint.
  void Committed(std::string_view name_space);
  // A write here was refused by the fence: this replica no longer leads `name_space`.
  void Fenced(std::string_view name_space);
  // A write forwarded to the route RouteWrite gave did not get through (no answer, or a 503):
  // the next write of `name_space` asks the lease table again.
  void ForwardFailed(std::string_view name_space);
  // Waits until every event up to `version` is applied here, at most `max_wait`; returns the
  // newest applied seq. Unavailable (naming both versions, ending in "retry") past the wait.
  [[nodiscard]] absl::StatusOr<int64_t> WaitApplied(int64_t version, absl::Duration max_wait);

  // Where a read of `name_space` runs (ReplicaPlacement::RouteRead); always here without placement.
  ReplicaPlacement::ReadRoute RouteRead(std::string_view name_space, bool forwarded);
  // Whether this replica leads `name_space` now (a live leadership).
  bool Leads(std::string_view name_space);
  // The same without waiting: false while another thread holds the leadership table (taking a
  // lease, which may load a namespace). For a search's path, which must not wait for that.
  bool LeadsNoWait(std::string_view name_space);
  // The live replica ids as last read from the directory (this one included), sorted.
  std::vector<std::string> LiveReplicas() const;

  const std::string& incarnation() const { return self_.incarnation; }
  const ReplicaOptions& options() const { return options_; }

 private:
  ReplicaCoordinator(ReplicaOptions options, PostgresBackend* backend,
                     std::function<absl::StatusOr<int64_t>()> catch_up);
  // Takes the lease of `name_space` here; on losing the race, the holder's route.
  WriteRoute Lead(std::string_view name_space) ABSL_EXCLUSIVE_LOCKS_REQUIRED(lead_mu_);
  // The route to the live holder of `lease`.
  WriteRoute ToHolder(const Lease& lease);
  // The first live replica of the namespace's placement, or "" if none is live.
  absl::StatusOr<ReplicaInfo> PreferredLeader(std::string_view name_space);
  void HeartbeatLoop();
  void PlacementLoop();
  // Reads the live replicas and reconciles the namespaces held here (no-op without placement).
  void RefreshPlacement();
  void FollowLoop();
  // Sleeps up to `d`; false once stopping.
  bool SleepUnlessStopping(absl::Duration d);

  const ReplicaOptions options_;
  PostgresBackend* const backend_;
  const std::function<absl::StatusOr<int64_t>()> catch_up_;
  std::string conninfo_;
  ReplicaInfo self_;
  std::unique_ptr<NamespaceLeases> leases_;
  std::unique_ptr<ReplicaDirectory> directory_;
  std::unique_ptr<CoalescingNotifier> notifier_;
  std::unique_ptr<ChangeListener> listener_;  // only the follower thread uses it
  PlacementHooks placement_hooks_;
  std::unique_ptr<ReplicaPlacement> placement_;  // null: every namespace is held
  // The live replica ids at the last RefreshPlacement and since when (the placement thread's).
  std::vector<std::string> last_live_ids_;
  absl::Time live_since_ = absl::InfinitePast();

  // Serializes taking leases, so two workers never take one namespace twice.
  absl::Mutex lead_mu_;
  absl::flat_hash_map<std::string, std::unique_ptr<NamespaceLeadership>> leaders_ ABSL_GUARDED_BY(lead_mu_);

  // The leader's URL per namespace as the lease table last said, for at most kRouteCacheTtl and
  // never past the lease (so a forwarding replica does not query the lease and the directory for
  // every write). A stale entry only sends a write to a replica that refuses or re-routes it.
  struct CachedRoute {
    std::string url;
    absl::Time until;
  };
  static constexpr absl::Duration kRouteCacheTtl = absl::Milliseconds(500);
  static constexpr size_t kMaxCachedRoutes = 4096;
  void CacheRoute(const Lease& lease, const std::string& url);
  absl::Mutex route_mu_;
  absl::flat_hash_map<std::string, CachedRoute> routes_ ABSL_GUARDED_BY(route_mu_);

  absl::Mutex stop_mu_;
  bool stopping_ ABSL_GUARDED_BY(stop_mu_) = false;
  std::thread heartbeat_thread_;
  std::thread follow_thread_;
  std::thread placement_thread_;
};

}  // namespace bulwark
