// The honeypot monitor's admin routes (issue #13 point 3; HoneypotGuard). Blocks act on a
// principal across sessions, so they need a service admin, like the other /v1/admin routes.
//
//   GET  /v1/admin/sessions/blocked[?namespace=NS]   the blocked sessions and principals
//   POST /v1/admin/sessions/unblock                   {"namespace", "principal", "session"?}: clears
//                                                     one block (no session: the principal's)
//   GET  /v1/admin/honeypots/settings?namespace=NS    the namespace's monitor setting in force
//   PUT  /v1/admin/honeypots/settings                 {"namespace", "mode"?, "k_obs"?, "estimator"?,
//                                                     "calibration_cap"?, "h0"?, "alpha"?, "beta"?}:
//                                                     stores it signed and applies it at once
// A setting change and an unblock append an audit record (readable by admins only: /v1/audit): the
// setting before and after, or the key unblocked.
#include <absl/strings/str_cat.h>

#include "core/status_macros.h"
#include "core/strings.h"
#include "core/text_validation.h"
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
  BULWARK_RETURN_IF_ERROR(CheckQueryParams(call.query, {"namespace"}));
  BULWARK_ASSIGN_OR_RETURN(auto guard, RunningGuard(ctx));
  const std::string ns = QueryParam(call.query, "namespace").value_or("");
  BULWARK_ASSIGN_OR_RETURN(auto blocked, guard->Blocked(ns));
  nlohmann::json out = nlohmann::json::array();
  for (const BlockedKey& b : blocked) {
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
  BULWARK_RETURN_IF_ERROR(CheckQueryParams(call.query, {}));
  BULWARK_ASSIGN_OR_RETURN(auto body, ParseJsonObject(call.http.body, 4));
  for (const auto& [key, value] : body.items()) {
    if (key != "namespace" && key != "principal" && key != "session") {
      return ApiError(absl::StatusCode::kInvalidArgument, "unknown_field",
                      absl::StrCat("unknown field \"", ToAbsl(key), "\""));
    }
    if (!value.is_string() || value.get_ref<const std::string&>().size() > 256) {
      return absl::InvalidArgumentError(absl::StrCat(ToAbsl(key), " must be a string of at most 256 bytes"));
    }
  }
  if (!body.contains("namespace") || !body.contains("principal")) {
    return absl::InvalidArgumentError("namespace and principal are required");
  }
  BULWARK_ASSIGN_OR_RETURN(auto guard, RunningGuard(ctx));
  const std::string ns = body["namespace"], principal = body["principal"];
  const std::string session = body.value("session", "");
  BULWARK_RETURN_IF_ERROR(guard->Unblock(ns, principal, session));
  RecordAudit(ctx, call, ns, AuditOperation::kUnblockSession, {}, "",
              {{"unblocked_principal", principal}, {"unblocked_session", session}});
  Reply reply;
  reply.body = {{"unblocked", true}, {"namespace", ns}, {"principal", principal}, {"session", session}};
  return reply;
}

absl::StatusOr<Reply> GetSetting(ServiceContext& ctx, const Call& call) {
  BULWARK_RETURN_IF_ERROR(CheckQueryParams(call.query, {"namespace"}));
  BULWARK_ASSIGN_OR_RETURN(auto guard, RunningGuard(ctx));
  const std::optional<std::string> ns = QueryParam(call.query, "namespace");
  if (!ns) return absl::InvalidArgumentError("namespace is required");
  BULWARK_RETURN_IF_ERROR(ValidateNamespace(*ns));
  Reply reply;
  reply.body = guard->Setting(*ns).ToJson();
  reply.body["namespace"] = *ns;
  return reply;
}

absl::StatusOr<Reply> PutSetting(ServiceContext& ctx, const Call& call) {
  BULWARK_RETURN_IF_ERROR(CheckQueryParams(call.query, {}));
  BULWARK_ASSIGN_OR_RETURN(auto body, ParseJsonObject(call.http.body, 4));
  const auto ns_field = body.find("namespace");
  if (ns_field == body.end() || !ns_field->is_string())
    return absl::InvalidArgumentError("namespace is required");
  const std::string ns = *ns_field;
  BULWARK_RETURN_IF_ERROR(ValidateNamespace(ns));
  body.erase("namespace");
  BULWARK_ASSIGN_OR_RETURN(auto guard, RunningGuard(ctx));
  const GuardSetting before = guard->Setting(ns);
  BULWARK_ASSIGN_OR_RETURN(auto setting, GuardSetting::FromJson(body, before));
  BULWARK_RETURN_IF_ERROR(guard->PutSetting(ns, setting));
  RecordAudit(ctx, call, ns, AuditOperation::kHoneypotSetting, {}, "",
              {{"before", before.ToJson()}, {"after", setting.ToJson()}});
  Reply reply;
  reply.body = setting.ToJson();
  reply.body["namespace"] = ns;
  return reply;
}

}  // namespace

absl::Status ReadPathStatus(const absl::Status& status) {
  if (status.code() == absl::StatusCode::kPermissionDenied && status.message() == "session_blocked") {
    absl::Status refused =
        ApiError(absl::StatusCode::kPermissionDenied, "session_blocked", "this session is blocked");
    // The monitor's state of the blocked key, for the refusal's audit record (never the body).
    if (auto detail = status.GetPayload(HoneypotGuard::kRefusalPayloadUrl)) {
      refused.SetPayload(HoneypotGuard::kRefusalPayloadUrl, *detail);
    }
    return refused;
  }
  return status;
}

void AddSessionRoutes(ServiceContext& ctx, std::vector<RouteSpec>* routes) {
  auto admin = [&ctx](absl::StatusOr<Reply> (*fn)(ServiceContext&, const Call&)) {
    return [&ctx, fn](const Call& call) -> absl::StatusOr<Reply> {
      BULWARK_RETURN_IF_ERROR(RequireServiceAdmin(*call.caller));
      return fn(ctx, call);
    };
  };
  routes->push_back({"GET", "/v1/admin/sessions/blocked", Access::kAuthenticated, admin(ListBlocked)});
  routes->push_back({"POST", "/v1/admin/sessions/unblock", Access::kAuthenticated, admin(UnblockSession)});
  routes->push_back({"GET", "/v1/admin/honeypots/settings", Access::kAuthenticated, admin(GetSetting)});
  routes->push_back({"PUT", "/v1/admin/honeypots/settings", Access::kAuthenticated, admin(PutSetting)});
}

}  // namespace bulwark::server
