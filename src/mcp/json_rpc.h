// JSON-RPC 2.0 framing for MCP (https://www.jsonrpc.org/specification as MCP narrows it,
// modelcontextprotocol.io/specification/2026-07-28/basic/index "Messages"): decoding one message
// into a request, a notification or a (client-sent) response, and building result and error
// responses.
//
// MCP's rules on top of JSON-RPC: a request id is a string or an integer, never null; a message is
// one JSON object (batches were removed in revision 2025-06-18 and are refused here with
// -32600); `params`, when present, is an object.
#pragma once

#include <absl/status/statusor.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace bulwark::mcp {

// JSON-RPC and MCP error codes (basic/index "Error Codes").
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;
inline constexpr int kHeaderMismatch = -32020;                   // HTTP headers disagree with the body
inline constexpr int kMissingRequiredClientCapability = -32021;  // unused: no tool needs one
inline constexpr int kUnsupportedProtocolVersion = -32022;

// Bounds on what a message may hold before it is looked at further.
inline constexpr size_t kMaxMessageBytes = 1 << 20;
inline constexpr int kMaxDepth = 32;

struct Message {
  enum class Kind { kRequest, kNotification, kResponse };
  Kind kind = Kind::kRequest;
  nlohmann::json id;  // string or integer for a request or response; null for a notification
  std::string method;
  nlohmann::json params = nlohmann::json::object();  // always an object (empty when absent)
};

// An error to answer with: the JSON-RPC code, its message and optional data, and the id of the
// request it answers (null when the id could not be read).
struct RpcError {
  int code = kInternalError;
  std::string message;
  nlohmann::json data;  // omitted when null
  nlohmann::json id;
};

// Decodes one message. Returns the message, or an RpcError for: text that is not JSON, too large
// or too deeply nested (kParseError); a batch array, a non-object, a wrong "jsonrpc" member, a
// null/fractional/non-scalar id, a non-string method or a non-object params (kInvalidRequest).
// The error carries the request's id whenever it could be read.
[[nodiscard]] std::variant<Message, RpcError> DecodeMessage(std::string_view text);

// {"jsonrpc": "2.0", "id": id, "result": result}.
nlohmann::json ResultResponse(const nlohmann::json& id, nlohmann::json result);
// {"jsonrpc": "2.0", "id": error.id (omitted when null), "error": {code, message, data?}}.
nlohmann::json ErrorResponse(const RpcError& error);

// Serializes a response for the wire: one line of UTF-8 JSON (invalid UTF-8 in strings replaced),
// no embedded newline, so it is also a valid stdio frame.
std::string Serialize(const nlohmann::json& message);

}  // namespace bulwark::mcp
