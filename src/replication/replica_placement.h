// ReplicaPlacement: which namespaces one `bulwark serve` replica holds, and where a read of a
// namespace it does not hold goes (issue #17 point 2; doc/scale-out.md, "Placement"). Namespaces
// are placed on the live replicas by rendezvous hashing with R copies (rendezvous.h), so each
// replica holds about R/N of the namespaces and of their vectors:
//
//   - SetLive gives the live replicas (the directory's view, refreshed by the coordinator every
//     heartbeat); Reconcile then loads every namespace now placed here that is not held (hooks.hold:
//     EntryStore::HoldNamespace, which verifies every row it indexes) and drops every namespace held
//     here that is placed elsewhere, except the ones `keep` names (the namespaces this replica
//     leads: a leader always holds what it writes);
//   - RouteRead says where a read of a namespace runs: here when it is held; here after loading it
//     when it is placed here (a replica that joined, or a namespace created since the last
//     Reconcile) or the read was already forwarded once (never forwarded twice); else at the
//     namespace's live holders, in placement order (the caller tries them in turn).
//
// Placement only decides where vectors live and where reads go; it decides nothing about who may
// write (the lease's fence does). Thread-safe.
#pragma once

#include <absl/base/thread_annotations.h>
#include <absl/status/status.h>
#include <absl/synchronization/mutex.h>

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "replication/replica_directory.h"

namespace bulwark {

// What a replica's store does for placement (EntryStore's placement calls in serve).
struct PlacementHooks {
  std::function<absl::Status(std::string_view)> hold;  // loads a namespace; OK if already held
  std::function<void(std::string_view)> drop;          // drops a held namespace
  std::function<bool(std::string_view)> holds;
  std::function<std::vector<std::string>()> known;  // every namespace of the store seen so far
  // Optional (ReplicaCoordinator): runs when this replica becomes a namespace's leader, after the
  // feed is applied and before its first write: the write gate's state of the namespace is
  // reloaded from the store (the previous leader's). An error refuses the leadership.
  std::function<absl::Status(std::string_view)> on_lead;
};

class ReplicaPlacement {
 public:
  // Where a read runs.
  struct ReadRoute {
    enum class Kind { kLocal, kForward, kUnavailable };
    Kind kind = Kind::kUnavailable;
    std::vector<std::string> urls;  // kForward: the live holders' URLs, in placement order
    std::string why;                // kUnavailable: for the 503's message
  };
  struct Counts {
    int held = 0;     // namespaces held after the reconcile
    int loaded = 0;   // loaded by it
    int dropped = 0;  // dropped by it
  };

  // `self` is always counted live. Every hook must be set.
  ReplicaPlacement(ReplicaInfo self, size_t copies, PlacementHooks hooks);

  // The live replicas (self is added if missing). Duplicated ids keep their first entry.
  void SetLive(std::vector<ReplicaInfo> live);
  // The namespace's live holders, at most R, placement order (the first is the preferred leader).
  std::vector<ReplicaInfo> Holders(std::string_view name_space) const;
  bool PlacedHere(std::string_view name_space) const;
  // Loads the namespaces placed here (only if `load`), drops the others except those `keep`
  // accepts (see the file comment). Returns the counts; the first load error otherwise (the other
  // loads still ran, and a namespace that failed is loaded again by the next Reconcile or read).
  [[nodiscard]] absl::StatusOr<Counts> Reconcile(const std::function<bool(std::string_view)>& keep,
                                                 bool load = true);
  // Where a read of `name_space` runs (see the file comment); kUnavailable when loading it failed
  // or no other live replica holds it.
  ReadRoute RouteRead(std::string_view name_space, bool forwarded);
  // The live replica ids, sorted.
  std::vector<std::string> LiveIds() const;

 private:
  const ReplicaInfo self_;
  const size_t copies_;
  const PlacementHooks hooks_;
  mutable absl::Mutex mu_;
  std::vector<ReplicaInfo> live_ ABSL_GUARDED_BY(mu_);  // sorted by replica id, self included
};

}  // namespace bulwark
