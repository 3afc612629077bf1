// The honeypot monitor's admin routes (issue #13 point 3; HoneypotGuard). Blocks act on a
// principal across sessions, so they need a service admin, like the other /v1/admin routes.
//
//   GET  /v1/admin/sessions/blocked[?namespace=NS]   the blocked sessions and principals
//   POST /v1/admin/sessions/unblock                   {"namespace", "principal", "session"?}: clears
//                                                     one block (no session: the principal's)
#include <absl/strings/str_cat.h>

#include "core/strings.h"
#include "server/api_status.h"
#include "server/service.h"

namespace bulwark::server {
namespace {

absl::StatusOr<HoneypotGuard*> RunningGuard(ServiceContext& ctx) {
  HoneypotGuard* guard = ctx.backends.retriever ? ctx.backends.retriever->honeypot_guard() : nullptr;
  if (guard == nullptr) return absl::FailedPreconditionError("the honeypot monitor is not running");
  return guard;
}

absl::StatusOr<Reply> ListBlocked(ServiceContext& ctx, const Call& call) {
  if (auto s = CheckQueryParams(call.query, {"namespace"}); !s.ok()) return s;
  auto guard = RunningGuard(ctx);
  if (!guard.ok()) return guard.status();
  const std::string ns = QueryParam(call.query, "namespace").value_or("");
  auto blocked = (*guard)->Blocked(ns);
  if (!blocked.ok()) return blocked.status();
  nlohmann::json out = nlohmann::json::array();
  for (const BlockedKey& b : *blocked) {
    out.push_back({{"namespace", b.name_space},
                   {"principal", b.principal},
                   {"session", b.session},
                   {"level", b.session.empty() ? "principal" : "session"},
                   {"rounds", b.state.sprt.rounds},
                   {"decided_round", b.state.sprt.decided_round},
                   {"pot_hits", b.state.pot_hits},
                   {"decided_at_us", b.state.decided_at_us}});
  }
  Reply reply;
  reply.body = {{"blocked", std::move(out)}};
  return reply;
}

absl::StatusOr<Reply> UnblockSession(ServiceContext& ctx, const Call& call) {
  if (auto s = CheckQueryParams(call.query, {}); !s.ok()) return s;
  auto body = ParseJsonObject(call.http.body, 4);
  if (!body.ok()) return body.status();
  for (const auto& [key, value] : body->items()) {
    if (key != "namespace" && key != "principal" && key != "session") {
      return ApiError(absl::StatusCode::kInvalidArgument, "unknown_field",
                      absl::StrCat("unknown field \"", ToAbsl(key), "\""));
    }
    if (!value.is_string() || value.get_ref<const std::string&>().size() > 256) {
      return absl::InvalidArgumentError(absl::StrCat(ToAbsl(key), " must be a string of at most 256 bytes"));
    }
  }
  if (!body->contains("namespace") || !body->contains("principal")) {
    return absl::InvalidArgumentError("namespace and principal are required");
  }
  auto guard = RunningGuard(ctx);
  if (!guard.ok()) return guard.status();
  const std::string ns = (*body)["namespace"], principal = (*body)["principal"];
  const std::string session = body->value("session", "");
  if (auto s = (*guard)->Unblock(ns, principal, session); !s.ok()) return s;
  Reply reply;
  reply.body = {{"unblocked", true}, {"namespace", ns}, {"principal", principal}, {"session", session}};
  return reply;
}

}  // namespace

absl::Status ReadPathStatus(const absl::Status& status) {
  if (status.code() == absl::StatusCode::kPermissionDenied && status.message() == "session_blocked") {
    return ApiError(absl::StatusCode::kPermissionDenied, "session_blocked", "this session is blocked");
  }
  return status;
}

void AddSessionRoutes(ServiceContext& ctx, std::vector<RouteSpec>* routes) {
  auto admin = [&ctx](absl::StatusOr<Reply> (*fn)(ServiceContext&, const Call&)) {
    return [&ctx, fn](const Call& call) -> absl::StatusOr<Reply> {
      if (auto s = RequireServiceAdmin(*call.caller); !s.ok()) return s;
      return fn(ctx, call);
    };
  };
  routes->push_back({"GET", "/v1/admin/sessions/blocked", Access::kAuthenticated, admin(ListBlocked)});
  routes->push_back({"POST", "/v1/admin/sessions/unblock", Access::kAuthenticated, admin(UnblockSession)});
}

}  // namespace bulwark::server
