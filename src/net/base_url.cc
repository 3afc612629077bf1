// Base URL parsing (see base_url.h).
#include "net/base_url.h"

#include <absl/strings/ascii.h>
#include <absl/strings/str_cat.h>

#include <charconv>

namespace bulwark {
namespace {

bool ParseDecimal(std::string_view s, int* out) {
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return !s.empty() && ec == std::errc() && ptr == s.data() + s.size();
}

}  // namespace

absl::StatusOr<BaseUrl> ParseBaseUrl(std::string_view url) {
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad \"url\" '", std::string(url), "': ", std::string(why)));
  };
  std::string_view rest;
  if (url.starts_with("http://")) {
    rest = url.substr(7);
  } else if (url.starts_with("https://")) {
    rest = url.substr(8);
  } else {
    return bad("must start with http:// or https://");
  }
  const size_t slash = rest.find('/');
  const std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? "" : rest.substr(slash);
  if (authority.empty()) return bad("no host");
  std::string_view host = authority;
  if (host.front() == '[') {  // IPv6 literal
    const size_t close = host.find(']');
    if (close == std::string_view::npos) return bad("unterminated IPv6 address");
    host = authority.substr(0, close + 1);
  } else {
    host = authority.substr(0, authority.find(':'));
  }
  if (host.empty()) return bad("no host");
  for (char c : host) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '[' && c != ']' &&
        c != ':') {
      return bad("invalid character in host");
    }
  }
  if (host.size() < authority.size()) {
    const std::string_view port = authority.substr(host.size());
    int port_number = 0;
    if (port.size() < 2 || port[0] != ':' || !ParseDecimal(port.substr(1), &port_number) || port_number < 1 ||
        port_number > 65535) {
      return bad("invalid port");
    }
  }
  for (char c : path) {
    if (c <= ' ' || c == '?' || c == '#' || static_cast<unsigned char>(c) >= 0x7f) {
      return bad("path may not contain spaces, controls, '?' or '#'");
    }
  }
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  BaseUrl out;
  out.scheme_host_port = std::string(url.substr(0, url.size() - rest.size() + authority.size()));
  out.prefix = std::string(path);
  return out;
}

}  // namespace bulwark
