// The header checks made before any handler: JSON content type, and --insecure-dev's loopback
// Host / Origin / Sec-Fetch-Site rule (issue #18 point 9).
#include "server/request_guards.h"

#include <gtest/gtest.h>

#include "server/api_status.h"

namespace bulwark::server {
namespace {

httplib::Request WithHeaders(std::initializer_list<std::pair<std::string, std::string>> headers,
                             std::string body = "") {
  httplib::Request r;
  for (const auto& [name, value] : headers) r.headers.emplace(name, value);
  r.body = std::move(body);
  return r;
}

TEST(CheckJsonBodyTest, BodiesMustBeDeclaredJson) {
  EXPECT_TRUE(CheckJsonBody(WithHeaders({})).ok()) << "no body, no requirement";
  EXPECT_TRUE(CheckJsonBody(WithHeaders({{"Content-Type", "application/json"}}, "{}")).ok());
  EXPECT_TRUE(CheckJsonBody(WithHeaders({{"Content-Type", "Application/JSON; charset=utf-8"}}, "{}")).ok());
  for (const char* type :
       {"text/plain", "application/x-www-form-urlencoded", "multipart/form-data", "application/jsonp", ""}) {
    absl::Status s = CheckJsonBody(WithHeaders({{"Content-Type", type}}, "{}"));
    EXPECT_FALSE(s.ok()) << type;
    EXPECT_EQ(ApiCodeOf(s), "unsupported_media_type") << s;
  }
  EXPECT_FALSE(CheckJsonBody(WithHeaders({}, "{}")).ok()) << "a body without a Content-Type";
}

TEST(IsLoopbackAuthorityTest, LoopbackNamesOnly) {
  for (const char* ok : {"localhost", "LOCALHOST:8420", "127.0.0.1", "127.1.2.3:80", "[::1]", "[::1]:8420"}) {
    EXPECT_TRUE(IsLoopbackAuthority(ok)) << ok;
  }
  for (const char* bad : {"", "evil.example", "evil.example:8420", "127.0.0.1.evil.example", "localhost.evil",
                          "128.0.0.1", "127.0.0.256", "127.0.0", "[::2]:80", "[::1]x",
                          "localhost:", "localhost:80x", "0.0.0.0", "10.0.0.1:8420"}) {
    EXPECT_FALSE(IsLoopbackAuthority(bad)) << bad;
  }
}

TEST(McpOriginAllowedTest, NoOriginALoopbackOneOrTheRequestsOwnHost) {
  EXPECT_TRUE(McpOriginAllowed(WithHeaders({{"Host", "mem.example:8420"}})));
  EXPECT_TRUE(McpOriginAllowed(WithHeaders({{"Host", "mem.example"}, {"Origin", "http://localhost:3000"}})));
  EXPECT_TRUE(
      McpOriginAllowed(WithHeaders({{"Host", "Mem.Example:8420"}, {"Origin", "https://mem.example:8420"}})));
  for (const char* origin : {"https://evil.example", "null", "file://", "http://mem.example:8420/x",
                             "http://mem.example:9999", "ftp://localhost", "http://"}) {
    EXPECT_FALSE(McpOriginAllowed(WithHeaders({{"Host", "mem.example:8420"}, {"Origin", origin}}))) << origin;
  }
  EXPECT_FALSE(McpOriginAllowed(WithHeaders({{"Origin", "http://mem.example"}}))) << "no Host to match";
}

TEST(CheckLocalOriginTest, RefusesForeignHostOriginAndCrossSiteFetches) {
  EXPECT_TRUE(CheckLocalOrigin(WithHeaders({{"Host", "127.0.0.1:8420"}})).ok());
  EXPECT_TRUE(CheckLocalOrigin(WithHeaders({})).ok()) << "HTTP/1.0 without Host";
  EXPECT_TRUE(
      CheckLocalOrigin(WithHeaders({{"Host", "localhost"}, {"Origin", "http://localhost:3000"}})).ok());
  EXPECT_TRUE(CheckLocalOrigin(WithHeaders({{"Host", "localhost"}, {"Sec-Fetch-Site", "same-origin"}})).ok());
  const std::vector<httplib::Request> refused = {
      WithHeaders({{"Host", "evil.example:8420"}}),  // DNS rebinding
      WithHeaders({{"Host", "127.0.0.1:8420"}, {"Origin", "https://evil.example"}}),
      WithHeaders({{"Host", "127.0.0.1:8420"}, {"Origin", "null"}}),  // sandboxed frame, file://
      WithHeaders({{"Host", "127.0.0.1:8420"}, {"Origin", "http://127.0.0.1.evil.example"}}),
      WithHeaders({{"Host", "127.0.0.1:8420"}, {"Sec-Fetch-Site", "cross-site"}}),
  };
  for (const httplib::Request& r : refused) {
    absl::Status s = CheckLocalOrigin(r);
    EXPECT_EQ(ApiCodeOf(s), "forbidden_origin") << s;
    EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied) << s;
  }
}

}  // namespace
}  // namespace bulwark::server
