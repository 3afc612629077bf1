// MCP tools over the HTTP API's handlers (see mcp_service.h).
#include "server/mcp_service.h"

#include <absl/strings/str_cat.h>

#include "core/ids.h"
#include "core/status_macros.h"
#include "core/strings.h"
#include "mcp/rendering.h"
#include "server/api_status.h"
#include "store/entry_listing.h"
#include "store/entry_store.h"

namespace bulwark::server {
namespace {

using json = nlohmann::json;
using mcp::ToolId;
using mcp::ToolOutput;

// The namespace of a call (see mcp_service.h); "" when none can be chosen.
std::string NamespaceOf(const Caller& caller, const std::string& fallback, const json& arguments) {
  if (auto ns = arguments.find("namespace"); ns != arguments.end()) return ns->get<std::string>();
  if (!fallback.empty()) return fallback;
  const std::vector<std::string>& grants = caller.principal.namespaces;
  if (grants.size() == 1 && grants[0] != "*") return grants[0];
  return "";
}

ToolOutput Failure(const absl::Status& status) {
  json body = ErrorBody(status)["error"];  // 500-class messages are replaced by a generic one
  ToolOutput out;
  out.is_error = true;
  out.text = absl::StrCat("Error (", body.value("code", "error"), "): ", body.value("message", ""));
  out.structured = {{"error", std::move(body)}};
  return out;
}

// What a model needs of an entry: id, text, provenance, state; never the write gate's report.
json Memory(const json& entry) {
  json out = {{"id", entry.value("id", "")},
              {"namespace", entry.value("namespace", "")},
              {"text", entry.value("text", "")},
              {"metadata", entry.value("metadata", json::object())},
              {"source", entry.value("source", "")},
              {"principal", entry.value("principal", "")},
              {"state", entry.value("state", "")},
              {"created_at", mcp::Rfc3339(entry.value("created_at_us", int64_t{0}))},
              {"updated_at", mcp::Rfc3339(entry.value("updated_at_us", int64_t{0}))}};
  if (entry.contains("score")) out["score"] = entry["score"];
  return out;
}

// `reply_text`: the add route's answer (AddResponseJson).
ToolOutput AddOutput(const std::string& reply_text) {
  const json reply = json::parse(reply_text, nullptr, /*allow_exceptions=*/false);
  const json entry = reply.is_object() ? reply.value("entry", json::object()) : json::object();
  const bool held = entry.value("state", "") == "quarantined";
  ToolOutput out;
  out.structured = {{"id", entry.value("id", "")},
                    {"namespace", entry.value("namespace", "")},
                    {"status", held ? "held_for_review" : "stored"}};
  out.text = held ? absl::StrCat("Held for review: the write gate quarantined memory ", entry.value("id", ""),
                                 ". It will not be recalled unless a human releases it.")
                  : absl::StrCat("Stored memory ", entry.value("id", ""), " in namespace ",
                                 entry.value("namespace", ""), ".");
  return out;
}

ToolOutput SearchOutput(const std::string& reply_text) {
  const json reply = json::parse(reply_text, nullptr, /*allow_exceptions=*/false);
  json hits = json::array();
  for (const json& hit : reply.value("hits", json::array())) hits.push_back(Memory(hit));
  const int64_t withheld = reply.value("withheld_candidates", int64_t{0});
  ToolOutput out;
  out.text = mcp::RenderHits(reply.value("hits", json::array()), withheld);
  out.structured = {{"hits", std::move(hits)}, {"withheld_candidates", withheld}};
  return out;
}

ToolOutput EntryOutput(const json& entry, std::string_view verb) {
  ToolOutput out;
  out.structured = {{"memory", Memory(entry)}};
  out.text = absl::StrCat(ToAbsl(verb), " ", mcp::RenderEntry(entry, 0));
  return out;
}

}  // namespace

McpService::McpService(ServiceContext& context) : context_(context) { AddMemoryRoutes(context_, &routes_); }

absl::StatusOr<Reply> McpService::CallRoute(std::string_view method, std::string_view pattern,
                                            const Caller& caller, std::string id, std::string name_space,
                                            std::string body, const json& audit) const {
  for (const RouteSpec& route : routes_) {
    if (route.method != method || route.pattern != pattern) continue;
    httplib::Request request;
    request.method = std::string(method);
    request.path = std::string(pattern);
    request.body = std::move(body);
    PathParams params;
    if (!id.empty()) params.emplace_back("id", std::move(id));
    QueryParams query;
    if (!name_space.empty()) query.emplace("namespace", std::move(name_space));
    const Call call{request, params, query, &caller, &audit};
    return route.handler(call);
  }
  return absl::InternalError(absl::StrCat("no memory route ", ToAbsl(method), " ", ToAbsl(pattern)));
}

ToolOutput McpService::Run(const Caller& caller, const std::string& default_namespace,
                           const mcp::ToolSpec& tool, const json& arguments, const mcp::CallInfo& info) {
  // The session: the one the request names, else X-Bulwark-Session, else "mcp:<client name>".
  Caller acting = caller;
  if (!info.session.empty() && ValidateSessionId(info.session).ok()) {
    acting.session = info.session;
  } else if (acting.session.empty() && !info.client_name.empty()) {
    acting.session = absl::StrCat("mcp:", info.client_name);
  }
  const json audit = {{"tool", info.tool},
                      {"client", info.client_name},
                      {"client_version", info.client_version},
                      {"protocol", info.protocol_version}};
  const std::string name_space = NamespaceOf(acting, default_namespace, arguments);
  absl::StatusOr<ToolOutput> out = name_space.empty()
                                       ? absl::StatusOr<ToolOutput>(ApiError(
                                             absl::StatusCode::kInvalidArgument, "missing_field",
                                             "argument \"namespace\" is required: this API key is granted "
                                             "several namespaces and /mcp was given no ?namespace= default"))
                                       : RunTool(acting, name_space, tool, arguments, audit);
  if (!out.ok()) {
    RecordRefusal(acting, tool.name, out.status());
    return Failure(out.status());
  }
  return *std::move(out);
}

absl::StatusOr<ToolOutput> McpService::RunTool(const Caller& caller, const std::string& ns,
                                               const mcp::ToolSpec& tool, const json& args,
                                               const json& audit) {
  const std::string id = args.value("memory_id", "");
  switch (tool.id) {
    case ToolId::kAddMemory: {
      json body = {{"text", args["text"]}, {"source", args.value("source", "agent")}};
      if (args.contains("metadata")) body["metadata"] = args["metadata"];
      BULWARK_ASSIGN_OR_RETURN(Reply reply,
                               CallRoute("POST", "/v1/memories", caller, "", ns, body.dump(), audit));
      return AddOutput(reply.text);
    }
    case ToolId::kSearchMemories: {
      json body = {{"query", args["query"]}, {"k", args.value("limit", 5)}};
      if (args.contains("filters")) body["filter"] = args["filters"];
      BULWARK_ASSIGN_OR_RETURN(Reply reply,
                               CallRoute("POST", "/v1/memories/search", caller, "", ns, body.dump(), audit));
      return SearchOutput(reply.text);
    }
    case ToolId::kGetMemories:
      return ListPage(caller, ns, args, audit);
    case ToolId::kGetMemory: {
      BULWARK_ASSIGN_OR_RETURN(Reply reply, CallRoute("GET", "/v1/memories/{id}", caller, id, ns, "", audit));
      return EntryOutput(reply.body["entry"], "Memory");
    }
    case ToolId::kMemoryHistory: {
      BULWARK_ASSIGN_OR_RETURN(Reply reply,
                               CallRoute("GET", "/v1/memories/{id}/history", caller, id, ns, "", audit));
      ToolOutput out;
      out.structured = {{"id", id}, {"events", reply.body["events"]}};
      out.text = mcp::RenderHistory(id, reply.body["events"]);
      return out;
    }
    case ToolId::kUpdateMemory: {
      json body = json::object();
      if (args.contains("text")) body["text"] = args["text"];
      if (args.contains("metadata")) body["metadata"] = args["metadata"];
      BULWARK_ASSIGN_OR_RETURN(Reply reply,
                               CallRoute("PATCH", "/v1/memories/{id}", caller, id, ns, body.dump(), audit));
      return EntryOutput(reply.body["entry"], "Updated");
    }
    case ToolId::kDeleteMemory: {
      BULWARK_ASSIGN_OR_RETURN(Reply reply,
                               CallRoute("DELETE", "/v1/memories/{id}", caller, id, ns, "", audit));
      ToolOutput out;
      out.structured = {{"id", id}, {"state", "deleted"}};
      out.text = absl::StrCat("Deleted memory ", id, ".");
      return out;
    }
  }
  return absl::InternalError("unknown tool");
}

// One page of get_memories (see mcp_service.h): the verified, unexpired active entries after
// `cursor` that match `filters`, oldest first, read through the keyset listing of GET /v1/memories
// (entry_listing.h); "next_cursor" is set when more may follow.
absl::StatusOr<ToolOutput> McpService::ListPage(const Caller& caller, const std::string& ns, const json& args,
                                                const json& audit) {
  BULWARK_RETURN_IF_ERROR(Authorize(caller, ns, Need::kRead, NamespaceNotFound()));
  ListRequest request;
  request.limit = args.value("limit", 20);
  request.cursor = args.value("cursor", "");
  if (!request.cursor.empty() && !IsValidEntryId(request.cursor)) {
    return ApiError(absl::StatusCode::kInvalidArgument, "invalid_argument", "the cursor is not a memory id");
  }
  request.filter = args.value("filters", json::object());
  BULWARK_ASSIGN_OR_RETURN(bulwark::ListPage page, ListEntries(*context_.backends.store, ns, request));
  json entries = json::array();
  std::vector<std::string> ids;
  for (const Entry& e : page.entries) {
    ids.push_back(e.id);
    entries.push_back(EntryJson(e, ReportView::kHidden));
  }

  const json next = page.next_cursor.empty() ? json(nullptr) : json(page.next_cursor);
  if (context_.backends.audit != nullptr) {
    AuditRecord record;
    record.at_us = context_.backends.env->NowMicros();
    record.principal = caller.principal.name;
    record.session = caller.session;
    record.name_space = ns;
    record.operation = std::string(ToString(AuditOperation::kGet));
    record.returned_ids = ids;
    record.detail = {{"key_id", caller.key_id}, {"mcp", audit}};
    context_.backends.audit->Append(std::move(record));
  }
  ToolOutput out;
  out.text = mcp::RenderPage(entries, next);
  json memories = json::array();
  for (const json& entry : entries) memories.push_back(Memory(entry));
  out.structured = {{"memories", std::move(memories)}, {"next_cursor", next}};
  return out;
}

void McpService::RecordRefusal(const Caller& caller, std::string_view tool, const absl::Status& status) {
  const int http_status = HttpStatusOf(status.code());
  if ((http_status != 401 && http_status != 403) || context_.backends.audit == nullptr) return;
  AuditRecord record;
  record.at_us = context_.backends.env->NowMicros();
  record.principal = caller.principal.name;
  record.session = caller.session;
  record.operation = std::string(ToString(AuditOperation::kRefused));
  record.detail = {{"key_id", caller.key_id},
                   {"method", "POST"},
                   {"route", absl::StrCat("/mcp tools/call ", ToAbsl(tool))},
                   {"status", http_status},
                   {"code", ApiCodeOf(status)}};
  context_.backends.audit->Append(std::move(record));
}

}  // namespace bulwark::server
