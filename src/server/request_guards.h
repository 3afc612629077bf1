// Checks on a request's headers made before any route handler runs (issue #18, point 9):
//
// - CheckJsonBody: a request with a body must say it is JSON. Every route that takes a body parses
//   JSON; requiring `Content-Type: application/json` means a browser cannot send one as a CORS
//   "simple request" (text/plain, form encodings) without a preflight this server never approves.
// - CheckLocalOrigin: under --insecure-dev (anonymous requests are admins), a request must name a
//   loopback Host (defeats DNS rebinding: a page on evil.example re-pointed at 127.0.0.1 still
//   sends `Host: evil.example`) and carry no Origin other than a loopback one, and no
//   `Sec-Fetch-Site: cross-site` (a web page in the developer's browser cannot drive the server).
#pragma once

#include <absl/status/status.h>
#include <httplib.h>

#include <string_view>

namespace bulwark::server {

// OK for a request without a body, or whose Content-Type's media type is application/json
// (case-insensitive, parameters such as charset allowed). Otherwise InvalidArgument with API code
// "unsupported_media_type" (answered 415 by HttpServer).
[[nodiscard]] absl::Status CheckJsonBody(const httplib::Request& request);

// True for "localhost", "127.x.y.z" and "[::1]", with or without ":port" (an authority as in Host
// and Origin, RFC 3986: an IPv6 address is bracketed).
bool IsLoopbackAuthority(std::string_view authority);

// The MCP endpoint's Origin rule (DNS rebinding; mcp_routes.cc): true when the request has no
// Origin header, or its Origin is "http://" or "https://" followed by a loopback authority or by
// the request's own Host (case-insensitive). False for "null", other schemes, and an Origin with a
// path.
bool McpOriginAllowed(const httplib::Request& request);

// OK if the Host header is a loopback authority, any Origin header is "http://" or "https://"
// followed by a loopback authority, and Sec-Fetch-Site is not "cross-site". PermissionDenied with
// API code "forbidden_origin" otherwise. A missing Host (HTTP/1.0) is allowed.
[[nodiscard]] absl::Status CheckLocalOrigin(const httplib::Request& request);

}  // namespace bulwark::server
