// The namespace a request acts on (see replica_namespace.h).
#include "server/replica_namespace.h"

#include <absl/strings/match.h>

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>

#include "core/strings.h"
#include "core/text_validation.h"
#include "server/authorization.h"
#include "server/mem0_mapping.h"
#include "server/query_params.h"
#include "server/request_guards.h"
#include "server/request_parsing.h"

namespace bulwark::server {
namespace {

using nlohmann::json;

std::optional<json> BodyObject(const Call& call) {
  if (call.http.body.empty()) return json::object();
  absl::StatusOr<json> body = ParseJsonObject(call.http.body, RequestLimits{}.max_depth);
  if (!body.ok()) return std::nullopt;
  return *std::move(body);
}

// The `namespace` of the path, the body or the query string (ResolveNamespace's rules).
std::optional<std::string> NativeNamespace(const Call& call) {
  if (std::string_view in_path = call.Param("namespace"); !in_path.empty()) return std::string(in_path);
  std::optional<json> body = BodyObject(call);
  if (!body) return std::nullopt;
  std::optional<std::string> in_body;
  if (auto it = body->find("namespace"); it != body->end()) {
    if (!it->is_string()) return std::nullopt;
    in_body = it->get<std::string>();
  }
  absl::StatusOr<std::string> ns = ResolveNamespace(in_body, call.query);
  if (!ns.ok()) return std::nullopt;
  return *std::move(ns);
}

std::optional<RequestNamespace> Native(const RouteSpec& route, const Call& call) {
  const bool namespaced =
      absl::StartsWith(route.pattern, "/v1/memories") || absl::StartsWith(route.pattern, "/v1/quarantine") ||
      absl::StartsWith(route.pattern, "/v1/namespaces/{namespace}/") || route.pattern == "/v1/answer";
  if (!namespaced) return std::nullopt;
  std::optional<std::string> ns = NativeNamespace(call);
  if (!ns) return std::nullopt;
  const bool write = route.method != "GET" && route.method != "HEAD" &&
                     route.pattern != "/v1/memories/search" && route.pattern != "/v1/answer";
  return RequestNamespace{*std::move(ns), write};
}

// The granted namespace whose storage holds the Mem0 id of the path.
std::optional<std::string> Mem0NamespaceOfId(const Call& call, const NamespaceLookup& lookup) {
  const std::string_view id = call.Param("id");
  if (id.empty() || call.caller == nullptr || !lookup.find_entry) return std::nullopt;
  std::vector<std::string> names;
  if (HoldsAllNamespaces(call.caller->principal)) {
    if (lookup.all_namespaces) names = lookup.all_namespaces();
  } else {
    names = call.caller->principal.namespaces;
  }
  for (const std::string& ns : names) {
    if (lookup.find_entry(ns, id)) return ns;
  }
  return std::nullopt;
}

std::optional<RequestNamespace> Mem0(const RouteSpec& route, const Call& call,
                                     const NamespaceLookup& lookup) {
  if (absl::StartsWith(route.pattern, "/v1/memories/{id}/")) {  // get, update, delete, history by id
    std::optional<std::string> ns = Mem0NamespaceOfId(call, lookup);
    if (!ns) return std::nullopt;
    return RequestNamespace{*std::move(ns), route.method == "PUT" || route.method == "DELETE"};
  }
  absl::StatusOr<Mem0Scope> scope = absl::InvalidArgumentError("not a Mem0 route");
  bool write = false;
  if (route.pattern == "/v1/memories/" && route.method == "DELETE") {  // delete-all by entity ids
    json entities = json::object();
    for (const auto& [name, value] : call.query) entities[name] = value;
    scope = Mem0ScopeOfEntities(entities);
    write = true;
  } else if (route.pattern == "/v3/memories/add/") {
    std::optional<json> body = BodyObject(call);
    if (!body) return std::nullopt;
    scope = Mem0ScopeOfEntities(*body);
    write = true;
  } else if (route.pattern == "/v3/memories/search/" || route.pattern == "/v3/memories/") {
    std::optional<json> body = BodyObject(call);
    if (!body) return std::nullopt;
    const json filters = body->value("filters", json::object());
    scope = Mem0ScopeOfFilters(filters);
  }
  if (!scope.ok()) return std::nullopt;
  return RequestNamespace{std::move(scope->name_space), write};
}

std::optional<RequestNamespace> Mcp(const Call& call) {
  // A browser's request is checked for its Origin where it arrived (the Host it was sent to); one
  // refused there is answered there (403). An allowed one is routed like any other: the Origin
  // header is not forwarded, its check is done.
  if (!McpOriginAllowed(call.http)) return std::nullopt;
  std::optional<json> body = BodyObject(call);
  if (!body || body->value("method", "") != "tools/call") return std::nullopt;
  const json params = body->value("params", json::object());
  if (!params.is_object()) return std::nullopt;
  const std::string tool = params.value("name", "");
  constexpr std::array<std::string_view, 3> kWriteTools = {"add_memory", "update_memory", "delete_memory"};
  const bool write = std::find(kWriteTools.begin(), kWriteTools.end(), tool) != kWriteTools.end();
  const json arguments = params.value("arguments", json::object());
  std::optional<std::string> ns;
  if (arguments.is_object() && arguments.contains("namespace") && arguments["namespace"].is_string()) {
    ns = arguments["namespace"].get<std::string>();
  } else if (std::optional<std::string> in_query = QueryParam(call.query, "namespace")) {
    ns = *in_query;
  } else if (call.caller != nullptr && call.caller->principal.namespaces.size() == 1 &&
             !HoldsAllNamespaces(call.caller->principal)) {
    ns = call.caller->principal.namespaces.front();
  }
  if (!ns || !ValidateNamespace(*ns).ok()) return std::nullopt;
  return RequestNamespace{*std::move(ns), write};
}

}  // namespace

std::optional<RequestNamespace> NamespaceOfRequest(const RouteSpec& route, const Call& call,
                                                   const NamespaceLookup& lookup) {
  if (route.pattern == "/mcp") return Mcp(call);
  if (absl::StartsWith(route.pattern, "/v3/") || absl::EndsWith(route.pattern, "/")) {
    return Mem0(route, call, lookup);
  }
  return Native(route, call);
}

}  // namespace bulwark::server
