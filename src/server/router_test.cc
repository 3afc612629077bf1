// Route templates: literal and {param} segments, specificity, 404 and 405.
#include "server/router.h"

#include <gtest/gtest.h>

namespace bulwark::server {
namespace {

class RouteTableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    add_ = table_.Add("POST", "/v1/memories");
    search_ = table_.Add("POST", "/v1/memories/search");
    get_ = table_.Add("GET", "/v1/memories/{id}");
    history_ = table_.Add("GET", "/v1/memories/{id}/history");
    del_ = table_.Add("DELETE", "/v1/memories/{id}");
  }
  RouteTable table_;
  size_t add_, search_, get_, history_, del_;
};

TEST_F(RouteTableTest, FindsLiteralRoutes) {
  RouteMatch m = table_.Find("POST", "/v1/memories");
  ASSERT_EQ(m.kind, RouteMatch::Kind::kFound);
  EXPECT_EQ(m.index, add_);
}

TEST_F(RouteTableTest, ExtractsParameters) {
  RouteMatch m = table_.Find("GET", "/v1/memories/01ABC/history");
  ASSERT_EQ(m.kind, RouteMatch::Kind::kFound);
  EXPECT_EQ(m.index, history_);
  EXPECT_EQ(PathParam(m.params, "id"), "01ABC");
  EXPECT_EQ(PathParam(m.params, "other"), "");
}

TEST_F(RouteTableTest, LiteralSegmentBeatsParameter) {
  RouteMatch m = table_.Find("POST", "/v1/memories/search");
  ASSERT_EQ(m.kind, RouteMatch::Kind::kFound);
  EXPECT_EQ(m.index, search_);
}

TEST_F(RouteTableTest, WrongMethodListsAllowedMethods) {
  RouteMatch m = table_.Find("PUT", "/v1/memories/01ABC");
  ASSERT_EQ(m.kind, RouteMatch::Kind::kMethodNotAllowed);
  EXPECT_EQ(m.allowed_methods, "GET, DELETE");
}

TEST_F(RouteTableTest, UnknownPathsAndEmptySegmentsDoNotMatch) {
  EXPECT_EQ(table_.Find("GET", "/v2/memories/x").kind, RouteMatch::Kind::kNoRoute);
  EXPECT_EQ(table_.Find("GET", "/v1/memories/").kind, RouteMatch::Kind::kNoRoute);
  EXPECT_EQ(table_.Find("GET", "/v1/memories/x/history/more").kind, RouteMatch::Kind::kNoRoute);
  EXPECT_EQ(table_.Find("GET", "").kind, RouteMatch::Kind::kNoRoute);
}

}  // namespace
}  // namespace bulwark::server
