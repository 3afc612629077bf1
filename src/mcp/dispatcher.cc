// The transport-independent MCP server (see dispatcher.h).
#include "mcp/dispatcher.h"

#include <absl/strings/escaping.h>
#include <absl/strings/str_cat.h>

#include <variant>

#include "core/strings.h"

namespace bulwark::mcp {
namespace {

using json = nlohmann::json;

Outcome Reply(json response, int status = 200) { return Outcome{std::move(response), status}; }

Outcome Fail(const RpcError& error, int status) { return Reply(ErrorResponse(error), status); }

RpcError Mismatch(const Message& message, std::string text) {
  return RpcError{kHeaderMismatch, absl::StrCat("Header mismatch: ", text), nullptr, message.id};
}

// The -32020 checks of streamable-http.mdx "Server Validation". A modern request must carry
// MCP-Protocol-Version, Mcp-Method and (for tools/call) Mcp-Name, each equal to the body's value;
// a legacy request is checked only for the headers it sends.
std::optional<RpcError> CheckHeaders(const Message& message, const RequestMeta& meta, const HttpHeaders& h) {
  if (meta.modern) {
    if (!h.protocol_version) return Mismatch(message, "MCP-Protocol-Version header is required");
    if (*h.protocol_version != meta.protocol_version) {
      return Mismatch(message, "MCP-Protocol-Version header does not match _meta");
    }
    if (!h.method) return Mismatch(message, "Mcp-Method header is required");
  } else if (h.protocol_version && !IsLegacyVersion(*h.protocol_version) && message.method != "initialize") {
    if (*h.protocol_version == kModernVersion) {
      return Mismatch(message, "MCP-Protocol-Version names 2026-07-28 but _meta carries no protocol version");
    }
    return RpcError{kUnsupportedProtocolVersion, "Unsupported protocol version",
                    json{{"supported", SupportedVersions()}, {"requested", *h.protocol_version}}, message.id};
  }
  if (h.method && *h.method != message.method) {
    return Mismatch(message, "Mcp-Method header does not match the body's method");
  }
  if (message.method == "tools/call") {
    const json name = message.params.value("name", json());
    if (!h.name) {
      if (meta.modern) return Mismatch(message, "Mcp-Name header is required for tools/call");
    } else {
      std::optional<std::string> decoded = DecodeHeaderValue(*h.name);
      if (!decoded) return Mismatch(message, "Mcp-Name header is malformed");
      if (!name.is_string() || *decoded != name.get<std::string>()) {
        return Mismatch(message, "Mcp-Name header does not match params.name");
      }
    }
  }
  return std::nullopt;
}

// The audit session of a call (see CallInfo::session).
std::string SessionOf(const RequestMeta& meta, const HttpHeaders* http) {
  if (!meta.session.empty()) return meta.session;
  if (http != nullptr && !http->session_id.empty()) return http->session_id.substr(0, 128);
  if (!meta.trace_id.empty()) return meta.trace_id;
  if (http != nullptr) {
    if (std::string trace = TraceIdOf(http->traceparent); !trace.empty()) return trace;
  }
  return "";
}

}  // namespace

std::optional<std::string> DecodeHeaderValue(std::string_view value) {
  for (char c : value) {
    if ((c < 0x20 || c > 0x7e) && c != '\t') return std::nullopt;
  }
  constexpr std::string_view kPrefix = "=?base64?", kSuffix = "?=";
  if (value.size() >= kPrefix.size() + kSuffix.size() && value.starts_with(kPrefix) &&
      value.ends_with(kSuffix)) {
    std::string decoded;
    const std::string_view payload =
        value.substr(kPrefix.size(), value.size() - kPrefix.size() - kSuffix.size());
    if (!absl::Base64Unescape(ToAbsl(payload), &decoded)) {
      return std::nullopt;
    }
    return decoded;
  }
  return std::string(value);
}

Outcome Dispatcher::Handle(std::string_view text, const HttpHeaders* http, ToolRunner& runner) const {
  std::variant<Message, RpcError> decoded = DecodeMessage(text);
  if (auto* error = std::get_if<RpcError>(&decoded)) return Fail(*error, 400);
  const Message& message = std::get<Message>(decoded);
  if (message.kind == Message::Kind::kResponse) {
    // The server sends no requests, so no response can answer one.
    return Fail(RpcError{kInvalidRequest, "this server sends no requests; a response is not expected",
                         nullptr, message.id},
                400);
  }
  std::variant<RequestMeta, RpcError> meta = ReadRequestMeta(message);
  if (message.kind == Message::Kind::kNotification) {
    // notifications/initialized, notifications/cancelled, ...: nothing to do (no state, no streams).
    return Outcome{std::nullopt, 202};
  }
  if (auto* error = std::get_if<RpcError>(&meta)) return Fail(*error, 400);
  const RequestMeta& request_meta = std::get<RequestMeta>(meta);
  if (http != nullptr) {
    if (std::optional<RpcError> error = CheckHeaders(message, request_meta, *http)) return Fail(*error, 400);
  }
  return HandleRequest(message, request_meta, http, runner);
}

Outcome Dispatcher::HandleRequest(const Message& message, const RequestMeta& meta, const HttpHeaders* http,
                                  ToolRunner& runner) const {
  // Every modern result says it is complete (basic/index "ResultType").
  auto result = [&](json body) {
    if (meta.modern) body["resultType"] = "complete";
    return Reply(ResultResponse(message.id, std::move(body)));
  };
  const std::string& method = message.method;
  if (method == "server/discover") return Reply(ResultResponse(message.id, DiscoverResult(identity_)));
  if (method == "initialize") {
    return Reply(ResultResponse(
        message.id, InitializeResult(
                        identity_, NegotiateLegacyVersion(message.params.value("protocolVersion", json())))));
  }
  if (method == "ping") return result(json::object());
  if (method == "tools/list") {
    json body = {{"tools", ToolsFor(runner.role())}};
    if (meta.modern) {
      body["ttlMs"] = 60000;
      body["cacheScope"] = "private";  // the list depends on the caller's role
    }
    return result(std::move(body));
  }
  if (method == "tools/call") {
    RpcError error;
    json body = CallTool(message, meta, http, runner, &error);
    if (body.is_null()) return Fail(error, 200);
    return result(std::move(body));
  }
  RpcError unknown{kMethodNotFound, absl::StrCat("Method not found: ", method), nullptr, message.id};
  return Fail(unknown, meta.modern ? 404 : 200);
}

json Dispatcher::CallTool(const Message& message, const RequestMeta& meta, const HttpHeaders* http,
                          ToolRunner& runner, RpcError* error) const {
  const json& params = message.params;
  const json name = params.value("name", json());
  const json arguments = params.value("arguments", json::object());
  if (!name.is_string()) {
    *error = RpcError{kInvalidParams, "tools/call needs a string \"name\"", nullptr, message.id};
    return nullptr;
  }
  const ToolSpec* tool = FindTool(name.get<std::string>());
  // A tool the caller's role is not offered answers exactly like one that does not exist.
  if (tool == nullptr || !OfferedTo(*tool, runner.role())) {
    *error = RpcError{kInvalidParams, absl::StrCat("Unknown tool: ", Quote(name.get<std::string>())), nullptr,
                      message.id};
    return nullptr;
  }
  ToolOutput output;
  if (absl::Status valid = ValidateArguments(tool->definition["inputSchema"], arguments); !valid.ok()) {
    // Input errors go back to the model as a failed call it can correct (server/tools.mdx).
    output.is_error = true;
    output.text = std::string(valid.message());
    output.structured = {{"error", {{"code", "invalid_argument"}, {"message", output.text}}}};
  } else {
    CallInfo info{std::string(tool->name), meta.modern ? meta.protocol_version : "legacy", meta.client_name,
                  meta.client_version, SessionOf(meta, http)};
    output = runner.Run(*tool, arguments, info);
  }
  json body = {{"content", json::array({{{"type", "text"}, {"text", output.text}}})},
               {"structuredContent", std::move(output.structured)}};
  if (output.is_error) body["isError"] = true;
  return body;
}

}  // namespace bulwark::mcp
