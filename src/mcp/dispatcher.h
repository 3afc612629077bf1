// The MCP server without a transport: one JSON-RPC message in, at most one response out, for both
// protocol eras (protocol.h) on the same entry point. Streamable HTTP (src/server/mcp_routes.cc)
// passes the request's MCP headers, which are checked against the body; stdio
// (src/cli/mcp_commands.cc) passes none. Nothing is remembered between messages: the server is
// stateless in both eras and mints no session.
//
// Methods: server/discover, initialize (legacy), ping, tools/list, tools/call, and notifications
// (accepted, no answer). What a tool does is the ToolRunner's business; the dispatcher checks the
// tool is offered to the runner's role and validates its arguments against the tool's schema first.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "auth/principal_registry.h"
#include "mcp/json_rpc.h"
#include "mcp/protocol.h"
#include "mcp/rendering.h"
#include "mcp/tool_table.h"

namespace bulwark::mcp {

// Who made a tool call, for the audit log and the honeypot monitor.
struct CallInfo {
  std::string tool;
  std::string protocol_version;  // the modern version, or "legacy"
  std::string client_name;       // self-reported (clientInfo), may be ""
  std::string client_version;
  // The session the request names, in this order: _meta["io.bulwark/session"], the HTTP
  // Mcp-Session-Id header, the trace id of _meta.traceparent or the HTTP traceparent header; ""
  // when none (the runner then uses its own, e.g. X-Bulwark-Session, or "mcp:<client name>").
  std::string session;
};

// What a tool call produced: the structured result, the text a model reads, and whether the call
// failed (a failure is reported in the result so the model can see it, not as a protocol error).
struct ToolOutput {
  nlohmann::json structured = nlohmann::json::object();
  std::string text;
  bool is_error = false;
};

class ToolRunner {
 public:
  virtual ~ToolRunner() = default;
  // The caller's role: decides which tools are listed and callable.
  virtual Role role() const = 0;
  // Runs `tool` with arguments that passed ValidateArguments.
  virtual ToolOutput Run(const ToolSpec& tool, const nlohmann::json& arguments, const CallInfo& info) = 0;
};

// The MCP request headers of a Streamable HTTP POST (streamable-http.mdx "Request Metadata").
struct HttpHeaders {
  std::optional<std::string> protocol_version;  // MCP-Protocol-Version
  std::optional<std::string> method;            // Mcp-Method
  std::optional<std::string> name;              // Mcp-Name (may be "=?base64?...?=")
  std::string session_id;                       // Mcp-Session-Id (legacy clients), may be ""
  std::string traceparent;                      // traceparent, may be ""
};

struct Outcome {
  std::optional<nlohmann::json> response;  // none for a notification
  // The HTTP status: 200; 202 for an accepted notification; 400 for a malformed message, a header
  // mismatch (-32020) or an unsupported version (-32022); 404 for an unknown method of a modern
  // request (-32601). stdio ignores it.
  int http_status = 200;
};

class Dispatcher {
 public:
  explicit Dispatcher(ServerIdentity identity) : identity_(std::move(identity)) {}

  // Handles one message (the body of a POST, or one stdio line). `http` is null on stdio.
  Outcome Handle(std::string_view text, const HttpHeaders* http, ToolRunner& runner) const;

 private:
  Outcome HandleRequest(const Message& message, const RequestMeta& meta, const HttpHeaders* http,
                        ToolRunner& runner) const;
  nlohmann::json CallTool(const Message& message, const RequestMeta& meta, const HttpHeaders* http,
                          ToolRunner& runner, RpcError* error) const;

  ServerIdentity identity_;
};

// The value of an Mcp-Name or Mcp-Param header: decoded from "=?base64?<b64>?=", else as is;
// nullopt for a malformed encoding or characters outside visible ASCII, space and tab.
std::optional<std::string> DecodeHeaderValue(std::string_view value);

}  // namespace bulwark::mcp
