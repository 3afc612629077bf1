// McpService: Bulwark's MCP tools over the HTTP API's own handlers. Each tool call becomes the
// request the matching route would get (POST /v1/memories, POST /v1/memories/search,
// GET/PATCH/DELETE /v1/memories/{id}, GET /v1/memories/{id}/history) and runs that route's handler
// with the caller's identity, so authorization, tenant isolation, the write pipeline (write gate,
// signing), the defended read path (query gate, smoothing, honeypot guard), metrics and the audit
// record are exactly the API's. The audit record's detail gains "mcp": {"tool", "client",
// "client_version", "protocol"}, and its session is the one the request names (dispatcher.h), else
// the caller's X-Bulwark-Session, else "mcp:<client name>".
//
// get_memories has no route yet (the paginated list of issue #15 point 1 is being added
// separately): until it lands it is served here from MemoryStore::Export with a bounded page
// (limit <= 100, keyset cursor on the time-ordered id, at most limit + 1 entries held), which
// reads the whole namespace on every page.
//
// The namespace of a call: its `namespace` argument, else the service's default (the `namespace`
// query parameter of /mcp, or `bulwark mcp -n`), else the caller's only granted namespace (when it
// has exactly one and it is not "*"); with none of these the call fails and says so.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mcp/dispatcher.h"
#include "server/service.h"

namespace bulwark::server {

class McpService {
 public:
  // `context` must outlive the service.
  explicit McpService(ServiceContext& context);

  // Runs a validated tool call for `caller`. Failures (refused, not found, rejected query, bad
  // argument) are ToolOutputs with is_error and {"error": {"code", "message"}}; a 500-class error
  // carries the generic message only.
  mcp::ToolOutput Run(const Caller& caller, const std::string& default_namespace, const mcp::ToolSpec& tool,
                      const nlohmann::json& arguments, const mcp::CallInfo& info);

 private:
  absl::StatusOr<Reply> CallRoute(std::string_view method, std::string_view pattern, const Caller& caller,
                                  std::string id, std::string name_space, std::string body,
                                  const nlohmann::json& audit) const;
  absl::StatusOr<mcp::ToolOutput> RunTool(const Caller& caller, const std::string& name_space,
                                          const mcp::ToolSpec& tool, const nlohmann::json& arguments,
                                          const nlohmann::json& audit);
  absl::StatusOr<mcp::ToolOutput> ListPage(const Caller& caller, const std::string& name_space,
                                           const nlohmann::json& arguments, const nlohmann::json& audit);
  void RecordRefusal(const Caller& caller, std::string_view tool, const absl::Status& status);

  ServiceContext& context_;
  std::vector<RouteSpec> routes_;  // the memory routes (AddMemoryRoutes), called in-process
};

// A ToolRunner for one request: `service` acting for `caller`.
class CallerToolRunner : public mcp::ToolRunner {
 public:
  CallerToolRunner(McpService& service, const Caller& caller, std::string default_namespace)
      : service_(service), caller_(caller), default_namespace_(std::move(default_namespace)) {}
  Role role() const override { return caller_.principal.role; }
  mcp::ToolOutput Run(const mcp::ToolSpec& tool, const nlohmann::json& arguments,
                      const mcp::CallInfo& info) override {
    return service_.Run(caller_, default_namespace_, tool, arguments, info);
  }

 private:
  McpService& service_;
  const Caller& caller_;
  std::string default_namespace_;
};

}  // namespace bulwark::server
