#include "cli/jsonl_import.h"

#include <gtest/gtest.h>

#include <sstream>

namespace bulwark::cli {
namespace {

absl::StatusOr<std::vector<NewEntry>> Parse(const std::string& text) {
  std::istringstream in(text);
  return ParseImportJsonl(in, {});
}

TEST(ParseImportJsonlTest, ParsesFieldsAndDefaults) {
  auto entries = Parse(
      "{\"text\": \"a\", \"metadata\": {\"x\": 1}, \"source\": \"agent\"}\n"
      "\n"
      "{\"text\": \"b\"}\r\n");
  ASSERT_TRUE(entries.ok()) << entries.status();
  ASSERT_EQ(entries->size(), 2u);
  EXPECT_EQ((*entries)[0].text, "a");
  EXPECT_EQ((*entries)[0].metadata["x"], 1);
  EXPECT_EQ((*entries)[0].source, Source::kAgent);
  EXPECT_EQ((*entries)[1].source, Source::kImport);
  EXPECT_TRUE((*entries)[1].metadata.is_object());
}

TEST(ParseImportJsonlTest, NamesTheBadLine) {
  struct Case {
    std::string line;
    std::string expect;
  };
  for (const Case& c : std::vector<Case>{
           {"{\"text\": \"ok\"", "not valid JSON"},
           {"[1,2]", "expected a JSON object"},
           {"{\"metadata\": {}}", "missing \"text\""},
           {"{\"text\": 5}", "must be a string"},
           {"{\"text\": \"\"}", "empty"},
           {"{\"text\": \"x\", \"metadata\": []}", "must be an object"},
           {"{\"text\": \"x\", \"source\": \"root\"}", "source"},
           {"{\"text\": \"x\", \"txet\": \"typo\"}", "unknown field \"txet\""},
       }) {
    auto entries =
        Parse("{\"text\": \"first\"}\n{\"text\": \"second\"}\n" + c.line + "\n{\"text\": \"last\"}\n");
    ASSERT_FALSE(entries.ok()) << c.line;
    EXPECT_EQ(entries.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(entries.status().message().find("line 3: "), std::string_view::npos) << entries.status();
    EXPECT_NE(entries.status().message().find(c.expect), std::string_view::npos) << entries.status();
  }
}

TEST(ParseImportJsonlTest, RejectsInvalidUtf8AndEmptyFiles) {
  auto bad = Parse("{\"text\": \"caf\xe9\"}\n");
  EXPECT_FALSE(bad.ok());
  EXPECT_FALSE(Parse("").ok());
  EXPECT_FALSE(Parse("\n\n").ok());
}

TEST(ParseImportJsonlTest, EnforcesLimits) {
  std::istringstream in("{\"text\": \"a\"}\n{\"text\": \"b\"}\n{\"text\": \"c\"}\n");
  ImportLimits limits;
  limits.max_entries = 2;
  auto entries = ParseImportJsonl(in, limits);
  EXPECT_FALSE(entries.ok());
  EXPECT_NE(entries.status().message().find("line 3"), std::string_view::npos);
  std::istringstream big("{\"text\": \"" + std::string(100, 'x') + "\"}\n");
  limits.max_text_bytes = 50;
  EXPECT_FALSE(ParseImportJsonl(big, limits).ok());
}

}  // namespace
}  // namespace bulwark::cli
