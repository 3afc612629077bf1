// Quarantine review (DESIGN 4.5), all for the admin role in a granted namespace:
//
//   GET  /v1/quarantine?namespace=NS[&limit=N]   quarantined entries, oldest first
//   POST /v1/quarantine/{id}/release             quarantined -> active; body {"namespace"?, "reason"?}
//   POST /v1/quarantine/{id}/reject              quarantined -> deleted; body {"namespace"?, "reason"?}
//   POST /v1/memories/{id}/quarantine            active -> quarantined, by an operator
//
// Write-time detectors (a later issue) fill the quarantine automatically; the manual route lets an
// operator pull a suspicious memory out of retrieval without deleting the evidence.
#include <absl/strings/str_cat.h>

#include "core/ids.h"
#include "core/status_macros.h"
#include "server/api_status.h"
#include "server/service.h"

namespace bulwark::server {
namespace {

absl::StatusOr<Reply> List(ServiceContext& ctx, const Call& call) {
  BULWARK_RETURN_IF_ERROR(CheckQueryParams(call.query, {"namespace", "limit"}));
  BULWARK_ASSIGN_OR_RETURN(auto limit, IntQueryParam(call.query, "limit", 100, 1, ctx.limits.max_list_limit));
  BULWARK_ASSIGN_OR_RETURN(auto ns, ResolveNamespace(std::nullopt, call.query));
  BULWARK_RETURN_IF_ERROR(Authorize(*call.caller, ns, Need::kAdmin, NamespaceNotFound()));
  BULWARK_ASSIGN_OR_RETURN(auto entries, ctx.backends.store->ListQuarantined(ns, static_cast<size_t>(limit)));
  nlohmann::json out = nlohmann::json::array();
  for (const Entry& e : entries) {
    if (e.kind != Kind::kHoneypot) out.push_back(EntryJson(e, ReportView::kFull));
  }
  Reply reply;
  reply.body = {{"entries", std::move(out)}};
  return reply;
}

enum class Action { kRelease, kReject, kQuarantine };

absl::StatusOr<Reply> Act(ServiceContext& ctx, const Call& call, Action action) {
  BULWARK_RETURN_IF_ERROR(CheckQueryParams(call.query, {"namespace"}));
  const std::string_view id = call.Param("id");
  if (!IsValidEntryId(id)) {
    return ApiError(absl::StatusCode::kInvalidArgument, "invalid_argument", "the id is not a valid entry id");
  }
  // Every action may give a reason (the dashboard asks for one); release and reject record it in
  // their audit record's detail, a manual quarantine in the entry's report.
  BULWARK_ASSIGN_OR_RETURN(auto request,
                           ParseEntryActionRequest(call.http.body, /*allow_reason=*/true, ctx.limits));
  BULWARK_ASSIGN_OR_RETURN(auto ns, ResolveNamespace(request.name_space, call.query));
  BULWARK_RETURN_IF_ERROR(Authorize(*call.caller, ns, Need::kAdmin, EntryNotFound()));
  BULWARK_RETURN_IF_ERROR(LoadVisibleEntry(ctx, ns, id).status());

  MemoryStore& store = *ctx.backends.store;
  const std::string& actor = call.caller->principal.name;
  absl::Status status;
  AuditOperation operation = AuditOperation::kQuarantine;
  switch (action) {
    case Action::kRelease:
      status = store.Release(ns, id, actor);
      operation = AuditOperation::kRelease;
      break;
    case Action::kReject:
      status = store.Reject(ns, id, actor);
      operation = AuditOperation::kReject;
      break;
    case Action::kQuarantine:
      status = store.Quarantine(
          ns, id, actor,
          nlohmann::json::array(
              {{{"detector", "operator"}, {"reason", request.reason.value_or("manual quarantine")}}}));
      operation = AuditOperation::kQuarantine;
      break;
  }
  if (!status.ok()) return status.code() == absl::StatusCode::kNotFound ? EntryNotFound() : status;
  switch (action) {
    case Action::kRelease:
      ctx.metrics->Count(EventCounter::kQuarantineReleased);
      break;
    case Action::kReject:
      ctx.metrics->Count(EventCounter::kQuarantineRejected);
      break;
    case Action::kQuarantine:
      ctx.metrics->Count(EventCounter::kEntriesQuarantined);
      break;
  }
  nlohmann::json detail = nlohmann::json::object();
  if (action != Action::kQuarantine && request.reason) detail["reason"] = *request.reason;
  RecordAudit(ctx, call, ns, operation, {std::string(id)}, "", std::move(detail));
  BULWARK_ASSIGN_OR_RETURN(auto entry, store.Get(ns, id));
  Reply reply;
  reply.body = {{"entry", EntryJson(entry, ReportView::kFull)}};
  return reply;
}

}  // namespace

void AddQuarantineRoutes(ServiceContext& ctx, std::vector<RouteSpec>* routes) {
  auto act = [&ctx](Action action) {
    return [&ctx, action](const Call& call) { return Act(ctx, call, action); };
  };
  routes->push_back({"GET", "/v1/quarantine", Access::kAuthenticated,
                     [&ctx](const Call& call) { return List(ctx, call); }});
  routes->push_back({"POST", "/v1/quarantine/{id}/release", Access::kAuthenticated, act(Action::kRelease)});
  routes->push_back({"POST", "/v1/quarantine/{id}/reject", Access::kAuthenticated, act(Action::kReject)});
  routes->push_back(
      {"POST", "/v1/memories/{id}/quarantine", Access::kAuthenticated, act(Action::kQuarantine)});
}

}  // namespace bulwark::server
