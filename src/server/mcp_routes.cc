// The MCP endpoint (issue #15 point 2; modelcontextprotocol.io/specification/2026-07-28/basic/
// transports/streamable-http):
//
//   POST /mcp[?namespace=NS]   any role   one JSON-RPC message; tools by role (mcp/tool_table.h)
//
// Same port, same API keys, same rate limits and audit as the rest of the API (a request reaches
// this handler only authenticated). Both protocol eras on one endpoint: modern requests carry
// `_meta` and the MCP headers (checked against the body, -32020), legacy clients open with
// `initialize`. Answers are always a single application/json object (no SSE): 200 with the
// response, 202 with no body for a notification, 400/404 for the protocol errors of
// dispatcher.h. No session is minted; GET and DELETE get 405 from the router. No OAuth metadata
// is advertised: a 401 carries only `WWW-Authenticate: Bearer realm="bulwark"`.
//
// Origin (DNS rebinding): a request with an Origin header is served only when that origin is a
// loopback one or names the very host the request was sent to; otherwise 403 with a JSON-RPC
// error without id. `?namespace=` sets the default namespace of tool calls that name none.
#include <memory>

#include "core/status_macros.h"
#include "core/strings.h"
#include "mcp/dispatcher.h"
#include "server/api_status.h"
#include "server/mcp_service.h"
#include "server/request_guards.h"
#include "server/service.h"

namespace bulwark::server {
namespace {

std::optional<std::string> HeaderOf(const httplib::Request& request, const char* name) {
  if (!request.has_header(name)) return std::nullopt;
  return request.get_header_value(name);
}

Reply JsonRpcReply(int status, const std::optional<nlohmann::json>& response) {
  Reply reply;
  reply.status = status;
  reply.content_type = "application/json";
  reply.text = response ? mcp::Serialize(*response) : std::string();
  return reply;
}

absl::StatusOr<Reply> Serve(McpService& service, const mcp::Dispatcher& dispatcher, const Call& call) {
  if (!McpOriginAllowed(call.http)) {
    return JsonRpcReply(403, mcp::ErrorResponse(mcp::RpcError{
                                 mcp::kInvalidRequest, "Forbidden: this Origin may not use the MCP endpoint",
                                 nullptr, nullptr}));
  }
  BULWARK_RETURN_IF_ERROR(CheckQueryParams(call.query, {"namespace"}));
  std::string default_namespace;
  if (QueryParam(call.query, "namespace")) {
    BULWARK_ASSIGN_OR_RETURN(auto ns, ResolveNamespace(std::nullopt, call.query));
    default_namespace = ns;
  }
  mcp::HttpHeaders headers;
  headers.protocol_version = HeaderOf(call.http, "MCP-Protocol-Version");
  headers.method = HeaderOf(call.http, "Mcp-Method");
  headers.name = HeaderOf(call.http, "Mcp-Name");
  headers.session_id = call.http.get_header_value("Mcp-Session-Id");
  headers.traceparent = call.http.get_header_value("traceparent");
  CallerToolRunner runner(service, *call.caller, std::move(default_namespace));
  mcp::Outcome outcome = dispatcher.Handle(call.http.body, &headers, runner);
  return JsonRpcReply(outcome.http_status, outcome.response);
}

}  // namespace

void AddMcpRoutes(ServiceContext& ctx, std::vector<RouteSpec>* routes) {
  auto service = std::make_shared<McpService>(ctx);
  auto dispatcher = std::make_shared<mcp::Dispatcher>(mcp::BulwarkIdentity());
  routes->push_back({"POST", "/mcp", Access::kAuthenticated,
                     [service, dispatcher](const Call& call) { return Serve(*service, *dispatcher, call); }});
}

}  // namespace bulwark::server
