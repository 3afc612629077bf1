// Header checks made before any handler (see request_guards.h).
#include "server/request_guards.h"

#include <algorithm>
#include <cctype>
#include <optional>

#include "server/api_status.h"

namespace bulwark::server {
namespace {

// Debian's absl::string_view is not std::string_view, so these small helpers stay local.
bool TakePrefix(std::string_view* s, std::string_view prefix) {
  if (!s->starts_with(prefix)) return false;
  s->remove_prefix(prefix.size());
  return true;
}

bool IsAsciiDigit(char c) { return c >= '0' && c <= '9'; }

bool SameIgnoringCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view TrimBlanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// "127.0.0.1:8420" -> "127.0.0.1"; "[::1]:80" -> "::1"; an empty or malformed port -> nullopt.
std::optional<std::string_view> HostPart(std::string_view authority) {
  if (TakePrefix(&authority, "[")) {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    std::string_view rest = authority.substr(close + 1);
    if (!rest.empty() &&
        (!TakePrefix(&rest, ":") || rest.empty() || !std::all_of(rest.begin(), rest.end(), IsAsciiDigit))) {
      return std::nullopt;
    }
    return authority.substr(0, close);
  }
  const size_t colon = authority.find(':');
  if (colon == std::string_view::npos) return authority;
  std::string_view port = authority.substr(colon + 1);
  if (port.empty() || !std::all_of(port.begin(), port.end(), IsAsciiDigit)) return std::nullopt;
  return authority.substr(0, colon);
}

bool IsLoopbackIpv4(std::string_view host) {
  if (!TakePrefix(&host, "127.")) return false;
  int parts = 1;
  for (std::string_view rest = host;;) {
    const size_t dot = rest.find('.');
    std::string_view part = rest.substr(0, dot);
    if (part.empty() || part.size() > 3 || !std::all_of(part.begin(), part.end(), IsAsciiDigit)) return false;
    int value = 0;
    for (char c : part) value = value * 10 + (c - '0');
    if (value > 255) return false;
    ++parts;
    if (dot == std::string_view::npos) break;
    rest.remove_prefix(dot + 1);
  }
  return parts == 4;
}

absl::Status ForbiddenOrigin(std::string_view message) {
  return ApiError(absl::StatusCode::kPermissionDenied, "forbidden_origin", message);
}

}  // namespace

absl::Status CheckJsonBody(const httplib::Request& request) {
  if (request.body.empty()) return absl::OkStatus();
  const std::string header = request.get_header_value("Content-Type");  // returned by value
  std::string_view type = header;
  type = type.substr(0, type.find(';'));
  if (SameIgnoringCase(TrimBlanks(type), "application/json")) return absl::OkStatus();
  return ApiError(absl::StatusCode::kInvalidArgument, "unsupported_media_type",
                  "a request body must be JSON sent with \"Content-Type: application/json\"");
}

bool IsLoopbackAuthority(std::string_view authority) {
  std::optional<std::string_view> host = HostPart(authority);
  if (!host) return false;
  return SameIgnoringCase(*host, "localhost") || *host == "::1" || IsLoopbackIpv4(*host);
}

bool McpOriginAllowed(const httplib::Request& request) {
  if (!request.has_header("Origin")) return true;
  const std::string origin = request.get_header_value("Origin");
  std::string_view authority = origin;
  if (!(TakePrefix(&authority, "http://") || TakePrefix(&authority, "https://"))) {
    return false;  // "null", other schemes
  }
  if (authority.empty() || authority.find('/') != std::string_view::npos) return false;
  if (IsLoopbackAuthority(authority)) return true;
  const std::string host = request.get_header_value("Host");
  return !host.empty() && SameIgnoringCase(host, authority);
}

absl::Status CheckLocalOrigin(const httplib::Request& request) {
  if (request.has_header("Host") && !IsLoopbackAuthority(request.get_header_value("Host"))) {
    return ForbiddenOrigin("--insecure-dev answers only requests addressed to a loopback Host");
  }
  if (request.has_header("Origin")) {
    const std::string header = request.get_header_value("Origin");
    std::string_view origin = header;
    if (!(TakePrefix(&origin, "http://") || TakePrefix(&origin, "https://")) ||
        !IsLoopbackAuthority(origin)) {
      return ForbiddenOrigin("--insecure-dev refuses requests from a web page of another origin");
    }
  }
  if (SameIgnoringCase(request.get_header_value("Sec-Fetch-Site"), "cross-site")) {
    return ForbiddenOrigin("--insecure-dev refuses cross-site requests");
  }
  return absl::OkStatus();
}

}  // namespace bulwark::server
