#include "core/text_validation.h"

#include <gtest/gtest.h>

#include "testing/status_matchers.h"

namespace bulwark {
namespace {

using ::bulwark::testing::IsOk;

TEST(ValidateTextTest, AcceptsOrdinaryText) {
  EXPECT_THAT(ValidateText("Alice prefers window seats", 100), IsOk());
  EXPECT_THAT(ValidateText("Zoë mag Käse — 日本語 🙂", 100), IsOk());
}

TEST(ValidateTextTest, RejectsEmptyAndBlank) {
  EXPECT_EQ(ValidateText("", 100).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ValidateText(" \n\t ", 100).code(), absl::StatusCode::kInvalidArgument);
}

TEST(ValidateTextTest, RejectsOverLimitAndSaysTheLimit) {
  absl::Status s = ValidateText(std::string(101, 'a'), 100);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("100"), std::string_view::npos);
  EXPECT_THAT(ValidateText(std::string(100, 'a'), 100), IsOk());
}

TEST(ValidateTextTest, RejectsInvalidUtf8WithOffset) {
  for (std::string bad : {std::string("ok\xff"), std::string("ok\xc0\xaf"),  // overlong '/'
                          std::string("ok\xed\xa0\x80"),                     // surrogate
                          std::string("ok\xf4\x90\x80\x80"),                 // > U+10FFFF
                          std::string("ok\xe2\x82")}) {                      // truncated
    absl::Status s = ValidateText(bad, 100);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(s.message().find("offset 2"), std::string_view::npos) << s.message();
  }
}

TEST(ValidateTextTest, RejectsNul) {
  EXPECT_EQ(ValidateText(std::string("a\0b", 3), 100).code(), absl::StatusCode::kInvalidArgument);
}

TEST(ValidateNamespaceTest, AllowsAndRejects) {
  EXPECT_THAT(ValidateNamespace("default"), IsOk());
  EXPECT_THAT(ValidateNamespace("user-42.prod_a"), IsOk());
  EXPECT_FALSE(ValidateNamespace("").ok());
  EXPECT_FALSE(ValidateNamespace(std::string(65, 'a')).ok());
  EXPECT_FALSE(ValidateNamespace("a/b").ok());
  EXPECT_FALSE(ValidateNamespace("a b").ok());
  EXPECT_FALSE(ValidateNamespace("../etc").ok());
  EXPECT_FALSE(ValidateNamespace("-x").ok());
  EXPECT_FALSE(ValidateNamespace("ns\xc3\xa9").ok());
}

TEST(ValidateMetadataTest, ObjectsOnlyAndBounded) {
  EXPECT_THAT(ValidateMetadata(nlohmann::json::object(), 10), IsOk());
  EXPECT_THAT(ValidateMetadata({{"a", 1}}, 10), IsOk());
  EXPECT_FALSE(ValidateMetadata(nlohmann::json::array(), 10).ok());
  EXPECT_FALSE(ValidateMetadata("x", 10).ok());
  EXPECT_FALSE(ValidateMetadata({{"key", std::string(20, 'x')}}, 10).ok());
}

}  // namespace
}  // namespace bulwark
