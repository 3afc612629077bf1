// One replica's leadership, forwarding decisions and follower loop (see replica_coordinator.h).
#include "replication/replica_coordinator.h"

#include <absl/strings/str_cat.h>
#include <malloc.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "core/status_macros.h"
#include "core/strings.h"
#include "storage/postgresql/rendezvous.h"

namespace bulwark {
namespace {

using WriteRoute = ReplicaCoordinator::WriteRoute;

WriteRoute Local() { return {WriteRoute::Kind::kLocal, "", ""}; }
WriteRoute Forward(std::string url) { return {WriteRoute::Kind::kForward, std::move(url), ""}; }
WriteRoute Unavailable(std::string why) { return {WriteRoute::Kind::kUnavailable, "", std::move(why)}; }

}  // namespace

absl::StatusOr<std::unique_ptr<ReplicaCoordinator>> ReplicaCoordinator::Start(
    std::string_view conninfo, ReplicaOptions options, PostgresBackend* backend,
    std::function<absl::StatusOr<int64_t>()> catch_up, PlacementHooks placement) {
  if (options.replica_id.empty() || options.replica_id.size() > kMaxReplicaIdBytes ||
      options.replica_id.find('/') != std::string::npos) {
    return absl::InvalidArgumentError("a replica id is 1..256 bytes without '/'");
  }
  if (options.copies == 0) return absl::InvalidArgumentError("the replication factor must be at least 1");
  if (options.lease_ttl < absl::Seconds(1) || options.lease_ttl > absl::Minutes(10)) {
    return absl::InvalidArgumentError("the lease ttl must be between 1 s and 10 min");
  }
  if (backend == nullptr || !catch_up)
    return absl::InvalidArgumentError("replication needs a PostgreSQL store");
  std::unique_ptr<ReplicaCoordinator> c(
      new ReplicaCoordinator(std::move(options), backend, std::move(catch_up)));
  c->conninfo_ = std::string(conninfo);
  c->self_ = {NewIncarnation(c->options_.replica_id), c->options_.replica_id, c->options_.advertise_url};
  BULWARK_ASSIGN_OR_RETURN(c->leases_, NamespaceLeases::Open(conninfo));
  BULWARK_ASSIGN_OR_RETURN(c->directory_, ReplicaDirectory::Open(conninfo));
  BULWARK_RETURN_IF_ERROR(c->directory_->Heartbeat(c->self_));
  c->placement_hooks_ = placement;
  if (placement.hold && placement.drop && placement.holds && placement.known) {
    c->placement_ = std::make_unique<ReplicaPlacement>(c->self_, c->options_.copies, std::move(placement));
    c->RefreshPlacement();  // reads load a namespace placed here before they run
  }
  BULWARK_ASSIGN_OR_RETURN(c->notifier_, CoalescingNotifier::Start(conninfo));
  BULWARK_ASSIGN_OR_RETURN(c->listener_, ChangeListener::Open(conninfo));
  c->heartbeat_thread_ = std::thread([p = c.get()] { p->HeartbeatLoop(); });
  c->follow_thread_ = std::thread([p = c.get()] { p->FollowLoop(); });
  if (c->placement_ != nullptr) c->placement_thread_ = std::thread([p = c.get()] { p->PlacementLoop(); });
  spdlog::info("replica {} ({}) at {}: R = {}, lease {}", c->options_.replica_id, c->self_.incarnation,
               c->self_.url, c->options_.copies, absl::FormatDuration(c->options_.lease_ttl));
  return c;
}

ReplicaCoordinator::ReplicaCoordinator(ReplicaOptions options, PostgresBackend* backend,
                                       std::function<absl::StatusOr<int64_t>()> catch_up)
    : options_(std::move(options)), backend_(backend), catch_up_(std::move(catch_up)) {}

ReplicaCoordinator::~ReplicaCoordinator() {
  {
    absl::MutexLock lock(&stop_mu_);
    stopping_ = true;
  }
  if (heartbeat_thread_.joinable()) heartbeat_thread_.join();
  if (follow_thread_.joinable()) follow_thread_.join();
  if (placement_thread_.joinable()) placement_thread_.join();
  {
    absl::MutexLock lock(&lead_mu_);
    leaders_.clear();  // each releases its lease if still leading
  }
  if (directory_ != nullptr) {
    if (absl::Status s = directory_->Remove(self_.incarnation); !s.ok())
      spdlog::warn("replica directory: {}", s.ToString());
  }
}

bool ReplicaCoordinator::SleepUnlessStopping(absl::Duration d) {
  absl::MutexLock lock(&stop_mu_);
  stop_mu_.AwaitWithTimeout(absl::Condition(&stopping_), d);
  return !stopping_;
}

void ReplicaCoordinator::HeartbeatLoop() {
  while (SleepUnlessStopping(options_.lease_ttl / 4)) {
    if (absl::Status s = directory_->Heartbeat(self_); !s.ok())
      spdlog::warn("replica heartbeat: {}", s.ToString());
  }
}

void ReplicaCoordinator::PlacementLoop() {
  // Its own thread: loading a large namespace never delays the heartbeat.
  while (SleepUnlessStopping(options_.lease_ttl / 4)) RefreshPlacement();
}

void ReplicaCoordinator::RefreshPlacement() {
  if (placement_ == nullptr) return;
  absl::StatusOr<std::vector<ReplicaInfo>> live = directory_->Live(options_.lease_ttl);
  if (!live.ok()) {
    spdlog::warn("replica directory: {}; placement unchanged", live.status().ToString());
    return;
  }
  // Namespaces newly placed here are loaded ahead of reads only once the live replicas have not
  // changed for a lease ttl: replicas starting one after the other would otherwise each load
  // everything first (and a dropped namespace's memory is not always returned to the system).
  std::vector<std::string> ids;
  for (const ReplicaInfo& r : *live) ids.push_back(r.replica_id);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  const absl::Time now = absl::Now();
  if (ids != last_live_ids_) {
    last_live_ids_ = ids;
    live_since_ = now;
  }
  const bool settled = now - live_since_ >= options_.lease_ttl;
  placement_->SetLive(*std::move(live));
  absl::StatusOr<ReplicaPlacement::Counts> counts =
      placement_->Reconcile([this](std::string_view ns) { return Leads(ns); }, settled);
  if (counts.ok() && counts->dropped > 0) malloc_trim(0);  // the dropped indexes' pages
  if (!counts.ok()) {
    spdlog::warn("placement: {}", counts.status().ToString());
  } else if (counts->loaded > 0 || counts->dropped > 0) {
    spdlog::info("placement over {} live replicas: {} namespaces held ({} loaded, {} dropped)",
                 placement_->LiveIds().size(), counts->held, counts->loaded, counts->dropped);
  }
}

ReplicaPlacement::ReadRoute ReplicaCoordinator::RouteRead(std::string_view name_space, bool forwarded) {
  if (placement_ == nullptr) return {ReplicaPlacement::ReadRoute::Kind::kLocal, {}, ""};
  return placement_->RouteRead(name_space, forwarded);
}

bool ReplicaCoordinator::Leads(std::string_view name_space) {
  absl::MutexLock lock(&lead_mu_);
  auto it = leaders_.find(ToAbsl(name_space));
  return it != leaders_.end() && it->second->leading();
}

bool ReplicaCoordinator::LeadsNoWait(std::string_view name_space) {
  if (!lead_mu_.TryLock()) return false;
  auto it = leaders_.find(ToAbsl(name_space));
  const bool leads = it != leaders_.end() && it->second->leading();
  lead_mu_.Unlock();
  return leads;
}

std::vector<std::string> ReplicaCoordinator::LiveReplicas() const {
  if (placement_ == nullptr) return {self_.replica_id};
  return placement_->LiveIds();
}

void ReplicaCoordinator::FollowLoop() {
  while (SleepUnlessStopping(absl::ZeroDuration())) {
    // A hint or the poll interval, whichever comes first; then the feed, whatever the hint said.
    if (listener_ != nullptr) {
      if (auto heard = listener_->Wait(options_.poll_every); !heard.ok()) {
        spdlog::warn("change listener: {}; polling until it is reopened", heard.status().ToString());
        listener_.reset();
      }
    } else {
      if (!SleepUnlessStopping(options_.poll_every)) break;
      if (auto reopened = ChangeListener::Open(conninfo_); reopened.ok()) listener_ = *std::move(reopened);
    }
    if (absl::StatusOr<int64_t> applied = catch_up_(); !applied.ok())
      spdlog::warn("applying the change feed: {}", applied.status().ToString());
  }
}

absl::StatusOr<ReplicaInfo> ReplicaCoordinator::PreferredLeader(std::string_view name_space) {
  BULWARK_ASSIGN_OR_RETURN(std::vector<ReplicaInfo> live, directory_->Live(options_.lease_ttl));
  std::vector<std::string> ids;
  bool self_listed = false;
  for (const ReplicaInfo& r : live) {
    ids.push_back(r.replica_id);
    self_listed = self_listed || r.replica_id == self_.replica_id;
  }
  if (!self_listed) {  // this replica is live by definition, even if its heartbeat is late
    ids.push_back(self_.replica_id);
    live.push_back(self_);
  }
  BULWARK_ASSIGN_OR_RETURN(RendezvousPlacement placement, RendezvousPlacement::Create(ids));
  const std::vector<std::string> holders = placement.Place(name_space, options_.copies);
  for (const ReplicaInfo& r : live) {
    if (r.replica_id == holders.front()) return r.replica_id == self_.replica_id ? self_ : r;
  }
  return self_;
}

WriteRoute ReplicaCoordinator::RouteWrite(std::string_view name_space, bool forwarded) {
  {
    absl::MutexLock lock(&lead_mu_);
    auto it = leaders_.find(ToAbsl(name_space));
    if (it != leaders_.end()) {
      if (it->second->leading()) return Local();
      leaders_.erase(it);  // stepped down (lost or expired lease): decide again below
    }
  }
  if (!forwarded) {
    absl::MutexLock lock(&route_mu_);
    auto it = routes_.find(ToAbsl(name_space));
    if (it != routes_.end() && absl::Now() < it->second.until) return Forward(it->second.url);
  }
  absl::StatusOr<std::optional<Lease>> lease = leases_->Current(name_space);
  if (!lease.ok()) return Unavailable(absl::StrCat("the lease table: ", lease.status().message()));
  if (lease->has_value() && (*lease)->live() && (*lease)->holder != self_.incarnation)
    return ToHolder(**lease);
  if (!forwarded) {
    absl::StatusOr<ReplicaInfo> preferred = PreferredLeader(name_space);
    if (!preferred.ok())
      return Unavailable(absl::StrCat("the replica directory: ", preferred.status().message()));
    if (preferred->incarnation != self_.incarnation) return Forward(preferred->url);
  }
  absl::MutexLock lock(&lead_mu_);
  return Lead(name_space);
}

WriteRoute ReplicaCoordinator::Lead(std::string_view name_space) {
  auto it = leaders_.find(ToAbsl(name_space));
  if (it != leaders_.end() && it->second->leading()) return Local();  // another worker took it
  LeadershipOptions lo;
  lo.ttl = options_.lease_ttl;
  lo.renew_every = options_.lease_ttl / 3;
  lo.on_step_down = [ns = std::string(name_space)](const absl::Status& why) {
    spdlog::warn("stepped down as the leader of namespace '{}': {}", ns, why.ToString());
  };
  auto led = NamespaceLeadership::Acquire(leases_.get(), backend_, name_space, self_.incarnation, lo);
  if (led.ok()) {
    spdlog::info("leading namespace '{}' at epoch {}", name_space, (*led)->epoch());
    // A leader holds what it writes: its write gate reads the namespace's entries.
    if (placement_ != nullptr) {
      if (absl::Status held = placement_hooks_.hold(name_space); !held.ok()) {
        return Unavailable(absl::StrCat("loading the namespace: ", held.message()));
      }
    }
    // The previous leader's last writes are in the indexes before this replica's first one.
    if (absl::StatusOr<int64_t> applied = catch_up_(); !applied.ok()) {
      return Unavailable(absl::StrCat("applying the change feed: ", applied.status().message()));
    }
    if (placement_hooks_.on_lead) {
      if (absl::Status s = placement_hooks_.on_lead(name_space); !s.ok()) {
        return Unavailable(absl::StrCat("reloading the write gate's state: ", s.message()));
      }
    }
    leaders_[std::string(name_space)] = *std::move(led);
    return Local();
  }
  if (led.status().code() != absl::StatusCode::kFailedPrecondition) {
    return Unavailable(absl::StrCat("taking the lease: ", led.status().message()));
  }
  absl::StatusOr<std::optional<Lease>> lease = leases_->Current(name_space);  // lost a race: the winner
  if (!lease.ok() || !lease->has_value()) return Unavailable("the namespace's lease changed hands; retry");
  return ToHolder(**lease);
}

WriteRoute ReplicaCoordinator::ToHolder(const Lease& lease) {
  absl::StatusOr<std::optional<ReplicaInfo>> holder = directory_->Find(lease.holder);
  if (!holder.ok()) return Unavailable(absl::StrCat("the replica directory: ", holder.status().message()));
  if (!holder->has_value()) {
    return Unavailable(absl::StrCat("the leader ", lease.holder, " is not in the replica directory"));
  }
  CacheRoute(lease, (*holder)->url);
  return Forward((*holder)->url);
}

void ReplicaCoordinator::CacheRoute(const Lease& lease, const std::string& url) {
  const absl::Duration left = absl::Microseconds(lease.expires_at_us - lease.as_of_us);
  absl::MutexLock lock(&route_mu_);
  if (routes_.size() >= kMaxCachedRoutes) routes_.clear();
  routes_[lease.name_space] = {url, absl::Now() + std::min(kRouteCacheTtl, left)};
}

void ReplicaCoordinator::ForwardFailed(std::string_view name_space) {
  absl::MutexLock lock(&route_mu_);
  routes_.erase(ToAbsl(name_space));
}

void ReplicaCoordinator::Committed(std::string_view name_space) { notifier_->Hint(name_space); }

void ReplicaCoordinator::Fenced(std::string_view name_space) {
  absl::MutexLock lock(&lead_mu_);
  leaders_.erase(ToAbsl(name_space));
}

absl::StatusOr<int64_t> ReplicaCoordinator::WaitApplied(int64_t version, absl::Duration max_wait) {
  const absl::Time deadline = absl::Now() + max_wait;
  int64_t applied = 0;
  while (true) {
    BULWARK_ASSIGN_OR_RETURN(applied, catch_up_());
    if (applied >= version) return applied;
    if (absl::Now() >= deadline) break;
    absl::SleepFor(std::min(absl::Milliseconds(10), deadline - absl::Now()));
  }
  return absl::UnavailableError(
      absl::StrCat("this replica has applied version ", applied, ", the request needs ", version, "; retry"));
}

}  // namespace bulwark
