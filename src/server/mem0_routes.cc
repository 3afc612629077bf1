// A Mem0-compatible facade (issue #15 point 3; doc/mem0.md): the paths and shapes of Mem0's
// platform API, so a Mem0 client switches to Bulwark by changing its host. Every call goes through
// the same authorization, write gate, signatures, read-time defenses and audit as the native
// routes; the facade only translates.
//
//   GET    /v1/ping/                       any     {"status": "ok"}
//   POST   /v3/memories/add/               writer  store each message verbatim (infer is ignored)
//   POST   /v3/memories/search/            reader  top_k through the read-time defenses
//   POST   /v3/memories/?page=&page_size=  reader  one page of the scope's memories
//   GET    /v1/memories/{id}/              reader  one memory
//   PUT    /v1/memories/{id}/              writer  change text and/or metadata
//   DELETE /v1/memories/{id}/              writer  soft delete
//   GET    /v1/memories/{id}/history/      reader  its history as Mem0 events
//   DELETE /v1/memories/?user_id=...       admin   delete-all of the scope
//
// Mem0 ids carry no namespace: an id is looked up in the caller's granted namespaces only, so an
// entry elsewhere answers exactly like a missing one.
#include <absl/strings/str_cat.h>

#include <algorithm>

#include "core/hex.h"
#include "core/ids.h"
#include "core/status_macros.h"
#include "core/strings.h"
#include "server/api_status.h"
#include "server/mem0_mapping.h"
#include "server/service.h"
#include "store/entry_keys.h"
#include "store/entry_listing.h"

