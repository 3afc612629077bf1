// Which namespaces a replica holds and where reads go (see replica_placement.h).
#include "replication/replica_placement.h"

#include <absl/strings/str_cat.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

#include "storage/postgresql/rendezvous.h"

namespace bulwark {

ReplicaPlacement::ReplicaPlacement(ReplicaInfo self, size_t copies, PlacementHooks hooks)
    : self_(std::move(self)), copies_(std::max<size_t>(copies, 1)), hooks_(std::move(hooks)) {
  live_ = {self_};
}

void ReplicaPlacement::SetLive(std::vector<ReplicaInfo> live) {
  live.push_back(self_);  // this replica is live by definition, even if its heartbeat is late
  std::stable_sort(live.begin(), live.end(),
                   [](const ReplicaInfo& a, const ReplicaInfo& b) { return a.replica_id < b.replica_id; });
  live.erase(
      std::unique(live.begin(), live.end(),
                  [](const ReplicaInfo& a, const ReplicaInfo& b) { return a.replica_id == b.replica_id; }),
      live.end());
  // A replica id restarted under a new incarnation: this process's own entry wins for itself.
  for (ReplicaInfo& r : live) {
    if (r.replica_id == self_.replica_id) r = self_;
  }
  absl::MutexLock lock(&mu_);
  live_ = std::move(live);
}

std::vector<ReplicaInfo> ReplicaPlacement::Holders(std::string_view name_space) const {
  absl::ReaderMutexLock lock(&mu_);
  std::vector<std::string> ids;
  ids.reserve(live_.size());
  for (const ReplicaInfo& r : live_) ids.push_back(r.replica_id);
  absl::StatusOr<RendezvousPlacement> placement = RendezvousPlacement::Create(std::move(ids));
  if (!placement.ok()) return {self_};  // ids are unique and valid by construction
  std::vector<ReplicaInfo> holders;
  for (const std::string& id : placement->Place(name_space, copies_)) {
    const auto it =
        std::lower_bound(live_.begin(), live_.end(), id,
                         [](const ReplicaInfo& r, const std::string& v) { return r.replica_id < v; });
    if (it != live_.end() && it->replica_id == id) holders.push_back(*it);
  }
  return holders;
}

bool ReplicaPlacement::PlacedHere(std::string_view name_space) const {
  for (const ReplicaInfo& r : Holders(name_space)) {
    if (r.replica_id == self_.replica_id) return true;
  }
  return false;
}

absl::StatusOr<ReplicaPlacement::Counts> ReplicaPlacement::Reconcile(
    const std::function<bool(std::string_view)>& keep, bool load) {
  Counts counts;
  absl::Status first_error;
  for (const std::string& ns : hooks_.known()) {
    const bool held = hooks_.holds(ns);
    if (PlacedHere(ns)) {
      if (!held && !load) continue;
      if (!held) {
        if (absl::Status s = hooks_.hold(ns); !s.ok()) {
          spdlog::warn("loading namespace '{}' placed here: {}", ns, s.ToString());
          if (first_error.ok()) first_error = s;
          continue;
        }
        ++counts.loaded;
      }
      ++counts.held;
    } else if (held) {
      if (keep && keep(ns)) {
        ++counts.held;
        continue;
      }
      hooks_.drop(ns);
      ++counts.dropped;
    }
  }
  if (!first_error.ok()) return first_error;
  return counts;
}

ReplicaPlacement::ReadRoute ReplicaPlacement::RouteRead(std::string_view name_space, bool forwarded) {
  ReadRoute route;
  if (hooks_.holds(name_space)) {
    route.kind = ReadRoute::Kind::kLocal;
    return route;
  }
  const std::vector<ReplicaInfo> holders = Holders(name_space);
  const bool here = std::any_of(holders.begin(), holders.end(),
                                [&](const ReplicaInfo& r) { return r.replica_id == self_.replica_id; });
  if (here || forwarded) {  // a forwarded read is never forwarded again: views may differ
    if (absl::Status s = hooks_.hold(name_space); !s.ok()) {
      route.why = absl::StrCat("loading the namespace: ", s.message());
      return route;
    }
    route.kind = ReadRoute::Kind::kLocal;
    return route;
  }
  for (const ReplicaInfo& r : holders) route.urls.push_back(r.url);
  if (route.urls.empty()) {
    route.why = "no live replica holds the namespace";
    return route;
  }
  route.kind = ReadRoute::Kind::kForward;
  return route;
}

std::vector<std::string> ReplicaPlacement::LiveIds() const {
  absl::ReaderMutexLock lock(&mu_);
  std::vector<std::string> ids;
  for (const ReplicaInfo& r : live_) ids.push_back(r.replica_id);
  return ids;
}

}  // namespace bulwark
