// The absl::Status -> HTTP mapping and the JSON error shape.
#include "server/api_status.h"

#include <gtest/gtest.h>

namespace bulwark::server {
namespace {

TEST(ApiStatusTest, MapsCanonicalCodesToHttp) {
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kInvalidArgument), 400);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kUnauthenticated), 401);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kPermissionDenied), 403);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kNotFound), 404);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kAlreadyExists), 409);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kFailedPrecondition), 409);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kResourceExhausted), 429);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kUnavailable), 503);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kDataLoss), 500);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kInternal), 500);
}

TEST(ApiStatusTest, ApiCodeComesFromPayloadOrCanonicalCode) {
  EXPECT_EQ(ApiCodeOf(ApiError(absl::StatusCode::kInvalidArgument, "unknown_field", "x")), "unknown_field");
  EXPECT_EQ(ApiCodeOf(absl::InvalidArgumentError("x")), "invalid_argument");
  EXPECT_EQ(ApiCodeOf(absl::PermissionDeniedError("x")), "forbidden");
}

TEST(ApiStatusTest, ErrorBodyHasCodeAndMessage) {
  nlohmann::json body =
      ErrorBody(ApiError(absl::StatusCode::kInvalidArgument, "wrong_type", "k must be an integer"));
  EXPECT_EQ(body["error"]["code"], "wrong_type");
  EXPECT_EQ(body["error"]["message"], "k must be an integer");
}

TEST(ApiStatusTest, InternalDetailsAreNotSentToCallers) {
  nlohmann::json body = ErrorBody(absl::InternalError("sqlite: disk I/O error at /var/secret/path"));
  EXPECT_EQ(body["error"]["code"], "internal");
  EXPECT_EQ(body["error"]["message"].get<std::string>().find("secret"), std::string::npos);
}

TEST(ApiStatusTest, CannedNotFoundAnswersAreIdentical) {
  EXPECT_EQ(ErrorBody(EntryNotFound()).dump(), ErrorBody(EntryNotFound()).dump());
  EXPECT_EQ(HttpStatusOf(EntryNotFound().code()), 404);
  EXPECT_EQ(HttpStatusOf(NamespaceNotFound().code()), 404);
  EXPECT_EQ(ErrorBody(NamespaceNotFound())["error"]["code"], "namespace_not_found");
}

}  // namespace
}  // namespace bulwark::server
