// The base URL of an HTTP service Bulwark calls (an embeddings or chat endpoint):
// "http(s)://host[:port][/prefix]", split into what httplib::Client takes and the path prefix.
#pragma once

#include <absl/status/statusor.h>

#include <string>
#include <string_view>

namespace bulwark {

struct BaseUrl {
  std::string scheme_host_port;  // "http://127.0.0.1:8080"
  std::string prefix;            // "" or "/openai" (no trailing slash); request paths go after it
};

// Parses `url`. InvalidArgument, with a message naming the problem ("must start with http:// or
// https://", "no host", "invalid port", ...), for anything else.
[[nodiscard]] absl::StatusOr<BaseUrl> ParseBaseUrl(std::string_view url);

}  // namespace bulwark
