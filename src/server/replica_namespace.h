// The namespace a request acts on, and whether it writes it: what ReplicaRouting (replica_routing.h)
// routes by when several `bulwark serve` replicas share one PostgreSQL store (issue #17 point 2;
// doc/scale-out.md, "Replicas in bulwark serve").
//
//   native API   /v1/memories..., /v1/quarantine..., /v1/namespaces/{namespace}/..., /v1/answer:
//                the `namespace` of the path, body or query string; writes are the non-GET routes
//                other than search and answer.
//   Mem0 /v3     add (write) and delete-all (write) by their entity ids (mem0_mapping.h); search
//                and get-all (reads) by their filters; the id routes /v1/memories/{id}/ by the
//                granted namespace whose storage holds the id (`find_entry`).
//   MCP /mcp     a tools/call by its tool (add_memory, update_memory, delete_memory write; the
//                others read) and its namespace argument, else ?namespace=, else the caller's only
//                granted namespace. A request whose Origin the MCP endpoint refuses
//                (McpOriginAllowed, request_guards.h) is not routed: it is refused where it
//                arrived; one it allows is routed like any other (its Origin is not forwarded).
//
// nullopt when the request is store-wide (admin, /v1/namespaces, MCP's initialize or tools/list)
// or names no valid namespace: the handler then runs where the request was received and answers
// any error itself. Parsing here is for routing only; the handler parses and checks again.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "server/service.h"

namespace bulwark::server {

struct RequestNamespace {
  std::string name_space;
  bool write = false;
};

// `find_entry(ns, id)`: whether the storage of namespace ns holds entry id (the Mem0 id routes).
// `granted`: the namespaces to look in when the caller holds "*" (the store's known namespaces).
struct NamespaceLookup {
  std::function<bool(std::string_view, std::string_view)> find_entry;
  std::function<std::vector<std::string>()> all_namespaces;
};

std::optional<RequestNamespace> NamespaceOfRequest(const RouteSpec& route, const Call& call,
                                                   const NamespaceLookup& lookup);

}  // namespace bulwark::server
