// RouteTable: finds the route for an HTTP method and path among templates such as
// "/v1/memories/{id}/history". A `{name}` segment matches any one non-empty path segment and is
// returned as a parameter; other segments match literally. The table knows nothing about handlers:
// callers keep their own data per route index.
//
// When several templates match a path, the one with the most literal segments wins among those
// registered for the request's method; when none of them is, the answer is "method not allowed"
// with the methods that would have matched.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bulwark::server {

using PathParams = std::vector<std::pair<std::string, std::string>>;

struct RouteMatch {
  enum class Kind { kFound, kNoRoute, kMethodNotAllowed };
  Kind kind = Kind::kNoRoute;
  size_t index = 0;             // route index, when found
  PathParams params;            // when found
  std::string allowed_methods;  // "GET, POST", when the method is not allowed
};

class RouteTable {
 public:
  // Registers a route and returns its index (0, 1, 2, ... in registration order).
  size_t Add(std::string_view method, std::string_view pattern);
  RouteMatch Find(std::string_view method, std::string_view path) const;

  const std::string& pattern(size_t index) const { return routes_[index].pattern; }
  const std::string& method(size_t index) const { return routes_[index].method; }
  size_t size() const { return routes_.size(); }

 private:
  struct Route {
    std::string method;
    std::string pattern;
    std::vector<std::string> segments;  // "{id}" kept with braces
    int literal_segments = 0;
  };
  std::vector<Route> routes_;
};

// The value of path parameter `name`, or "" if absent.
std::string_view PathParam(const PathParams& params, std::string_view name);

}  // namespace bulwark::server
