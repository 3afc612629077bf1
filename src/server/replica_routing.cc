// Forwarding writes to the leader, version tokens and minimum-version reads (see replica_routing.h).
#include "server/replica_routing.h"

#include <absl/strings/match.h>
#include <absl/strings/str_cat.h>
#include <httplib.h>
#include <spdlog/spdlog.h>

#include <array>

#include "replication/version_token.h"
#include "server/api_status.h"
#include "server/request_parsing.h"
#include "store/entry_store.h"
#include "store/memory_store.h"
#include "store/memory_store_impl.h"

namespace bulwark::server {
namespace {

// The request headers a forwarded request carries (credentials, body type, the write's own
// parameters, tracing, MCP's protocol headers, which the receiving replica's dispatcher checks
// against the body again). Never the hop-by-hop ones or httplib's REMOTE_ADDR pseudo-headers.
constexpr std::array<const char*, 13> kForwardedRequestHeaders = {
    "Authorization", "X-API-Key",  "Content-Type",  "Idempotency-Key", "X-Bulwark-Session",
    "traceparent",   "tracestate", "Accept",        kMinVersionHeader, "MCP-Protocol-Version",
    "Mcp-Method",    "Mcp-Name",   "Mcp-Session-Id"};
// The answer headers returned from the leader.
constexpr std::array<const char*, 4> kReturnedHeaders = {kVersionHeader, "Retry-After", "Location",
                                                         "WWW-Authenticate"};

Reply RetryLater(int status, std::string_view code, std::string_view message) {
  Reply reply;
  reply.status = status;
  reply.body = ErrorBody(code, message);
  reply.headers.emplace_back("Retry-After", "1");
  return reply;
}

}  // namespace

NamespaceLookup ReplicaRouting::Lookup() const {
  EntryStore* entries = store_->impl().entries.get();
  return {.find_entry =
              [entries](std::string_view ns, std::string_view id) {
                absl::StatusOr<std::optional<StoredRow>> row = entries->backend().GetEntry(ns, id);
                return row.ok() && row->has_value();
              },
          .all_namespaces = [entries] { return entries->Held().known; }};
}

absl::StatusOr<Reply> ReplicaRouting::Handle(const RouteSpec& route, const Call& call) {
  ReplicaCoordinator* const coordinator = coordinator_.load();
  if (coordinator == nullptr) return route.handler(call);
  const bool forwarded = call.http.has_header(kForwardedHeader);
  const std::optional<RequestNamespace> target = NamespaceOfRequest(route, call, Lookup());
  if (!target) return RunHere(route, call, coordinator);
  if (!target->write) {
    if (options_.monitored && options_.monitored(target->name_space)) {
      if (auto on_leader = MonitoredRead(route, call, target->name_space, forwarded, coordinator))
        return *std::move(on_leader);
    }
    ReplicaPlacement::ReadRoute read = coordinator->RouteRead(target->name_space, forwarded);
    switch (read.kind) {
      case ReplicaPlacement::ReadRoute::Kind::kLocal:
        return RunHere(route, call, coordinator);
      case ReplicaPlacement::ReadRoute::Kind::kForward:
        return ForwardRead(read.urls, call);
      case ReplicaPlacement::ReadRoute::Kind::kUnavailable:
        break;
    }
    return RetryLater(503, "replica_unavailable",
                      absl::StrCat("no replica can serve this namespace now (", read.why, "); retry"));
  }
  return OnLeader(route, call, *target, forwarded, coordinator);
}

absl::StatusOr<Reply> ReplicaRouting::OnLeader(const RouteSpec& route, const Call& call,
                                               const RequestNamespace& target, bool forwarded,
                                               ReplicaCoordinator* coordinator) {
  ReplicaCoordinator::WriteRoute where = coordinator->RouteWrite(target.name_space, forwarded);
  switch (where.kind) {
    case ReplicaCoordinator::WriteRoute::Kind::kLocal:
      if (std::optional<Reply> refused = AwaitMinVersion(call, coordinator)) return *std::move(refused);
      return WriteHere(route, call, target.name_space);
    case ReplicaCoordinator::WriteRoute::Kind::kForward:
      if (!forwarded) {
        Reply reply = ForwardTo(where.url, call);
        if (reply.status == 503) coordinator->ForwardFailed(target.name_space);
        return reply;
      }
      return RetryLater(503, "leader_unavailable", "the namespace's leader changed while forwarding; retry");
    case ReplicaCoordinator::WriteRoute::Kind::kUnavailable:
      break;
  }
  return RetryLater(503, "leader_unavailable",
                    absl::StrCat("no leader for this namespace now (", where.why, "); retry"));
}

std::optional<absl::StatusOr<Reply>> ReplicaRouting::MonitoredRead(const RouteSpec& route, const Call& call,
                                                                   const std::string& name_space,
                                                                   bool forwarded,
                                                                   ReplicaCoordinator* coordinator) {
  ReplicaCoordinator::WriteRoute where = coordinator->RouteWrite(name_space, forwarded);
  if (where.kind == ReplicaCoordinator::WriteRoute::Kind::kLocal) return RunHere(route, call, coordinator);
  if (where.kind == ReplicaCoordinator::WriteRoute::Kind::kForward && !forwarded) {
    bool reached = false;
    Reply reply = ForwardTo(where.url, call, &reached);
    if (reached) return reply;
    coordinator->ForwardFailed(name_space);
  }
  return std::nullopt;
}

std::optional<Reply> ReplicaRouting::AwaitMinVersion(const Call& call,
                                                     ReplicaCoordinator* coordinator) const {
  if (!call.http.has_header(kMinVersionHeader)) return std::nullopt;
  absl::StatusOr<VersionToken> token = VersionToken::Decode(call.http.get_header_value(kMinVersionHeader));
  if (!token.ok()) {
    Reply bad;
    bad.status = 400;
    bad.body = ErrorBody("invalid_argument", absl::StrCat(kMinVersionHeader, ": ", token.status().message()));
    return bad;
  }
  absl::StatusOr<int64_t> applied = coordinator->WaitApplied(token->version, options_.min_version_wait);
  if (!applied.ok()) return RetryLater(503, "unavailable", std::string(applied.status().message()));
  return std::nullopt;
}

absl::StatusOr<Reply> ReplicaRouting::RunHere(const RouteSpec& route, const Call& call,
                                              ReplicaCoordinator* coordinator) {
  if (std::optional<Reply> refused = AwaitMinVersion(call, coordinator)) return *std::move(refused);
  absl::StatusOr<Reply> reply = route.handler(call);
  if (reply.ok() && route.pattern == "/v1/admin/stats" && reply->status == 200 && reply->body.is_object()) {
    const EntryStore::Holding holding = store_->impl().entries->Held();
    reply->body["replica"] = {{"replica_id", coordinator->options().replica_id},
                              {"live_replicas", coordinator->LiveReplicas()},
                              {"held_namespaces", holding.held},
                              {"known_namespaces", holding.known.size()},
                              {"indexed_vectors", holding.vectors}};
  }
  return reply;
}

Reply ReplicaRouting::ForwardRead(const std::vector<std::string>& urls, const Call& call) const {
  std::string tried;
  for (const std::string& url : urls) {
    bool reached = false;
    Reply reply = ForwardTo(url, call, &reached);
    if (reached) return reply;
    absl::StrAppend(&tried, tried.empty() ? "" : ", ", url);
  }
  return RetryLater(503, "replica_unavailable",
                    absl::StrCat("no replica holding this namespace answered (", tried, "); retry"));
}

absl::StatusOr<Reply> ReplicaRouting::WriteHere(const RouteSpec& route, const Call& call,
                                                const std::string& name_space) {
  absl::StatusOr<Reply> reply = route.handler(call);
  if (!reply.ok()) {
    if (reply.status().code() == absl::StatusCode::kFailedPrecondition &&
        absl::StrContains(reply.status().message(), "fenced")) {
      spdlog::warn("a write of namespace '{}' was fenced: {}", name_space, reply.status().ToString());
      coordinator_.load()->Fenced(name_space);
      return RetryLater(503, "not_leader", "this replica no longer leads the namespace; retry");
    }
    return reply;
  }
  if (reply->status >= 200 && reply->status < 300) {
    // Every event of this write has a seq at most the newest one now: a token that is never short.
    absl::StatusOr<int64_t> version = store_->impl().entries->backend().LastEventSeq();
    if (version.ok() && *version > 0) {
      reply->headers.emplace_back(kVersionHeader, VersionToken{name_space, *version}.Encode());
    }
    coordinator_.load()->Committed(name_space);
  }
  return reply;
}

Reply ReplicaRouting::ForwardTo(const std::string& url, const Call& call, bool* reached) const {
  if (reached != nullptr) *reached = false;
  httplib::Client client(url);
  client.set_url_encode(false);  // the target is sent on exactly as it was received
  client.set_tcp_nodelay(true);  // headers and body leave at once (no Nagle + delayed-ACK stall)
  const int64_t timeout_us = absl::ToInt64Microseconds(options_.forward_timeout);
  client.set_connection_timeout(timeout_us / 1'000'000, timeout_us % 1'000'000);
  client.set_read_timeout(timeout_us / 1'000'000, timeout_us % 1'000'000);
  client.set_write_timeout(timeout_us / 1'000'000, timeout_us % 1'000'000);
  httplib::Headers headers = {{kForwardedHeader, coordinator_.load()->incarnation()}};
  for (const char* name : kForwardedRequestHeaders) {
    if (call.http.has_header(name)) headers.emplace(name, call.http.get_header_value(name));
  }
  httplib::Request request;
  request.method = call.http.method;
  request.path = call.http.target;  // path and query string as received
  request.headers = std::move(headers);
  request.body = call.http.body;
  httplib::Result result = client.send(request);
  if (!result) {
    spdlog::warn("forwarding {} {} to {}: {}", call.http.method, call.http.path, url,
                 httplib::to_string(result.error()));
    return RetryLater(503, "leader_unavailable",
                      absl::StrCat("the namespace's leader at ", url, " did not answer (",
                                   httplib::to_string(result.error()), "); retry"));
  }
  if (reached != nullptr) *reached = true;
  Reply reply;
  reply.status = result->status;
  reply.text = result->body;
  reply.content_type = result->get_header_value("Content-Type");
  if (reply.content_type.empty()) reply.content_type = "application/json";
  for (const char* name : kReturnedHeaders) {
    if (result->has_header(name)) reply.headers.emplace_back(name, result->get_header_value(name));
  }
  return reply;
}

}  // namespace bulwark::server
