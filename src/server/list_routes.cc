// Routes the agent clients need besides add/search/get (issue #15 point 1; doc/api.md):
//
//   GET  /v1/memories?namespace=&state=&filter=&limit=&cursor=&key=
//                                              reader  one page of entries, oldest first, keyset cursor
//                                                      on the time-ordered id (quarantined: admin)
//   GET  /v1/namespaces                        any     the caller's granted namespaces with counts
//   POST /v1/namespaces/{namespace}/delete-all admin   soft-delete every (matching) live entry
//   POST /v1/namespaces/{namespace}/forget     admin   purge every (matching) entry: "forget this user"
//
// Tenant isolation as everywhere: an ungranted namespace answers 404 namespace_not_found exactly like
// one that does not exist; request-only checks come first.
#include <absl/strings/str_cat.h>
#include <absl/strings/str_split.h>

#include <algorithm>
#include <map>

#include "core/ids.h"
#include "core/status_macros.h"
#include "core/strings.h"
#include "core/text_validation.h"
#include "server/api_status.h"
#include "server/service.h"
#include "store/entry_keys.h"
#include "store/entry_listing.h"
#include "store/memory_store_impl.h"

namespace bulwark::server {
namespace {

absl::Status LrBadParam(std::string_view message) {
  return ApiError(absl::StatusCode::kInvalidArgument, "invalid_argument", message);
}

// `state=active,deleted`: states by name, each once; default active.
absl::StatusOr<std::vector<State>> LrParseStates(const QueryParams& query) {
  auto value = QueryParam(query, "state");
  if (!value) return std::vector<State>{State::kActive};
  std::vector<State> states;
  for (absl::string_view name : absl::StrSplit(*value, ',')) {
    auto state = ParseState(ToStd(name));
    if (!state)
      return LrBadParam("state must be a comma-separated list of active, quarantined, deleted, purged");
    if (std::find(states.begin(), states.end(), *state) == states.end()) states.push_back(*state);
  }
  return states;
}

// The decoded request of GET /v1/memories (everything the query string says), before authorization.
absl::StatusOr<ListRequest> LrParseListQuery(const QueryParams& query, const RequestLimits& limits) {
  BULWARK_RETURN_IF_ERROR(
      CheckQueryParams(query, {"namespace", "state", "filter", "limit", "cursor", "key"}));
  ListRequest request;
  BULWARK_ASSIGN_OR_RETURN(auto states, LrParseStates(query));
  request.states = std::move(states);
  BULWARK_ASSIGN_OR_RETURN(auto limit,
                           IntQueryParam(query, "limit", 100, 1, std::min(limits.max_list_limit, 1000)));
  request.limit = static_cast<int>(limit);
  if (auto filter = QueryParam(query, "filter")) {
    BULWARK_ASSIGN_OR_RETURN(auto parsed, ParseJsonObject(*filter, limits.max_depth));
    request.filter = std::move(parsed);
  }
  if (auto cursor = QueryParam(query, "cursor")) {
    if (!IsValidEntryId(*cursor)) return LrBadParam("cursor must be the next_cursor of a previous page");
    request.cursor = *cursor;
  }
  if (auto key = QueryParam(query, "key")) {
    if (auto s = ValidateEntryKey(*key); !s.ok()) return LrBadParam(ToStd(s.message()));
    request.key = *key;
  }
  return request;
}

absl::StatusOr<Reply> LrList(ServiceContext& ctx, const Call& call) {
  BULWARK_ASSIGN_OR_RETURN(auto request, LrParseListQuery(call.query, ctx.limits));
  BULWARK_ASSIGN_OR_RETURN(auto ns, ResolveNamespace(std::nullopt, call.query));
  const bool quarantined =
      std::find(request.states.begin(), request.states.end(), State::kQuarantined) != request.states.end();
  const Need need = quarantined ? Need::kAdmin : Need::kRead;
  BULWARK_RETURN_IF_ERROR(Authorize(*call.caller, ns, need, NamespaceNotFound()));
  BULWARK_ASSIGN_OR_RETURN(auto page, ListEntries(*ctx.backends.store, ns, request));
  nlohmann::json entries = nlohmann::json::array();
  std::vector<std::string> ids;
  for (const Entry& e : page.entries) {
    entries.push_back(EntryJson(e, ReportViewFor(*call.caller)));
    ids.push_back(e.id);
  }
  if (page.withheld > 0) ctx.metrics->Count(EventCounter::kSearchWithheldCandidates, page.withheld);
  RecordAudit(ctx, call, ns, AuditOperation::kList, std::move(ids));
  Reply reply;
  reply.body = {
      {"entries", std::move(entries)},
      {"next_cursor", page.next_cursor.empty() ? nlohmann::json(nullptr) : nlohmann::json(page.next_cursor)},
      {"withheld", page.withheld}};
  return reply;
}

nlohmann::json LrNamespaceJson(const std::string& name, const NamespaceStats* stats) {
  // Honeypots are never counted: they are invisible to callers.
  return {{"namespace", name},
          {"active", stats ? stats->active : 0},
          {"quarantined", stats ? stats->quarantined : 0},
          {"deleted", stats ? stats->deleted : 0},
          {"purged", stats ? stats->purged : 0}};
}

absl::StatusOr<Reply> LrNamespaces(ServiceContext& ctx, const Call& call) {
  BULWARK_RETURN_IF_ERROR(CheckQueryParams(call.query, {}));
  BULWARK_ASSIGN_OR_RETURN(auto stats, ctx.backends.store->Stats());
  std::map<std::string, const NamespaceStats*> by_name;
  for (const NamespaceStats& ns : stats.namespaces) by_name[ns.name_space] = &ns;
  const Principal& principal = call.caller->principal;
  std::map<std::string, const NamespaceStats*> shown;
  if (HoldsAllNamespaces(principal)) {
    shown = by_name;
  }
  for (const std::string& name : principal.namespaces) {
    if (name == "*") continue;
    auto it = by_name.find(name);
    shown[name] = it == by_name.end() ? nullptr : it->second;
  }
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [name, ns] : shown) {
    const bool memories = ns == nullptr || ns->active + ns->quarantined + ns->deleted + ns->purged > 0;
    if (memories || !HoldsAllNamespaces(principal)) out.push_back(LrNamespaceJson(name, ns));
  }
  RecordAudit(ctx, call, "*", AuditOperation::kListNamespaces, {}, "", {{"count", out.size()}});
  Reply reply;
  reply.body = {{"namespaces", std::move(out)}};
  return reply;
}

// delete-all and forget: an admin's change of every (matching) entry of one namespace.
absl::StatusOr<Reply> ChangeNamespace(ServiceContext& ctx, const Call& call, BulkChange::Kind kind) {
  BULWARK_RETURN_IF_ERROR(CheckQueryParams(call.query, {}));
  BulkChange change;
  change.kind = kind;
  if (!call.http.body.empty()) {
    BULWARK_ASSIGN_OR_RETURN(auto body, ParseJsonObject(call.http.body, ctx.limits.max_depth));
    for (const auto& [name, value] : body.items()) {
      if (name != "filter") {
        return ApiError(absl::StatusCode::kInvalidArgument, "unknown_field",
                        absl::StrCat("unknown field \"", name, "\""));
      }
      if (!value.is_object()) {
        return ApiError(absl::StatusCode::kInvalidArgument, "wrong_type",
                        "field \"filter\" must be a JSON object");
      }
      change.filter = value;
    }
  }
  const std::string ns(call.Param("namespace"));
  if (auto s = ValidateNamespace(ns); !s.ok()) return LrBadParam(ToStd(s.message()));
  BULWARK_RETURN_IF_ERROR(Authorize(*call.caller, ns, Need::kAdmin, NamespaceNotFound()));
  BULWARK_ASSIGN_OR_RETURN(auto result,
                           ApplyToNamespace(*ctx.backends.store, ns, change, call.caller->principal.name));
  const bool purge = kind == BulkChange::Kind::kPurge;
  RecordAudit(ctx, call, ns, purge ? AuditOperation::kForget : AuditOperation::kDeleteAll, result.ids, "",
              {{"filter", change.filter}, {"count", result.ids.size()}, {"more", result.more}});
  Reply reply;
  reply.body = {{"namespace", ns},
                {purge ? "purged" : "deleted", result.ids.size()},
                {"ids", result.ids},
                {"more", result.more}};
  return reply;
}

}  // namespace

void AddListRoutes(ServiceContext& ctx, std::vector<RouteSpec>* routes) {
  routes->push_back(
      {"GET", "/v1/memories", Access::kAuthenticated, [&ctx](const Call& c) { return LrList(ctx, c); }});
  routes->push_back({"GET", "/v1/namespaces", Access::kAuthenticated,
                     [&ctx](const Call& c) { return LrNamespaces(ctx, c); }});
  routes->push_back({"POST", "/v1/namespaces/{namespace}/delete-all", Access::kAuthenticated,
                     [&ctx](const Call& c) { return ChangeNamespace(ctx, c, BulkChange::Kind::kDelete); }});
  routes->push_back({"POST", "/v1/namespaces/{namespace}/forget", Access::kAuthenticated,
                     [&ctx](const Call& c) { return ChangeNamespace(ctx, c, BulkChange::Kind::kPurge); }});
}

}  // namespace bulwark::server