namespace bulwark::server {
namespace {

using nlohmann::json;

absl::Status Mem0Bad(std::string_view code, std::string_view message) {
  return ApiError(absl::StatusCode::kInvalidArgument, code, message);
}

absl::Status Mem0OnlyFields(const json& body, std::initializer_list<std::string_view> allowed) {
  for (const auto& [name, value] : body.items()) {
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      return Mem0Bad("unknown_field", absl::StrCat("unknown field \"", name, "\""));
    }
  }
  return absl::OkStatus();
}

// The messages of an add as entries: a string is one user message; an array holds {role, content}.
absl::StatusOr<std::vector<NewEntry>> Mem0MessagesToEntries(const json& messages, const json& metadata) {
  std::vector<NewEntry> entries;
  auto add = [&](const std::string& role, const std::string& content) {
    NewEntry e;
    e.text = content;
    e.metadata = metadata;
    e.metadata["role"] = role;
    e.source = role == "user" ? Source::kUser : Source::kAgent;
    entries.push_back(std::move(e));
  };
  if (messages.is_string()) {
    add("user", messages.get<std::string>());
    return entries;
  }
  if (!messages.is_array() || messages.empty())
    return Mem0Bad("wrong_type", "messages must be a string or an array");
  for (const json& m : messages) {
    if (!m.is_object() || !m.contains("content") || !m["content"].is_string()) {
      return Mem0Bad("wrong_type", "each message is {\"role\", \"content\": string}");
    }
    const std::string role = m.value("role", "user");
    if (role != "user" && role != "assistant" && role != "system") {
      return Mem0Bad("invalid_argument", "role must be user, assistant or system");
    }
    add(role, m["content"].get<std::string>());
  }
  return entries;
}

absl::StatusOr<Reply> Mem0Ping(ServiceContext&, const Call&) {
  Reply reply;
  reply.body = {{"status", "ok"}, {"org_id", nullptr}, {"project_id", nullptr}, {"user_email", nullptr}};
  return reply;
}

absl::StatusOr<Reply> Mem0Add(ServiceContext& ctx, const Call& call) {
  BULWARK_ASSIGN_OR_RETURN(json body, ParseJsonObject(call.http.body, ctx.limits.max_depth));
  BULWARK_RETURN_IF_ERROR(
      Mem0OnlyFields(body, {"messages", "user_id", "agent_id", "app_id", "run_id", "metadata", "infer",
                            "expiration_date", "output_format", "version", "async_mode"}));
  if (!body.contains("messages")) return Mem0Bad("missing_field", "missing field \"messages\"");
  BULWARK_ASSIGN_OR_RETURN(Mem0Scope scope, Mem0ScopeOfEntities(body));
  json metadata = body.value("metadata", json::object());
  if (!metadata.is_object()) return Mem0Bad("wrong_type", "metadata must be a JSON object");
  if (auto s = CheckNoReservedMetadata(metadata); !s.ok())
    return Mem0Bad("invalid_argument", ToStd(s.message()));
  for (const auto& [name, value] : scope.filter.items()) metadata[name] = value;  // the entity ids
  if (body.contains("expiration_date") && !body["expiration_date"].is_null()) {
    if (!body["expiration_date"].is_string())
      return Mem0Bad("wrong_type", "expiration_date must be a string");
    BULWARK_ASSIGN_OR_RETURN(int64_t expires,
                             ParseMem0ExpirationDate(body["expiration_date"].get<std::string>()));
    metadata[kExpiresAtField] = expires;
  }
  BULWARK_ASSIGN_OR_RETURN(std::vector<NewEntry> entries, Mem0MessagesToEntries(body["messages"], metadata));
  if (entries.size() > ctx.limits.max_batch_entries) return Mem0Bad("out_of_range", "too many messages");
  BULWARK_RETURN_IF_ERROR(Authorize(*call.caller, scope.name_space, Need::kWrite, NamespaceNotFound()));
  BULWARK_ASSIGN_OR_RETURN(
      auto added, ctx.backends.store->AddBatch(scope.name_space, entries, call.caller->principal.name));
  json out = json::array();
  std::vector<std::string> ids;
  for (const Entry& e : added) {
    json m = Mem0Memory(e);
    m["event"] = "ADD";
    m["data"] = {{"memory", e.text}};
    out.push_back(std::move(m));
    ids.push_back(e.id);
  }
  ctx.metrics->Count(EventCounter::kEntriesAdded, static_cast<int64_t>(ids.size()));
  RecordAudit(ctx, call, scope.name_space, AuditOperation::kAdd, std::move(ids), "", {{"api", "mem0"}});
  Reply reply;
  reply.body = std::move(out);
  return reply;
}

absl::StatusOr<Reply> Mem0Search(ServiceContext& ctx, const Call& call) {
  BULWARK_ASSIGN_OR_RETURN(json body, ParseJsonObject(call.http.body, ctx.limits.max_depth));
  BULWARK_RETURN_IF_ERROR(Mem0OnlyFields(body, {"query", "filters", "top_k", "threshold", "rerank",
                                                "output_format", "version", "fields", "keyword_search"}));
  if (!body.contains("query") || !body["query"].is_string())
    return Mem0Bad("missing_field", "query must be a string");
  BULWARK_ASSIGN_OR_RETURN(Mem0Scope scope, Mem0ScopeOfFilters(body.value("filters", json::object())));
  SearchOptions options;
  options.k = 10;
  if (body.contains("top_k")) {
    const json& k = body["top_k"];
    if (!k.is_number_integer() || k.get<int64_t>() < 1 || k.get<int64_t>() > ctx.limits.max_k) {
      return Mem0Bad("out_of_range", absl::StrCat("top_k must be between 1 and ", ctx.limits.max_k));
    }
    options.k = k.get<int>();
  }
  const double threshold = body.value("threshold", 0.0);
  options.metadata_filter = scope.filter;
  BULWARK_RETURN_IF_ERROR(Authorize(*call.caller, scope.name_space, Need::kRead, NamespaceNotFound()));
  const std::string query = body["query"];
  auto result = ctx.backends.retriever->Search(
      MakeDefendedRequest(call, scope.name_space, query, std::move(options), ReadDefenseFields{}));
  if (!result.ok()) return ReadPathStatus(result.status());
  ctx.metrics->CountGateDecision(result->gate.decision);
  ctx.metrics->ObserveSearchStages(result->stages);
  std::vector<std::string> ids;
  json results = json::array();
  for (const SearchHit& hit : result->search.hits) {
    ids.push_back(hit.entry.id);
    if (hit.score >= threshold) results.push_back(Mem0Memory(hit.entry, hit.score));
  }
  RecordAudit(ctx, call, scope.name_space, AuditOperation::kSearch, std::move(ids), Sha256Hex(query),
              {{"api", "mem0"}, {"gate", GateJson(*result, ReportView::kFull)}});
  if (result->rejected()) return QueryRejected(result->gate, ReportViewFor(*call.caller));
  Reply reply;
  reply.body = {{"results", std::move(results)}};
  return reply;
}

// GET-all: page-number pagination over the scope's active memories, oldest first. Counting walks
// the scope (at most 10,000 memories: beyond that `count` is a lower bound).
absl::StatusOr<Reply> Mem0GetAll(ServiceContext& ctx, const Call& call) {
  BULWARK_RETURN_IF_ERROR(CheckQueryParams(call.query, {"page", "page_size"}));
  BULWARK_ASSIGN_OR_RETURN(int64_t page, IntQueryParam(call.query, "page", 1, 1, 10000));
  BULWARK_ASSIGN_OR_RETURN(int64_t page_size, IntQueryParam(call.query, "page_size", 100, 1, 1000));
  BULWARK_ASSIGN_OR_RETURN(
      json body, ParseJsonObject(call.http.body.empty() ? "{}" : call.http.body, ctx.limits.max_depth));
  BULWARK_RETURN_IF_ERROR(Mem0OnlyFields(body, {"filters", "output_format", "version"}));
  BULWARK_ASSIGN_OR_RETURN(Mem0Scope scope, Mem0ScopeOfFilters(body.value("filters", json::object())));
  BULWARK_RETURN_IF_ERROR(Authorize(*call.caller, scope.name_space, Need::kRead, NamespaceNotFound()));
  ListRequest request;
  request.filter = scope.filter;
  request.limit = 1000;
  const int64_t first = (page - 1) * page_size;
  int64_t count = 0;
  json results = json::array();
  std::vector<std::string> ids;
  for (int pages = 0; pages < 10; ++pages) {
    BULWARK_ASSIGN_OR_RETURN(ListPage listed, ListEntries(*ctx.backends.store, scope.name_space, request));
    for (const Entry& e : listed.entries) {
      if (count >= first && count < first + page_size) {
        results.push_back(Mem0Memory(e));
        ids.push_back(e.id);
      }
      ++count;
    }
    if (listed.next_cursor.empty()) break;
    request.cursor = listed.next_cursor;
  }
  RecordAudit(ctx, call, scope.name_space, AuditOperation::kList, std::move(ids), "", {{"api", "mem0"}});
  auto link = [&](int64_t p) {
    return json(absl::StrCat("/v3/memories/?page=", p, "&page_size=", page_size));
  };
  Reply reply;
  reply.body = {{"count", count},
                {"next", first + page_size < count ? link(page + 1) : json(nullptr)},
                {"previous", page > 1 ? link(page - 1) : json(nullptr)},
                {"results", std::move(results)}};
  return reply;
}

// The namespace of entry `id` among those the caller is granted (Mem0 ids carry none), with the
// entry as the caller may see it. EntryNotFound when no granted namespace holds it.
absl::StatusOr<std::pair<std::string, Entry>> Mem0FindEntry(ServiceContext& ctx, const Call& call,
                                                            Need need) {
  const std::string id(call.Param("id"));
  if (!IsValidEntryId(id)) return Mem0Bad("invalid_argument", "the id is not a valid entry id");
  std::vector<std::string> names;
  if (HoldsAllNamespaces(call.caller->principal)) {
    BULWARK_ASSIGN_OR_RETURN(StoreStats stats, ctx.backends.store->Stats());
    for (const NamespaceStats& ns : stats.namespaces) names.push_back(ns.name_space);
  } else {
    for (const std::string& ns : call.caller->principal.namespaces) names.push_back(ns);
  }
  for (const std::string& ns : names) {
    auto entry = LoadVisibleEntry(ctx, ns, id);
    if (absl::IsNotFound(entry.status())) continue;
    if (!entry.ok()) return entry.status();
    BULWARK_RETURN_IF_ERROR(Authorize(*call.caller, ns, need, EntryNotFound()));
    return std::make_pair(ns, *std::move(entry));
  }
  return EntryNotFound();
}

absl::StatusOr<Reply> Mem0Get(ServiceContext& ctx, const Call& call) {
  BULWARK_RETURN_IF_ERROR(CheckQueryParams(call.query, {}));
  BULWARK_ASSIGN_OR_RETURN(auto found, Mem0FindEntry(ctx, call, Need::kRead));
  // Mem0 has no deleted memories to show: a deleted or purged entry is gone (history still lists it).
  if (found.second.state == State::kDeleted || found.second.state == State::kPurged) return EntryNotFound();
  RecordAudit(ctx, call, found.first, AuditOperation::kGet, {found.second.id}, "", {{"api", "mem0"}});
  Reply reply;
  reply.body = Mem0Memory(found.second);
  return reply;
}

absl::StatusOr<Reply> Mem0Put(ServiceContext& ctx, const Call& call) {
  BULWARK_RETURN_IF_ERROR(CheckQueryParams(call.query, {}));
  BULWARK_ASSIGN_OR_RETURN(json body, ParseJsonObject(call.http.body, ctx.limits.max_depth));
  BULWARK_RETURN_IF_ERROR(Mem0OnlyFields(body, {"text", "metadata"}));
  EntryUpdate update;
  if (body.contains("text")) {
    if (!body["text"].is_string()) return Mem0Bad("wrong_type", "text must be a string");
    update.text = body["text"].get<std::string>();
  }
  if (body.contains("metadata")) {
    if (!body["metadata"].is_object()) return Mem0Bad("wrong_type", "metadata must be a JSON object");
    if (auto s = CheckNoReservedMetadata(body["metadata"]); !s.ok())
      return Mem0Bad("invalid_argument", ToStd(s.message()));
    update.metadata = body["metadata"];
  }
  if (!update.text && !update.metadata)
    return Mem0Bad("missing_field", "an update needs text and/or metadata");
  BULWARK_ASSIGN_OR_RETURN(auto found, Mem0FindEntry(ctx, call, Need::kWrite));
  auto& [ns, entry] = found;
  BULWARK_RETURN_IF_ERROR(MayRewrite(*call.caller, entry));
  if (update.metadata) CarryMem0Metadata(entry.metadata, &*update.metadata);
  auto updated = ctx.backends.store->Update(ns, entry.id, update, call.caller->principal.name);
  if (!updated.ok()) return absl::IsNotFound(updated.status()) ? EntryNotFound() : updated.status();
  RecordAudit(ctx, call, ns, AuditOperation::kUpdate, {updated->id}, "", {{"api", "mem0"}});
  Reply reply;
  reply.body = Mem0Memory(*updated);
  return reply;
}

absl::StatusOr<Reply> Mem0Delete(ServiceContext& ctx, const Call& call) {
  BULWARK_RETURN_IF_ERROR(CheckQueryParams(call.query, {"delete_linked"}));
  BULWARK_ASSIGN_OR_RETURN(auto found, Mem0FindEntry(ctx, call, Need::kWrite));
  const std::string& ns = found.first;
  BULWARK_RETURN_IF_ERROR(MayRewrite(*call.caller, found.second));  // as DELETE /v1/memories/{id}
  absl::Status s = ctx.backends.store->Delete(ns, found.second.id, call.caller->principal.name);
  if (!s.ok()) return absl::IsNotFound(s) ? EntryNotFound() : s;
  RecordAudit(ctx, call, ns, AuditOperation::kDelete, {found.second.id}, "", {{"api", "mem0"}});
  Reply reply;
  reply.body = {{"message", "Memory deleted successfully!"}};
  return reply;
}

// The history as Mem0 events: add -> ADD, update -> UPDATE (old and new text), delete, reject and
// purge -> DELETE; quarantine and release keep their names in upper case.
absl::StatusOr<Reply> Mem0History(ServiceContext& ctx, const Call& call) {
  BULWARK_RETURN_IF_ERROR(CheckQueryParams(call.query, {}));
  BULWARK_ASSIGN_OR_RETURN(auto found, Mem0FindEntry(ctx, call, Need::kRead));
  const auto& [ns, entry] = found;
  BULWARK_ASSIGN_OR_RETURN(std::vector<HistoryEvent> events, ctx.backends.store->History(ns, entry.id));
  json out = json::array();
  json previous = nullptr;
  for (const HistoryEvent& ev : events) {
    std::string name = ev.event == "add" ? "ADD" : ev.event == "update" ? "UPDATE" : "DELETE";
    if (ev.event == "quarantine" || ev.event == "release")
      name = ev.event == "quarantine" ? "QUARANTINE" : "RELEASE";
    json text =
        ev.detail.contains("text") && ev.detail["text"].is_string() ? ev.detail["text"] : json(nullptr);
    const bool changes_text = name == "ADD" || name == "UPDATE";
    out.push_back({{"id", std::to_string(ev.seq)},
                   {"memory_id", entry.id},
                   {"event", name},
                   {"old_memory", changes_text     ? previous
                                  : text.is_null() ? previous
                                                   : text},
                   {"new_memory", changes_text ? text : json(nullptr)},
                   {"input", json::array()},
                   {"categories", json::array()},
                   {"user_id", entry.metadata.value("user_id", json(nullptr))},
                   {"actor", ev.actor},
                   {"verified", ev.verified},
                   {"created_at", IsoTime(ev.at_us)},
                   {"updated_at", IsoTime(ev.at_us)}});
    if (changes_text) previous = text;
  }
  RecordAudit(ctx, call, ns, AuditOperation::kHistory, {entry.id}, "", {{"api", "mem0"}});
  Reply reply;
  reply.body = std::move(out);
  return reply;
}

// DELETE /v1/memories/?user_id=...: the scope's live memories, soft-deleted (admin, like delete-all).
absl::StatusOr<Reply> Mem0DeleteAll(ServiceContext& ctx, const Call& call) {
  BULWARK_RETURN_IF_ERROR(CheckQueryParams(call.query, {"user_id", "agent_id", "app_id", "run_id"}));
  json entities = json::object();
  for (const auto& [name, value] : call.query) entities[name] = value;
  BULWARK_ASSIGN_OR_RETURN(Mem0Scope scope, Mem0ScopeOfEntities(entities));
  BULWARK_RETURN_IF_ERROR(Authorize(*call.caller, scope.name_space, Need::kAdmin, NamespaceNotFound()));
  BulkChange change;
  change.filter = scope.filter;
  BULWARK_ASSIGN_OR_RETURN(BulkChangeResult result, ApplyToNamespace(*ctx.backends.store, scope.name_space,
                                                                     change, call.caller->principal.name));
  RecordAudit(
      ctx, call, scope.name_space, AuditOperation::kDeleteAll, result.ids, "",
      {{"api", "mem0"}, {"filter", scope.filter}, {"count", result.ids.size()}, {"more", result.more}});
  Reply reply;
  reply.body = {
      {"message", "Memories deleted successfully!"}, {"deleted", result.ids.size()}, {"more", result.more}};
  return reply;
}

}  // namespace

