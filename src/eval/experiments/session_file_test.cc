// The input files of `eval sessions`: what the sessions and memories parsers accept (unknown
// fields and styles, plain memory lines) and what they refuse, each refusal naming its line.
#include "eval/experiments/session_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "testing/status_matchers.h"

namespace bulwark::eval {
namespace {

using ::bulwark::testing::IsOk;
using ::bulwark::testing::StatusIs;
using ::testing::HasSubstr;

absl::StatusOr<std::vector<LabelledSession>> Sessions(const std::string& text,
                                                      const SessionLimits& limits = {}) {
  std::istringstream in(text);
  return ParseSessionFile(in, limits);
}

absl::StatusOr<std::vector<NewEntry>> Memories(const std::string& text) {
  std::istringstream in(text);
  return ParseMemoryFile(in);
}

TEST(ParseSessionFile, ReadsSessionsInOrderWithAnyStyle) {
  auto s = Sessions(
      "{\"session\": \"a\", \"label\": \"benign\", \"style\": \"terse-grandma\", \"queries\": [\"hi?\", "
      "\"and "
      "then?\"]}\n"
      "\n"
      "{\"session\": \"b\", \"label\": \"attack\", \"queries\": [\"dump it\"], \"persona\": \"x\"}\r\n");
  ASSERT_THAT(s, IsOk());
  ASSERT_EQ(s->size(), 2u);
  EXPECT_EQ((*s)[0].session, "a");
  EXPECT_EQ((*s)[0].label, SessionLabel::kBenign);
  EXPECT_EQ((*s)[0].style, "terse-grandma");
  EXPECT_EQ((*s)[0].queries, (std::vector<std::string>{"hi?", "and then?"}));
  EXPECT_EQ((*s)[0].line, 1u);
  EXPECT_EQ((*s)[1].label, SessionLabel::kAttack);
  EXPECT_EQ((*s)[1].style, "unspecified");  // no style given; the unknown "persona" is ignored
  EXPECT_EQ((*s)[1].line, 3u);
}

TEST(ParseSessionFile, RefusesBadLinesNamingTheLine) {
  const std::string good = "{\"session\": \"a\", \"label\": \"benign\", \"queries\": [\"q\"]}\n";
  struct Case {
    std::string line;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"not json", "line 2: not valid JSON"},
      {"[1, 2]", "line 2: not a JSON object"},
      {"{\"label\": \"benign\", \"queries\": [\"q\"]}", "line 2: missing \"session\""},
      {"{\"session\": \"\", \"label\": \"benign\", \"queries\": [\"q\"]}",
       "line 2: \"session\" must be 1 to"},
      {"{\"session\": \"b\", \"label\": \"evil\", \"queries\": [\"q\"]}", "line 2: unknown label \"evil\""},
      {"{\"session\": \"b\", \"queries\": [\"q\"]}", "line 2: \"label\" must be"},
      {"{\"session\": \"b\", \"label\": \"attack\", \"queries\": []}", "line 2: \"queries\" is empty"},
      {"{\"session\": \"b\", \"label\": \"attack\"}", "line 2: \"queries\" must be an array"},
      {"{\"session\": \"b\", \"label\": \"attack\", \"queries\": [\"q\", 3]}",
       "line 2: query 2 is not a string"},
      {"{\"session\": \"b\", \"label\": \"attack\", \"queries\": [\"q\", \"  \"]}", "line 2: query 2:"},
      {"{\"session\": \"b\", \"label\": \"attack\", \"style\": 7, \"queries\": [\"q\"]}",
       "line 2: \"style\" must be a string"},
      {"{\"session\": \"a\", \"label\": \"attack\", \"queries\": [\"q\"]}",
       "line 2: session \"a\" already appears on line 1"},
  };
  for (const Case& c : cases) {
    auto s = Sessions(good + c.line + "\n");
    EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.message))) << c.line;
  }
  EXPECT_THAT(Sessions("\n  \n"), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("no session")));
}

TEST(ParseSessionFile, EnforcesTheLimits) {
  SessionLimits limits;
  limits.max_sessions = 1;
  const std::string two =
      "{\"session\": \"a\", \"label\": \"benign\", \"queries\": [\"q\"]}\n"
      "{\"session\": \"b\", \"label\": \"benign\", \"queries\": [\"q\"]}\n";
  EXPECT_THAT(Sessions(two, limits),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("line 2: more than 1 sessions")));
  limits = {};
  limits.max_queries_per_session = 1;
  EXPECT_THAT(Sessions("{\"session\": \"a\", \"label\": \"benign\", \"queries\": [\"q\", \"r\"]}", limits),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("line 1: more than 1 queries")));
  limits = {};
  limits.max_total_queries = 1;
  EXPECT_THAT(Sessions(two, limits), StatusIs(absl::StatusCode::kInvalidArgument,
                                              HasSubstr("line 2: more than 1 queries in the file")));
  limits = {};
  limits.max_line_bytes = 40;
  EXPECT_THAT(Sessions(two, limits),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("line 1: longer than 40")));
}

TEST(ParseMemoryFile, ReadsJsonAndPlainLines) {
  auto m = Memories(
      "{\"text\": \"Alice likes tea\", \"metadata\": {\"category\": \"food\"}, \"source\": \"user\", \"id\": "
      "4}\n"
      "Bob's flight leaves at 9\n"
      "\n");
  ASSERT_THAT(m, IsOk());
  ASSERT_EQ(m->size(), 2u);
  EXPECT_EQ((*m)[0].text, "Alice likes tea");
  EXPECT_EQ((*m)[0].metadata["category"], "food");
  EXPECT_EQ((*m)[1].text, "Bob's flight leaves at 9");
}

TEST(ParseMemoryFile, RefusesBadLinesNamingTheLine) {
  EXPECT_THAT(Memories("ok\n{\"text\": 3}\n"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("line 2: \"text\" must be a string")));
  EXPECT_THAT(Memories("ok\n{broken\n"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("line 2: not a JSON")));
  EXPECT_THAT(
      Memories("ok\n{\"text\": \"x\", \"metadata\": []}\n"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("line 2: \"metadata\" must be an object")));
  EXPECT_THAT(Memories("ok\n{\"text\": \"   \"}\n"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("line 2:")));
  EXPECT_THAT(Memories("ok\n\xff\xfe bad utf8\n"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("line 2:")));
  EXPECT_THAT(Memories(""), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("no memory")));
}

}  // namespace
}  // namespace bulwark::eval
