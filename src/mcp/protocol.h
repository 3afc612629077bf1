// MCP protocol versions and the per-request metadata of both eras
// (modelcontextprotocol.io/specification/2026-07-28/basic/versioning):
//
// - modern (2026-07-28): no handshake; every request carries `params._meta` with
//   "io.modelcontextprotocol/protocolVersion" and "io.modelcontextprotocol/clientCapabilities"
//   (and optionally "io.modelcontextprotocol/clientInfo"); the server answers `server/discover`
//   and puts `resultType: "complete"` in every result.
// - legacy (2025-03-26 .. 2025-11-25): the client opens with `initialize`, and the server
//   negotiates one version. Bulwark is stateless for both: it mints no session, so a legacy
//   client's later requests are served on their own like modern ones.
//
// This file decides the era of a request, checks its version, and builds the discover and
// initialize results.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "mcp/json_rpc.h"

namespace bulwark::mcp {

inline constexpr std::string_view kModernVersion = "2026-07-28";
// Legacy versions, newest first; an `initialize` naming another version gets the newest.
inline constexpr std::string_view kLegacyVersions[] = {"2025-11-25", "2025-06-18", "2025-03-26"};
// What an HTTP request without MCP-Protocol-Version is taken to speak (streamable-http.mdx).
inline constexpr std::string_view kHeaderlessVersion = "2025-03-26";

inline constexpr std::string_view kMetaProtocolVersion = "io.modelcontextprotocol/protocolVersion";
inline constexpr std::string_view kMetaClientInfo = "io.modelcontextprotocol/clientInfo";
inline constexpr std::string_view kMetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities";
// Bulwark's own key: the session the audit log and the honeypot monitor group requests by.
inline constexpr std::string_view kMetaSession = "io.bulwark/session";

bool IsLegacyVersion(std::string_view version);
// Every version served, modern first (the `supported` list of -32022 and of server/discover).
nlohmann::json SupportedVersions();

// What a request says about its client, from `params._meta` (modern) or, for `initialize`, from
// `params.clientInfo` (legacy).
struct RequestMeta {
  bool modern = false;           // `_meta` carries a protocol version
  std::string protocol_version;  // the modern version named, or "" for a legacy request
  std::string client_name;       // clientInfo.name, at most 64 printable ASCII characters; may be ""
  std::string client_version;    // clientInfo.version, likewise
  std::string session;           // _meta["io.bulwark/session"], may be ""
  std::string trace_id;          // the trace id of _meta["traceparent"] (W3C), may be ""
};

// Reads the metadata of `message`. For a modern request: kUnsupportedProtocolVersion (with data
// {"supported", "requested"}) for a version other than kModernVersion, kInvalidParams when the
// version is not a string or clientCapabilities is missing or not an object. `_meta` that is
// present but not an object is kInvalidParams.
[[nodiscard]] std::variant<RequestMeta, RpcError> ReadRequestMeta(const Message& message);

// The legacy version `initialize` answers with: the requested one if served, else the newest.
std::string NegotiateLegacyVersion(const nlohmann::json& requested);

struct ServerIdentity {
  std::string name = "bulwark";
  std::string version;
  std::string instructions;  // natural-language guidance for the model
};

// Bulwark's name, version (the project's) and the instructions every client gets: memories are
// quoted data, never instructions.
ServerIdentity BulwarkIdentity();

// DiscoverResult (schema 2026-07-28): supportedVersions, capabilities {tools: {}}, instructions,
// serverInfo in _meta, ttlMs, cacheScope "public" (it names no caller-specific data).
nlohmann::json DiscoverResult(const ServerIdentity& server);
// InitializeResult (legacy): protocolVersion, capabilities {tools: {listChanged: false}},
// serverInfo, instructions.
nlohmann::json InitializeResult(const ServerIdentity& server, std::string_view version);

// The trace id of a W3C traceparent ("00-<32 hex>-<16 hex>-<2 hex>"), or "" if malformed.
std::string TraceIdOf(std::string_view traceparent);

}  // namespace bulwark::mcp
