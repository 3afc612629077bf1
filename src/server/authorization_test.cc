// API key extraction and the role/grant rules, including the tenant-isolation rule that an
// ungranted namespace answers exactly like a nonexistent one.
#include "server/authorization.h"

#include <gtest/gtest.h>

#include "server/api_status.h"

namespace bulwark::server {
namespace {

Caller MakeCaller(Role role, std::vector<std::string> namespaces) {
  Caller c;
  c.principal.name = "p";
  c.principal.role = role;
  c.principal.namespaces = std::move(namespaces);
  return c;
}

TEST(ApiKeyOfTest, BearerOrXApiKey) {
  httplib::Request r;
  EXPECT_EQ(*ApiKeyOf(r), "");
  r.set_header("Authorization", "Bearer bwk_0123456789abcdef_xyz");
  EXPECT_EQ(*ApiKeyOf(r), "bwk_0123456789abcdef_xyz");
  httplib::Request x;
  x.set_header("X-API-Key", "k1");
  EXPECT_EQ(*ApiKeyOf(x), "k1");
  x.set_header("Authorization", "Bearer k2");
  EXPECT_FALSE(ApiKeyOf(x).ok());  // two different keys
  httplib::Request basic;
  basic.set_header("Authorization", "Basic dXNlcjpwYXNz");
  EXPECT_EQ(ApiKeyOf(basic).status().code(), absl::StatusCode::kUnauthenticated);
  httplib::Request token;  // Mem0's clients (doc/mem0.md)
  token.set_header("Authorization", "Token bwk_0123456789abcdef_xyz");
  EXPECT_EQ(*ApiKeyOf(token), "bwk_0123456789abcdef_xyz");
  httplib::Request empty_token;
  empty_token.set_header("Authorization", "Token ");
  EXPECT_EQ(ApiKeyOf(empty_token).status().code(), absl::StatusCode::kUnauthenticated);
}

TEST(KeyIdOfTest, ParsesThePublicPart) {
  EXPECT_EQ(KeyIdOf("bwk_0123456789abcdef_secret"), "0123456789abcdef");
  EXPECT_EQ(KeyIdOf("other"), "");
  EXPECT_EQ(KeyIdOf("bwk__x"), "");
}

TEST(AuthorizeTest, UngrantedNamespaceAnswersWithTheHiddenStatus) {
  Caller reader = MakeCaller(Role::kReader, {"a"});
  absl::Status s = Authorize(reader, "b", Need::kRead, EntryNotFound());
  EXPECT_EQ(ErrorBody(s).dump(), ErrorBody(EntryNotFound()).dump());
  // Even an admin-only operation in an ungranted namespace is "not found", not "forbidden".
  s = Authorize(reader, "b", Need::kAdmin, NamespaceNotFound());
  EXPECT_EQ(ErrorBody(s).dump(), ErrorBody(NamespaceNotFound()).dump());
}

TEST(AuthorizeTest, RolesInGrantedNamespaces) {
  Caller reader = MakeCaller(Role::kReader, {"a"});
  Caller writer = MakeCaller(Role::kWriter, {"a"});
  Caller admin = MakeCaller(Role::kAdmin, {"*"});
  EXPECT_TRUE(Authorize(reader, "a", Need::kRead, EntryNotFound()).ok());
  EXPECT_EQ(Authorize(reader, "a", Need::kWrite, EntryNotFound()).code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(Authorize(writer, "a", Need::kWrite, EntryNotFound()).ok());
  EXPECT_EQ(Authorize(writer, "a", Need::kAdmin, EntryNotFound()).code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(Authorize(admin, "anything", Need::kAdmin, EntryNotFound()).ok());
}

TEST(AuthorizeTest, ServiceAdminNeedsTheStarGrant) {
  EXPECT_TRUE(RequireServiceAdmin(MakeCaller(Role::kAdmin, {"*"})).ok());
  EXPECT_FALSE(RequireServiceAdmin(MakeCaller(Role::kAdmin, {"a"})).ok());
  EXPECT_FALSE(RequireServiceAdmin(MakeCaller(Role::kWriter, {"*"})).ok());
  EXPECT_TRUE(RequireAdmin(MakeCaller(Role::kAdmin, {"a"})).ok());
}

TEST(AuthorizeTest, RevokedPrincipalIsNeverAuthorized) {
  Caller admin = MakeCaller(Role::kAdmin, {"*"});
  admin.principal.revoked = true;
  EXPECT_FALSE(Authorize(admin, "a", Need::kRead, EntryNotFound()).ok());
  EXPECT_FALSE(RequireServiceAdmin(admin).ok());
}

}  // namespace
}  // namespace bulwark::server
