// URL query parameters (see query_params.h).
#include "server/query_params.h"

#include <absl/strings/str_cat.h>

#include <charconv>

#include "core/strings.h"
#include "server/api_status.h"

namespace bulwark::server {
namespace {

absl::Status InvalidParam(std::string_view api_code, std::string_view message) {
  return ApiError(absl::StatusCode::kInvalidArgument, api_code, message);
}

std::string QuotedName(std::string_view name) { return absl::StrCat("\"", ToAbsl(name), "\""); }

}  // namespace

absl::Status CheckQueryParams(const QueryParams& params, std::initializer_list<std::string_view> allowed) {
  for (auto it = params.begin(); it != params.end(); it = params.upper_bound(it->first)) {
    bool known = false;
    for (std::string_view a : allowed) known = known || it->first == a;
    if (!known)
      return InvalidParam("unknown_field", absl::StrCat("unknown query parameter ", QuotedName(it->first)));
    if (params.count(it->first) > 1) {
      return InvalidParam("duplicate_field",
                          absl::StrCat("query parameter ", QuotedName(it->first), " given more than once"));
    }
  }
  return absl::OkStatus();
}

std::optional<std::string> QueryParam(const QueryParams& params, std::string_view name) {
  auto it = params.find(std::string(name));
  if (it == params.end()) return std::nullopt;
  return it->second;
}

absl::StatusOr<int64_t> IntQueryParam(const QueryParams& params, std::string_view name, int64_t fallback,
                                      int64_t min, int64_t max) {
  auto text = QueryParam(params, name);
  if (!text) return fallback;
  int64_t value = 0;
  const char* end = text->data() + text->size();
  auto [ptr, ec] = std::from_chars(text->data(), end, value);
  if (text->empty() || ec != std::errc() || ptr != end) {
    return InvalidParam("wrong_type",
                        absl::StrCat("query parameter ", QuotedName(name), " must be an integer"));
  }
  if (value < min || value > max) {
    return InvalidParam("out_of_range", absl::StrCat("query parameter ", QuotedName(name),
                                                     " must be between ", min, " and ", max));
  }
  return value;
}

}  // namespace bulwark::server
