// ReplicaRouting: the HTTP side of several `bulwark serve` replicas over one PostgreSQL store
// (issue #17 point 2; doc/scale-out.md, "Replicas in bulwark serve"). It runs every authenticated
// route's handler (ServiceBackends::interceptor):
//
//   - A namespace write (add, update, delete, purge, quarantine decisions, delete-all, forget) runs
//     here only when this replica leads the namespace (ReplicaCoordinator::RouteWrite); otherwise
//     it is sent to the leader over HTTP with the same method, target, body and credentials, and
//     the leader's answer is returned as it is. The leader authenticates, authorizes and audits
//     it; this replica has only authenticated the caller. No leader reachable within the timeout:
//     503 {"code": "leader_unavailable"} with Retry-After: 1. A request is forwarded at most once
//     (the `Bulwark-Forwarded` header).
//   - A write that committed here answers with the header `Bulwark-Version: bw1.<ns>.<v>`
//     (version_token.h) and sends the followers' wake-up hint. A write refused by the lease's
//     fence (this replica lost the namespace) answers 503 {"code": "not_leader"}, Retry-After: 1.
//   - A request with `Bulwark-Min-Version: <token>` runs once this replica applied the store up to
//     the token's version; 400 for a malformed token; 503 {"code": "unavailable"} with
//     Retry-After: 1 when it is not applied within the wait.
//
// Other routes (store-wide admin, the Mem0 paths and MCP) run here unchanged.
#pragma once

#include <absl/time/time.h>

#include <atomic>
#include <optional>
#include <string>

#include "replication/replica_coordinator.h"
#include "server/service.h"

namespace bulwark::server {

inline constexpr char kVersionHeader[] = "Bulwark-Version";
inline constexpr char kMinVersionHeader[] = "Bulwark-Min-Version";
inline constexpr char kForwardedHeader[] = "Bulwark-Forwarded";

struct ReplicaRoutingOptions {
  absl::Duration forward_timeout = absl::Seconds(5);   // connect + answer of a forwarded request
  absl::Duration min_version_wait = absl::Seconds(2);  // the longest a read waits for its version
};

class ReplicaRouting final : public RouteInterceptor {
 public:
  // `store` (its entry backend is the one the coordinator fences) must outlive this object.
  ReplicaRouting(MemoryStore* store, ReplicaRoutingOptions options) : store_(store), options_(options) {}
  // The replica's coordinator (made once the listening port is known), set before the server
  // serves its first request; it must outlive this object. Until then requests run unrouted.
  void Attach(ReplicaCoordinator* coordinator) { coordinator_.store(coordinator); }

  absl::StatusOr<Reply> Handle(const RouteSpec& route, const Call& call) override;

 private:
  // The write of `name_space`: here as its leader, with the version header on success.
  absl::StatusOr<Reply> WriteHere(const RouteSpec& route, const Call& call, const std::string& name_space);
  // The request sent on to `url` and its answer; 503 leader_unavailable if it cannot be sent.
  Reply ForwardTo(const std::string& url, const Call& call) const;

  std::atomic<ReplicaCoordinator*> coordinator_{nullptr};
  MemoryStore* const store_;
  const ReplicaRoutingOptions options_;
};

// The namespace a write route acts on, or nullopt when `route` is not a namespace write (reads,
// store-wide admin routes, Mem0 and MCP) or the request names no valid namespace (the handler
// then answers the error itself). Exposed for tests.
std::optional<std::string> WriteNamespaceOf(const RouteSpec& route, const Call& call);

}  // namespace bulwark::server
