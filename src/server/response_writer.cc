// Serializes answers (see response_writer.h).
#include "server/response_writer.h"

#include <string>

#include "server/request_framing.h"

namespace bulwark::server {
namespace {

bool IsHeaderName(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7f || c == ':' || c == '(' || c == ')' || c == ',' || c == '/' || c == ';' ||
        c == '<' || c == '=' || c == '>' || c == '?' || c == '@' || c == '[' || c == '\\' || c == ']' ||
        c == '{' || c == '}' || c == '"') {
      return false;
    }
  }
  return true;
}

bool IsHeaderValue(std::string_view value) {
  for (char c : value) {
    const unsigned char u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\t') || u == 0x7f) return false;
  }
  return true;
}

bool IsFramingHeader(std::string_view name) {
  return EqualsIgnoreCase(name, "content-length") || EqualsIgnoreCase(name, "transfer-encoding") ||
         EqualsIgnoreCase(name, "connection");
}

}  // namespace

std::string_view ReasonPhrase(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 202:
      return "Accepted";
    case 204:
      return "No Content";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 409:
      return "Conflict";
    case 413:
      return "Content Too Large";
    case 414:
      return "URI Too Long";
    case 415:
      return "Unsupported Media Type";
    case 417:
      return "Expectation Failed";
    case 422:
      return "Unprocessable Content";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Unknown";
  }
}

std::string WriteResponse(const httplib::Response& response, const ResponseFraming& framing) {
  const int status = response.status >= 100 && response.status <= 599 ? response.status : 500;
  // 1xx, 204 and 304 answers have no body (RFC 9110 6.4.1).
  const bool no_body = status < 200 || status == 204 || status == 304;
  std::string out;
  out.reserve(256 + (framing.head || no_body ? 0 : response.body.size()));
  out.append("HTTP/1.1 ")
      .append(std::to_string(status))
      .append(" ")
      .append(ReasonPhrase(status))
      .append("\r\n");
  for (const auto& [name, value] : response.headers) {
    if (IsFramingHeader(name) || !IsHeaderName(name) || !IsHeaderValue(value)) continue;
    out.append(name).append(": ").append(value).append("\r\n");
  }
  if (!no_body) out.append("Content-Length: ").append(std::to_string(response.body.size())).append("\r\n");
  if (framing.close) {
    out.append("Connection: close\r\n");
  } else if (framing.http10_keep_alive) {
    out.append("Connection: keep-alive\r\n");
  }
  out.append("\r\n");
  if (!framing.head && !no_body) out.append(response.body);
  return out;
}

}  // namespace bulwark::server
