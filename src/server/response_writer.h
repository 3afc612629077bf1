// WriteResponse: an httplib::Response as HTTP/1.1 bytes on the wire (RFC 9112 4, 6). The server's
// handlers fill httplib::Response objects; the connection loop sends these bytes.
//
// The framing of an answer is the writer's alone: any Content-Length, Transfer-Encoding or
// Connection header a handler set is dropped and replaced by the true length and connection
// option, and a header whose name is not a token or whose value holds CR, LF or another control
// byte is dropped (no response splitting through a header value).
#pragma once

#include <httplib.h>

#include <string>
#include <string_view>

namespace bulwark::server {

struct ResponseFraming {
  bool head = false;               // answer to HEAD: headers (with the body's length) but no body
  bool close = false;              // "Connection: close"; the connection ends after this answer
  bool http10_keep_alive = false;  // "Connection: keep-alive" for an HTTP/1.0 client that asked for it
};

// The status line, headers and body of `response` (status 100..599; another becomes 500).
std::string WriteResponse(const httplib::Response& response, const ResponseFraming& framing);

// The reason phrase of an HTTP status ("Not Found"); "Unknown" for one not listed.
std::string_view ReasonPhrase(int status);

}  // namespace bulwark::server
