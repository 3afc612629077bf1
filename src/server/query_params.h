// URL query parameters of HTTP API requests: only the documented parameters, each at most once,
// and integers in their documented range. Errors are InvalidArgument with the API codes of
// doc/api.md: unknown_field, duplicate_field, wrong_type, out_of_range.
#pragma once

#include <absl/status/status.h>
#include <absl/status/statusor.h>

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace bulwark::server {

// URL query parameters as httplib delivers them (name -> value, a name may repeat).
using QueryParams = std::multimap<std::string, std::string>;

// Checks that `params` holds only names in `allowed`, each at most once.
[[nodiscard]] absl::Status CheckQueryParams(const QueryParams& params,
                                            std::initializer_list<std::string_view> allowed);
// The value of `name` if present (call CheckQueryParams first).
std::optional<std::string> QueryParam(const QueryParams& params, std::string_view name);
// A parameter that must be a decimal integer in [min, max]; `fallback` when absent.
[[nodiscard]] absl::StatusOr<int64_t> IntQueryParam(const QueryParams& params, std::string_view name,
                                                    int64_t fallback, int64_t min, int64_t max);

}  // namespace bulwark::server