void AddMem0Routes(ServiceContext& ctx, std::vector<RouteSpec>* routes) {
  auto bind = [&ctx](auto fn) { return [&ctx, fn](const Call& call) { return fn(ctx, call); }; };
  routes->push_back({"GET", "/v1/ping/", Access::kAuthenticated, bind(Mem0Ping)});
  routes->push_back({"POST", "/v3/memories/add/", Access::kAuthenticated, bind(Mem0Add)});
  routes->push_back({"POST", "/v3/memories/search/", Access::kAuthenticated, bind(Mem0Search)});
  routes->push_back({"POST", "/v3/memories/", Access::kAuthenticated, bind(Mem0GetAll)});
  routes->push_back({"GET", "/v1/memories/{id}/", Access::kAuthenticated, bind(Mem0Get)});
  routes->push_back({"PUT", "/v1/memories/{id}/", Access::kAuthenticated, bind(Mem0Put)});
  routes->push_back({"DELETE", "/v1/memories/{id}/", Access::kAuthenticated, bind(Mem0Delete)});
  routes->push_back({"GET", "/v1/memories/{id}/history/", Access::kAuthenticated, bind(Mem0History)});
  routes->push_back({"DELETE", "/v1/memories/", Access::kAuthenticated, bind(Mem0DeleteAll)});
}

}  // namespace bulwark::server
