// ReplicaRouting: the HTTP side of several `bulwark serve` replicas over one PostgreSQL store
// (issue #17 point 2; doc/scale-out.md, "Replicas in bulwark serve"). It runs every authenticated
// route's handler (ServiceBackends::interceptor), routing by the request's namespace
// (replica_namespace.h: the native API, Mem0 and MCP tool calls):
//
//   - A namespace write runs here only when this replica leads the namespace
//     (ReplicaCoordinator::RouteWrite); otherwise it is sent to the leader over HTTP with the same
//     method, target, body and credentials, and the leader's answer is returned as it is. The
//     leader authenticates, authorizes and audits it; this replica has only authenticated the
//     caller. No leader reachable within the timeout: 503 {"code": "leader_unavailable"} with
//     Retry-After: 1. A request is forwarded at most once (the `Bulwark-Forwarded` header).
//   - A namespace read runs here when this replica holds the namespace (or it is placed here:
//     loaded first); otherwise it is sent to the namespace's live holders in placement order, the
//     next one when one does not answer; none answers: 503 {"code": "replica_unavailable"} with
//     Retry-After: 1.
//   - Except a read of a namespace the honeypot session monitor observes
//     (ReplicaRoutingOptions::monitored): it runs where the namespace's writes run, on its leader,
//     which keeps the monitor's per-session and per-principal statistics, so a caller spreading its
//     queries over replicas meets one SPRT, as on one replica. A replica that does not hold the
//     namespace cannot tell whether it has pots, so it sends every read of a monitored mode to
//     the leader. When no leader takes the read (a takeover: the leader died and its lease has
//     not expired), it is routed as any other read, to a holder, whose monitor starts afresh
//     as one server's does after a restart.
//   - A write that committed here answers with the header `Bulwark-Version: bw1.<ns>.<v>`
//     (version_token.h) and sends the followers' wake-up hint. A write refused by the lease's
//     fence (this replica lost the namespace) answers 503 {"code": "not_leader"}, Retry-After: 1.
//   - A request run here with `Bulwark-Min-Version: <token>` runs once this replica applied the
//     store up to the token's version; 400 for a malformed token; 503 {"code": "unavailable"} with
//     Retry-After: 1 when it is not applied within the wait.
//   - GET /v1/admin/stats gains {"replica": {"replica_id", "live_replicas", "held_namespaces",
//     "known_namespaces", "indexed_vectors"}}.
//
// Store-wide routes (admin, /v1/namespaces, MCP's initialize and tools/list) run here unchanged.
#pragma once

#include <absl/time/time.h>

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "replication/replica_coordinator.h"
#include "server/replica_namespace.h"
#include "server/service.h"

namespace bulwark::server {

inline constexpr char kVersionHeader[] = "Bulwark-Version";
inline constexpr char kMinVersionHeader[] = "Bulwark-Min-Version";
inline constexpr char kForwardedHeader[] = "Bulwark-Forwarded";

struct ReplicaRoutingOptions {
  absl::Duration forward_timeout = absl::Seconds(5);   // connect + answer of a forwarded request
  absl::Duration min_version_wait = absl::Seconds(2);  // the longest a read waits for its version
  // Whether the honeypot session monitor observes the namespace's searches (serve: its mode is
  // not off and, when this replica holds it, it has pots); those reads run on the leader. Null:
  // every holder serves reads.
  std::function<bool(std::string_view name_space)> monitored;
};

class ReplicaRouting final : public RouteInterceptor {
 public:
  // `store` (its entry backend is the one the coordinator fences) must outlive this object.
  ReplicaRouting(MemoryStore* store, ReplicaRoutingOptions options) : store_(store), options_(options) {}
  // The replica's coordinator (made once the listening port is known), set before the server
  // serves its first request; it must outlive this object. Until then requests run unrouted.
  void Attach(ReplicaCoordinator* coordinator) { coordinator_.store(coordinator); }
  // The coordinator attached, or null before Attach.
  ReplicaCoordinator* coordinator() const { return coordinator_.load(); }

  absl::StatusOr<Reply> Handle(const RouteSpec& route, const Call& call) override;

 private:
  // Waits for the request's Bulwark-Min-Version: nullopt to go on, else the answer (400 for a
  // malformed token, 503 unavailable past the wait).
  std::optional<Reply> AwaitMinVersion(const Call& call, ReplicaCoordinator* coordinator) const;
  // The route's handler here, after the request's minimum version is applied.
  absl::StatusOr<Reply> RunHere(const RouteSpec& route, const Call& call, ReplicaCoordinator* coordinator);
  // A read sent to the first of `urls` that answers; 503 replica_unavailable if none does.
  Reply ForwardRead(const std::vector<std::string>& urls, const Call& call) const;
  // The write of `name_space`: here as its leader, with the version header on success.
  absl::StatusOr<Reply> WriteHere(const RouteSpec& route, const Call& call, const std::string& name_space);
  // A write of `name_space`: run here when this replica leads it, else sent to the leader; 503
  // leader_unavailable when there is none to send it to.
  absl::StatusOr<Reply> OnLeader(const RouteSpec& route, const Call& call, const RequestNamespace& target,
                                 bool forwarded, ReplicaCoordinator* coordinator);
  // A read of a namespace the honeypot monitor observes, on its leader (here, or sent there);
  // nullopt when no leader takes it now (a takeover, or a request already forwarded once): the
  // read is then routed as any other, to a holder, as one server after a restart would serve it.
  std::optional<absl::StatusOr<Reply>> MonitoredRead(const RouteSpec& route, const Call& call,
                                                     const std::string& name_space, bool forwarded,
                                                     ReplicaCoordinator* coordinator);
  // The request sent on to `url` and its answer; 503 leader_unavailable if it cannot be sent
  // (then *reached is false, when given).
  Reply ForwardTo(const std::string& url, const Call& call, bool* reached = nullptr) const;
  // Where the Mem0 id routes look for an id (replica_namespace.h).
  NamespaceLookup Lookup() const;

  std::atomic<ReplicaCoordinator*> coordinator_{nullptr};
  MemoryStore* const store_;
  const ReplicaRoutingOptions options_;
};

}  // namespace bulwark::server
