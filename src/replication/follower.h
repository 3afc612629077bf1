// Follower: keeps this replica's copy of the namespaces placed on it up to date from the change
// feed (issue #17 point 2; doc/scale-out.md, "Replication").
//
// Placement: a namespace is held by the `copies` replicas of highest rendezvous weight over the
// replica list (storage/postgresql/rendezvous.h); this replica follows exactly the namespaces
// whose placement names it (its own leader namespaces included: the leader reads its writes back
// through the same feed).
//
// Applying. One thread reads the feed (change_feed.h) after the follower's cursor, in seq order,
// in bounded batches, and applies every event of a held namespace in that order: the entry's row
// (from the batch's snapshot) is verified -- it decodes, belongs to the event's namespace and
// entry, has the store's dimension and its HMAC tag checks under the keyring (provenance/
// signer.h) -- and only then put in the ReplicaIndex; a row that fails is never indexed (an
// earlier good version of it is dropped: the row is withheld, as EntryStore withholds it), and is
// counted and named in stats(). After a batch the cursor moves to the batch's `through`: every
// held namespace is then applied up to that version. Versions are history seqs, gap-free and in
// commit order (change_feed.h), so the cursor never passes an event that was not applied.
//
// Waking. The thread reads the feed at once when a LISTEN/NOTIFY hint (change_notify.h) arrives
// and in any case every `poll_interval`: a lost hint delays a follower by at most that interval.
//
// Connections. A lost feed connection is reopened before the next read (each poll interval); a
// lost listener connection likewise, once per poll interval (hints sent meanwhile are lost; the
// poll covers them).
//
// Read-your-writes. WaitForVersion(ns, v, deadline) returns once the namespace is applied up to
// version v (a VersionToken's), or Unavailable at the deadline: retryable (HTTP 503 with a
// Retry-After; the server may instead forward the read to the namespace's leader).
//
// Thread-safe.
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/status/status.h>
#include <absl/status/statusor.h>
#include <absl/synchronization/mutex.h>
#include <absl/time/time.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "provenance/keyring.h"
#include "provenance/signer.h"
#include "replication/replica_index.h"
#include "storage/postgresql/change_feed.h"
#include "storage/postgresql/change_notify.h"
#include "storage/postgresql/rendezvous.h"

namespace bulwark {

struct FollowerOptions {
  std::string replica_id;                                  // this replica; must be in `replicas`
  std::vector<std::string> replicas;                       // every replica of the cluster
  size_t copies = 2;                                       // R: replicas holding each namespace, >= 1
  int dimension = 0;                                       // the store's embedder dimension
  absl::Duration poll_interval = absl::Milliseconds(500);  // the bound on a lost hint's delay
  int batch = 500;                                         // events per feed read, 1..kMaxFeedBatch
  bool listen = true;  // wake up on LISTEN/NOTIFY hints (false: polling only)
  // Called for every applied event of a held namespace, in the order applied (tests, audit).
  std::function<void(int64_t version, std::string_view name_space)> on_apply;
};

struct FollowerStats {
  int64_t applied_version = 0;                 // the cursor: every held namespace is applied up to it
  int64_t events_applied = 0;                  // events of held namespaces
  int64_t rows_rejected = 0;                   // rows that failed verification (never indexed)
  int64_t polls = 0;                           // feed reads
  int64_t wakeups = 0;                         // hints received
  std::vector<std::string> recent_rejections;  // the last few, "namespace/id: reason"
  std::string last_error;                      // the last feed error, empty if none
};

class Follower {
 public:
  // Opens the feed (and the listener if options.listen) on `conninfo`, and, unless `start` is
  // false, starts the applying thread. `keyring` is not owned and must outlive the follower.
  // InvalidArgument for bad options (replica not in the list, copies 0, batch out of range, bad
  // dimension); the feed's errors (Unavailable, NotFound for a database without a store).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<Follower>> Open(std::string_view conninfo,
                                                                      const Keyring* keyring,
                                                                      FollowerOptions options,
                                                                      bool start = true);
  ~Follower();  // stops the thread (within about 100 ms)
  Follower(const Follower&) = delete;
  Follower& operator=(const Follower&) = delete;

  // True if the placement puts `name_space` on this replica.
  bool Holds(std::string_view name_space) const;
  // The version up to which `name_space` is applied. FailedPrecondition if it is not held here.
  [[nodiscard]] absl::StatusOr<int64_t> AppliedVersion(std::string_view name_space) const;
  // Waits until `name_space` is applied up to `version`. OK at once if it already is;
  // FailedPrecondition if the namespace is not held here (route the read to a replica that holds
  // it); Unavailable (retryable, naming both versions) if the deadline passes first.
  [[nodiscard]] absl::Status WaitForVersion(std::string_view name_space, int64_t version,
                                            absl::Time deadline);

  // Reads one batch of the feed and applies it (what the thread does; tests without the thread
  // call it). Returns how many events it read. The feed's errors (the cursor does not move).
  [[nodiscard]] absl::StatusOr<int> PollOnce();

  const ReplicaIndex& index() const { return *index_; }
  FollowerStats stats() const;

 private:
  Follower(std::string conninfo, FollowerOptions options, RendezvousPlacement placement,
           const Keyring* keyring, std::unique_ptr<ReplicaIndex> index)
      : conninfo_(std::move(conninfo)),
        options_(std::move(options)),
        placement_(std::move(placement)),
        signer_(keyring),
        index_(std::move(index)) {}
  void Run();  // the thread
  // Reads batches until one is not full (or stopping). The first error.
  absl::Status CatchUp();
  // Waits for a hint or the poll interval (or stopping).
  void Sleep();
  // Verifies and indexes (or drops) the row of one event. Requires apply_mu_.
  void ApplyLocked(const FeedEvent& event) ABSL_EXCLUSIVE_LOCKS_REQUIRED(apply_mu_);
  void Reject(const FeedEvent& event, const absl::Status& why) ABSL_EXCLUSIVE_LOCKS_REQUIRED(apply_mu_);
  // OK if the row may be indexed for this event (see the file comment).
  absl::Status CheckRow(const FeedEvent& event, const StoredRow& row) const;

  // Reopens the feed after its connection was lost. Requires apply_mu_.
  absl::Status ReopenFeedIfLost() ABSL_EXCLUSIVE_LOCKS_REQUIRED(apply_mu_);

  const std::string conninfo_;
  const FollowerOptions options_;
  const RendezvousPlacement placement_;
  const Signer signer_;
  std::unique_ptr<ReplicaIndex> index_;
  // One applier at a time (the thread, or a test's PollOnce).
  absl::Mutex apply_mu_;
  std::unique_ptr<ChangeFeed> feed_ ABSL_GUARDED_BY(apply_mu_);
  bool feed_lost_ ABSL_GUARDED_BY(apply_mu_) = false;  // reopen before the next read
  // Only the thread uses it; null: polling only (options.listen false, or the connection was
  // lost: reopened at most once per poll interval).
  std::unique_ptr<ChangeListener> listener_;

  mutable absl::Mutex mu_;  // guards what follows; waiters Await applied_
  int64_t applied_ ABSL_GUARDED_BY(mu_) = 0;
  FollowerStats stats_ ABSL_GUARDED_BY(mu_);
  // Placement cache, bounded (a read may name any namespace): kMaxCachedPlacements entries.
  mutable absl::flat_hash_map<std::string, bool> holds_ ABSL_GUARDED_BY(mu_);

  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace bulwark
