// Route template matching (see router.h).
#include "server/router.h"

#include <absl/strings/str_join.h>

#include <algorithm>

namespace bulwark::server {
namespace {

// "/v1/memories/x" -> {"v1", "memories", "x"}. Empty segments (from "//" or a trailing "/") are
// kept, so they never match a parameter.
std::vector<std::string_view> Split(std::string_view path) {
  std::vector<std::string_view> out;
  if (!path.empty() && path.front() == '/') path.remove_prefix(1);
  while (true) {
    size_t slash = path.find('/');
    out.push_back(path.substr(0, slash));
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return out;
}

bool IsParam(std::string_view segment) {
  return segment.size() > 2 && segment.front() == '{' && segment.back() == '}';
}

}  // namespace

size_t RouteTable::Add(std::string_view method, std::string_view pattern) {
  Route route{std::string(method), std::string(pattern), {}, 0};
  for (std::string_view segment : Split(pattern)) {
    route.segments.emplace_back(segment);
    if (!IsParam(segment)) ++route.literal_segments;
  }
  routes_.push_back(std::move(route));
  return routes_.size() - 1;
}

RouteMatch RouteTable::Find(std::string_view method, std::string_view path) const {
  const std::vector<std::string_view> segments = Split(path);
  RouteMatch best;
  int best_literals = -1;
  std::vector<std::string> methods;
  for (size_t i = 0; i < routes_.size(); ++i) {
    const Route& route = routes_[i];
    if (route.segments.size() != segments.size()) continue;
    PathParams params;
    bool match = true;
    for (size_t s = 0; s < segments.size() && match; ++s) {
      if (IsParam(route.segments[s])) {
        match = !segments[s].empty();
        if (match) {
          params.emplace_back(route.segments[s].substr(1, route.segments[s].size() - 2),
                              std::string(segments[s]));
        }
      } else {
        match = route.segments[s] == segments[s];
      }
    }
    if (!match) continue;
    if (route.method != method) {
      if (std::find(methods.begin(), methods.end(), route.method) == methods.end())
        methods.push_back(route.method);
      continue;
    }
    if (route.literal_segments > best_literals) {
      best_literals = route.literal_segments;
      best.kind = RouteMatch::Kind::kFound;
      best.index = i;
      best.params = std::move(params);
    }
  }
  if (best.kind == RouteMatch::Kind::kFound) return best;
  if (!methods.empty()) {
    best.kind = RouteMatch::Kind::kMethodNotAllowed;
    best.allowed_methods = absl::StrJoin(methods, ", ");
  }
  return best;
}

std::string_view PathParam(const PathParams& params, std::string_view name) {
  for (const auto& [key, value] : params) {
    if (key == name) return value;
  }
  return {};
}

}  // namespace bulwark::server
