// traceparent validation (see trace_context.h).
#include "server/trace_context.h"

#include <algorithm>

namespace bulwark::server {
namespace {

bool IsLowerHex(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(),
                                   [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

bool AllZeros(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c == '0'; });
}

}  // namespace

std::optional<std::string> ValidTraceParent(std::string_view header) {
  // version(2) - trace id(32) - parent id(16) - flags(2), then for versions after 00 maybe more.
  constexpr size_t kLength = 55;
  if (header.size() < kLength || (header.size() > kLength && header[kLength] != '-')) return std::nullopt;
  const std::string_view version = header.substr(0, 2), trace = header.substr(3, 32),
                         parent = header.substr(36, 16), flags = header.substr(53, 2);
  if (header[2] != '-' || header[35] != '-' || header[52] != '-') return std::nullopt;
  if (!IsLowerHex(version) || version == "ff" || !IsLowerHex(trace) || !IsLowerHex(parent) ||
      !IsLowerHex(flags)) {
    return std::nullopt;
  }
  if (version == "00" && header.size() != kLength) return std::nullopt;
  if (AllZeros(trace) || AllZeros(parent)) return std::nullopt;
  return std::string(header.substr(0, kLength));
}

std::optional<std::string> TraceParentOf(const httplib::Request& request) {
  if (request.get_header_value_count("traceparent") != 1) return std::nullopt;
  return ValidTraceParent(request.get_header_value("traceparent"));
}

}  // namespace bulwark::server
