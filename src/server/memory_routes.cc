// Routes over memories: add (one or a batch), search, get, history, update, delete, purge.
//
//   POST   /v1/memories                 writer   add one entry or a batch
//   POST   /v1/memories/search          reader   top-k verified entries through the read-time defenses
//                                                (query gate, smoothing; + audit record)
//   GET    /v1/memories/{id}            reader   one entry
//   GET    /v1/memories/{id}/history    reader   its append-only history
//   PATCH  /v1/memories/{id}            writer   change text and/or metadata (own entries; admin: any)
//   DELETE /v1/memories/{id}            writer   soft delete
//   POST   /v1/memories/{id}/purge      admin    GDPR erasure
//
// Every write records the authenticated caller as principal/actor; a body may not claim anyone
// else, and source "system" needs the admin role.
#include <absl/strings/str_cat.h>

#include "core/hex.h"
#include "core/ids.h"
#include "core/json_tree.h"
#include "core/status_macros.h"
#include "core/strings.h"
#include "server/api_status.h"
#include "server/service.h"
#include "server/trace_context.h"
#include "store/entry_keys.h"

namespace bulwark::server {
namespace {

// A malformed id is the caller's mistake whatever the namespace: 400 before any lookup.
absl::Status CheckEntryId(std::string_view id) {
  if (IsValidEntryId(id)) return absl::OkStatus();
  return ApiError(absl::StatusCode::kInvalidArgument, "invalid_argument",
                  "the id is not a valid entry id (26 Crockford base32 characters)");
}

// Store errors about one entry: NotFound becomes the canned answer (the store's message names the
// namespace and id; the canned one is identical for every case the caller may not tell apart).
absl::Status EntryStatus(const absl::Status& status) {
  return status.code() == absl::StatusCode::kNotFound ? EntryNotFound() : status;
}

absl::StatusOr<Reply> Add(ServiceContext& ctx, const Call& call) {
  BULWARK_RETURN_IF_ERROR(CheckQueryParams(call.query, {"namespace"}));
  BULWARK_ASSIGN_OR_RETURN(auto request, ParseAddRequest(call.http.body, ctx.limits));
  BULWARK_ASSIGN_OR_RETURN(auto ns, ResolveNamespace(request.name_space, call.query));
  const Caller& caller = *call.caller;
  BULWARK_RETURN_IF_ERROR(Authorize(caller, ns, Need::kWrite, NamespaceNotFound()));
  if (request.principal && *request.principal != caller.principal.name) {
    return Forbidden(
        "the principal of a write is the authenticated caller; it cannot be set to another name");
  }
  for (const NewEntry& entry : request.entries) {
    if (entry.source == Source::kSystem && !caller.principal.IsAdmin()) {
      return Forbidden("source \"system\" needs the admin role");
    }
  }
  const int64_t now = (ctx.backends.env ? ctx.backends.env : Env::Default())->NowMicros();
  for (const NewEntry& entry : request.entries) {
    auto expires = entry.metadata.find(kExpiresAtField);
    if (expires != entry.metadata.end() && expires->get<int64_t>() <= now) {
      return ApiError(absl::StatusCode::kInvalidArgument, "invalid_argument",
                      "expires_at_us is not in the future");
    }
  }
  if (request.key || call.http.has_header("Idempotency-Key")) {
    return KeyedAdd(ctx, call, std::move(request), ns);  // keyed_add.cc
  }
  BULWARK_ASSIGN_OR_RETURN(auto added,
                           ctx.backends.store->AddBatch(ns, request.entries, caller.principal.name));

  std::vector<std::string> ids;
  ids.reserve(added.size());
  int64_t quarantined = 0;
  for (const Entry& e : added) {
    ids.push_back(e.id);
    if (e.state == State::kQuarantined) ++quarantined;
  }
  ctx.metrics->Count(EventCounter::kEntriesAdded, static_cast<int64_t>(added.size()));
  if (quarantined > 0) ctx.metrics->Count(EventCounter::kEntriesQuarantined, quarantined);
  RecordAudit(ctx, call, ns, AuditOperation::kAdd, std::move(ids));
  Reply reply;
  reply.status = 201;
  reply.text = AddResponseJson(added, request.batch, ReportViewFor(caller));
  reply.content_type = "application/json";
  return reply;
}

absl::StatusOr<Reply> Search(ServiceContext& ctx, const Call& call) {
  BULWARK_RETURN_IF_ERROR(CheckQueryParams(call.query, {"namespace"}));
  BULWARK_ASSIGN_OR_RETURN(auto request, ParseSearchRequest(call.http.body, ctx.limits));
  BULWARK_ASSIGN_OR_RETURN(auto ns, ResolveNamespace(request.name_space, call.query));
  const Need need = request.options.include_quarantined ? Need::kAdmin : Need::kRead;
  BULWARK_RETURN_IF_ERROR(Authorize(*call.caller, ns, need, NamespaceNotFound()));
  auto result = ctx.backends.retriever->Search(
      MakeDefendedRequest(call, ns, request.query, request.options, request.defenses));
  if (!result.ok()) return ReadPathStatus(result.status());

  ctx.metrics->CountGateDecision(result->gate.decision);
  ctx.metrics->ObserveSearchStages(result->stages);
  if (result->search.rejected_candidates > 0) {
    ctx.metrics->Count(EventCounter::kSearchWithheldCandidates, result->search.rejected_candidates);
  }
  std::vector<std::string> ids;
  ids.reserve(result->search.hits.size());
  for (const SearchHit& hit : result->search.hits) ids.push_back(hit.entry.id);
  nlohmann::json detail = DefenseDetail(*result);
  detail["include_quarantined"] = request.options.include_quarantined;
  RecordAudit(ctx, call, ns, AuditOperation::kSearch, std::move(ids), Sha256Hex(request.query),
              std::move(detail));
  if (result->rejected()) return QueryRejected(result->gate, ReportViewFor(*call.caller));
  Reply reply;
  reply.text = SearchResponseJson(*result, ReportViewFor(*call.caller));
  reply.content_type = "application/json";
  return reply;
}

// The namespace of a read of one entry (GET /v1/memories/{id}[/history]) after checking the query,
// the id and read access; an ungranted namespace answers exactly like a missing entry.
absl::StatusOr<std::string> ReadableEntryNamespace(const Call& call) {
  BULWARK_RETURN_IF_ERROR(CheckQueryParams(call.query, {"namespace"}));
  BULWARK_RETURN_IF_ERROR(CheckEntryId(call.Param("id")));
  BULWARK_ASSIGN_OR_RETURN(auto ns, ResolveNamespace(std::nullopt, call.query));
  BULWARK_RETURN_IF_ERROR(Authorize(*call.caller, ns, Need::kRead, EntryNotFound()));
  return ns;
}

absl::StatusOr<Reply> Get(ServiceContext& ctx, const Call& call) {
  const std::string_view id = call.Param("id");
  BULWARK_ASSIGN_OR_RETURN(auto ns, ReadableEntryNamespace(call));
  BULWARK_ASSIGN_OR_RETURN(auto entry, LoadVisibleEntry(ctx, ns, id));
  RecordAudit(ctx, call, ns, AuditOperation::kGet, {entry.id});
  Reply reply;
  reply.body = {{"entry", EntryJson(entry, ReportViewFor(*call.caller))}};
  return reply;
}

absl::StatusOr<Reply> History(ServiceContext& ctx, const Call& call) {
  const std::string_view id = call.Param("id");
  BULWARK_ASSIGN_OR_RETURN(auto ns, ReadableEntryNamespace(call));
  BULWARK_RETURN_IF_ERROR(LoadVisibleEntry(ctx, ns, id).status());
  auto events = ctx.backends.store->History(ns, id);
  if (!events.ok()) return EntryStatus(events.status());
  nlohmann::json out = nlohmann::json::array();
  for (const HistoryEvent& ev : *events) out.push_back(ToJson(ev));
  RecordAudit(ctx, call, ns, AuditOperation::kHistory, {std::string(id)});
  Reply reply;
  reply.body = {{"id", id}, {"events", std::move(out)}};
  return reply;
}

absl::StatusOr<Reply> Update(ServiceContext& ctx, const Call& call) {
  BULWARK_RETURN_IF_ERROR(CheckQueryParams(call.query, {"namespace"}));
  const std::string_view id = call.Param("id");
  BULWARK_RETURN_IF_ERROR(CheckEntryId(id));
  BULWARK_ASSIGN_OR_RETURN(auto request, ParseUpdateRequest(call.http.body, ctx.limits));
  BULWARK_ASSIGN_OR_RETURN(auto ns, ResolveNamespace(request.name_space, call.query));
  BULWARK_RETURN_IF_ERROR(Authorize(*call.caller, ns, Need::kWrite, EntryNotFound()));
  BULWARK_ASSIGN_OR_RETURN(auto entry, LoadVisibleEntry(ctx, ns, id));
  BULWARK_RETURN_IF_ERROR(MayRewrite(*call.caller, entry));
  // The entry keeps its key and expiry (reserved metadata) when the metadata is replaced.
  if (request.update.metadata) CarryReservedMetadata(entry.metadata, &*request.update.metadata);
  auto updated = ctx.backends.store->Update(ns, id, request.update, call.caller->principal.name);
  if (!updated.ok()) return EntryStatus(updated.status());
  RecordAudit(ctx, call, ns, AuditOperation::kUpdate, {updated->id});
  Reply reply;
  reply.body = {{"entry", EntryJson(*updated, ReportViewFor(*call.caller))}};
  return reply;
}

// DELETE and purge: a state change of one entry, answered with its new state.
absl::StatusOr<Reply> Remove(ServiceContext& ctx, const Call& call, bool purge) {
  BULWARK_RETURN_IF_ERROR(CheckQueryParams(call.query, {"namespace"}));
  const std::string_view id = call.Param("id");
  BULWARK_RETURN_IF_ERROR(CheckEntryId(id));
  std::optional<std::string> body_namespace;
  if (purge) {
    BULWARK_ASSIGN_OR_RETURN(auto request,
                             ParseEntryActionRequest(call.http.body, /*allow_reason=*/false, ctx.limits));
    body_namespace = request.name_space;
  } else if (!call.http.body.empty()) {
    return ApiError(absl::StatusCode::kInvalidArgument, "invalid_argument", "DELETE takes no request body");
  }
  BULWARK_ASSIGN_OR_RETURN(auto ns, ResolveNamespace(body_namespace, call.query));
  BULWARK_RETURN_IF_ERROR(Authorize(*call.caller, ns, purge ? Need::kAdmin : Need::kWrite, EntryNotFound()));
  BULWARK_ASSIGN_OR_RETURN(auto entry, LoadVisibleEntry(ctx, ns, id));
  // Deleting is changing the entry: the same principals who may rewrite it (issue #18 point 4).
  BULWARK_RETURN_IF_ERROR(MayRewrite(*call.caller, entry));
  MemoryStore& store = *ctx.backends.store;
  const std::string& actor = call.caller->principal.name;
  absl::Status status = purge ? store.Purge(ns, id, actor) : store.Delete(ns, id, actor);
  if (!status.ok()) return EntryStatus(status);
  RecordAudit(ctx, call, ns, purge ? AuditOperation::kPurge : AuditOperation::kDelete, {std::string(id)});
  Reply reply;
  reply.body = {{"id", id}, {"state", purge ? "purged" : "deleted"}};
  return reply;
}

}  // namespace

// Issue #18 point 4: an update is made only by a principal who could create the entry as it
// stands -- an admin, or its current principal (the last writer) when the entry's source is not
// "system" (which only admins may create). PermissionDenied otherwise; the caller can read the
// entry, so the refusal reveals nothing new.
absl::Status MayRewrite(const Caller& caller, const Entry& entry) {
  if (caller.principal.IsAdmin()) return absl::OkStatus();
  if (entry.source == Source::kSystem) return Forbidden("only an admin may change a \"system\" entry");
  if (entry.principal != caller.principal.name) {
    return Forbidden("only the entry's principal (its last writer) or an admin may change it");
  }
  return absl::OkStatus();
}

ReportView ReportViewFor(const Caller& caller) {
  return caller.principal.IsAdmin() ? ReportView::kFull : ReportView::kHidden;
}

nlohmann::json EntryJson(const Entry& entry, ReportView view) {
  nlohmann::json j = ToJson(entry);
  j["tag"] = HexEncode(entry.tag);
  if (view == ReportView::kHidden) j.erase("report");
  return j;
}

nlohmann::json GateJson(const DefendedSearchResult& result, ReportView view) {
  if (view == ReportView::kHidden) {
    return {{"decision", ToString(result.gate.decision)},
            {"flagged", result.gate.flagged},
            {"mode", ToString(result.gate.mode)}};
  }
  nlohmann::json gate = ToJson(result.gate);
  if (result.gate.decision == GateDecision::kStrip) gate["query"] = result.retrieved_query;
  return gate;
}

void WriteEntryJson(JsonWriter& w, const Entry& entry, std::optional<float> score, ReportView view) {
  // EntryJson's members in nlohmann's (sorted) order, with "score" in its place.
  w.BeginObject();
  w.Key("created_at_us");
  w.Int(entry.created_at_us);
  w.Key("id");
  w.String(entry.id);
  w.Key("key_id");
  w.Uint(entry.key_id);
  w.Key("kind");
  w.String(ToString(entry.kind));
  w.Key("metadata");
  WriteJsonTree(w, entry.metadata, InvalidJsonText::kReplace);
  w.Key("namespace");
  w.String(entry.name_space);
  w.Key("principal");
  w.String(entry.principal);
  if (view == ReportView::kFull && !entry.report.empty()) {
    w.Key("report");
    WriteJsonTree(w, entry.report, InvalidJsonText::kReplace);
  }
  if (score) {
    w.Key("score");
    w.Double(*score);
  }
  w.Key("source");
  w.String(ToString(entry.source));
  w.Key("state");
  w.String(ToString(entry.state));
  w.Key("tag");
  w.String(HexEncode(entry.tag));
  w.Key("text");
  w.String(entry.text);
  w.Key("updated_at_us");
  w.Int(entry.updated_at_us);
  w.EndObject();
}

std::string SearchResponseJson(const DefendedSearchResult& result, ReportView view) {
  std::string out;
  out.reserve(512 + 640 * result.search.hits.size());
  JsonWriter w(&out);
  w.BeginObject();  // members in nlohmann's (sorted) order
  w.Key("gate");
  w.Json(GateJson(result, view));
  w.Key("hits");
  w.BeginArray();
  for (const SearchHit& hit : result.search.hits) WriteEntryJson(w, hit.entry, hit.score, view);
  w.EndArray();
  w.Key("k");
  w.Int(result.k);
  if (result.smoothed) {
    w.Key("smoothed");
    w.Json(ToJson(*result.smoothed));
  }
  w.Key("withheld_candidates");
  w.Int(result.search.rejected_candidates);
  w.EndObject();
  return out;
}

std::string AddResponseJson(std::span<const Entry> entries, bool as_batch, ReportView view) {
  std::string out;
  out.reserve(64 + 640 * entries.size());
  JsonWriter w(&out);
  w.BeginObject();
  if (as_batch) {
    w.Key("entries");
    w.BeginArray();
    for (const Entry& e : entries) WriteEntryJson(w, e, std::nullopt, view);
    w.EndArray();
  } else {
    w.Key("entry");
    WriteEntryJson(w, entries.front(), std::nullopt, view);
  }
  w.EndObject();
  return out;
}

absl::StatusOr<Entry> LoadVisibleEntry(ServiceContext& ctx, std::string_view name_space,
                                       std::string_view id) {
  auto entry = ctx.backends.store->Get(name_space, id);
  if (!entry.ok()) return EntryStatus(entry.status());
  if (entry->kind == Kind::kHoneypot) return EntryNotFound();
  // Expired: never returned, even before the sweeper purges it (store/expiry_sweeper.h).
  Env* env = ctx.backends.env ? ctx.backends.env : Env::Default();
  if (IsExpired(*entry, env->NowMicros())) return EntryNotFound();
  return entry;
}

DefendedSearchRequest MakeDefendedRequest(const Call& call, std::string name_space, std::string query,
                                          SearchOptions options, const ReadDefenseFields& defenses) {
  DefendedSearchRequest request;
  request.name_space = std::move(name_space);
  request.query = std::move(query);
  request.search = std::move(options);
  request.gate_mode = defenses.gate_mode;
  request.may_weaken_gate = call.caller->principal.IsAdmin();
  request.k_high = defenses.k_high;
  request.smoothing = defenses.smoothing;
  request.responder = defenses.responder;
  request.principal = call.caller->principal.name;  // the honeypot monitor's key
  request.session = call.caller->session;
  return request;  // the seed is always fresh: a client must not pick the subsets
}

absl::Status QueryRejected(const GateVerdict& verdict, ReportView view) {
  if (view == ReportView::kHidden) {
    return ApiError(absl::StatusCode::kPermissionDenied, "query_rejected",
                    "the query gate rejected this query");
  }
  return ApiError(
      absl::StatusCode::kPermissionDenied, "query_rejected",
      absl::StrCat("the query gate rejected this query (", ToAbsl(ToString(*verdict.score_kind)), " score ",
                   verdict.score, " is above the namespace's threshold ", verdict.threshold, ")"));
}

void RecordAudit(ServiceContext& ctx, const Call& call, std::string_view name_space, AuditOperation operation,
                 std::vector<std::string> returned_ids, std::string query_hash, nlohmann::json detail) {
  if (ctx.backends.audit == nullptr) return;
  AuditRecord record;
  record.at_us = ctx.backends.env->NowMicros();
  record.principal = call.caller->principal.name;
  record.session = call.caller->session;
  record.name_space = std::string(name_space);
  record.operation = std::string(ToString(operation));
  record.query_hash = std::move(query_hash);
  record.returned_ids = std::move(returned_ids);
  record.detail = std::move(detail);
  if (!record.detail.is_object()) record.detail = {{"detail", std::move(record.detail)}};
  record.detail["key_id"] = call.caller->key_id;  // which credential, not only which principal
  if (auto trace = TraceParentOf(call.http)) record.detail["traceparent"] = *std::move(trace);
  // A call made by an MCP tool records the tool and the client.
  if (call.mcp != nullptr) record.detail["mcp"] = *call.mcp;
  ctx.backends.audit->Append(std::move(record));
}

void AddMemoryRoutes(ServiceContext& ctx, std::vector<RouteSpec>* routes) {
  auto bind = [&ctx](auto fn) { return [&ctx, fn](const Call& call) { return fn(ctx, call); }; };
  routes->push_back({"POST", "/v1/memories", Access::kAuthenticated, bind(Add)});
  routes->push_back({"POST", "/v1/memories/search", Access::kAuthenticated, bind(Search)});
  routes->push_back({"GET", "/v1/memories/{id}", Access::kAuthenticated, bind(Get)});
  routes->push_back({"GET", "/v1/memories/{id}/history", Access::kAuthenticated, bind(History)});
  routes->push_back({"PATCH", "/v1/memories/{id}", Access::kAuthenticated, bind(Update)});
  routes->push_back({"DELETE", "/v1/memories/{id}", Access::kAuthenticated,
                     [&ctx](const Call& call) { return Remove(ctx, call, /*purge=*/false); }});
  routes->push_back({"POST", "/v1/memories/{id}/purge", Access::kAuthenticated,
                     [&ctx](const Call& call) { return Remove(ctx, call, /*purge=*/true); }});
}

}  // namespace bulwark::server
