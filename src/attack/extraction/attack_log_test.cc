// The extraction attack log (attack_log.h): a written log reads back to the same sessions
// (round trip, interleaved sessions included), and malformed or out-of-order lines are refused
// with the line named.
#include "attack/extraction/attack_log.h"

#include <gtest/gtest.h>

#include <sstream>

namespace bulwark::extraction {
namespace {

AttackSession Sample(std::string attack, std::string session, int steps) {
  AttackSession s{std::move(attack), std::move(session), {}};
  for (int i = 0; i < steps; ++i) {
    AttackStep step;
    step.query = "query \"" + std::to_string(i) + "\"\n with \xc3\xa9";
    step.refused = i == 1;
    if (!step.refused) step.hits = {{"01ID" + std::to_string(i), "text", 0.5f}, {"01IDX", "other", 0.25f}};
    s.steps.push_back(std::move(step));
  }
  return s;
}

TEST(AttackLogTest, RoundTrip) {
  const std::vector<AttackSession> written = {Sample("mextra_general", "mextra_general-1-0", 3),
                                              Sample("benign", "benign-t8-1-0", 2)};
  std::stringstream log;
  for (const AttackSession& s : written) ASSERT_TRUE(WriteAttackLog(s, log).ok());
  const std::string text = log.str();
  EXPECT_EQ(
      text.substr(0, text.find('\n')),
      R"({"attack":"mextra_general","session":"mextra_general-1-0","step":1,"query":"query \"0\"\n with é",)"
      R"("hits":["01ID0","01IDX"],"refused":false})");
  absl::StatusOr<std::vector<AttackSession>> read = ReadAttackLog(log);
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->size(), written.size());
  for (size_t i = 0; i < written.size(); ++i) {
    EXPECT_EQ((*read)[i].attack, written[i].attack);
    EXPECT_EQ((*read)[i].session, written[i].session);
    ASSERT_EQ((*read)[i].steps.size(), written[i].steps.size());
    for (size_t t = 0; t < written[i].steps.size(); ++t) {
      const AttackStep& a = (*read)[i].steps[t];
      const AttackStep& b = written[i].steps[t];
      EXPECT_EQ(a.query, b.query);
      EXPECT_EQ(a.refused, b.refused);
      ASSERT_EQ(a.hits.size(), b.hits.size());
      for (size_t h = 0; h < a.hits.size(); ++h) EXPECT_EQ(a.hits[h].id, b.hits[h].id);
    }
  }
}

TEST(AttackLogTest, InterleavedSessionsAndUnknownFieldsAreRead) {
  std::istringstream in(
      R"({"attack":"ikea","session":"a","step":1,"query":"q1","hits":[],"refused":false,"extra":1})"
      "\n\n"
      R"({"attack":"dgea","session":"b","step":1,"query":"q","hits":["x"],"refused":true})"
      "\n"
      R"({"attack":"ikea","session":"a","step":2,"query":"q2","hits":["y"],"refused":false})");
  absl::StatusOr<std::vector<AttackSession>> read = ReadAttackLog(in);
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->size(), 2u);
  EXPECT_EQ((*read)[0].steps.size(), 2u);
  EXPECT_EQ((*read)[0].steps[1].hits[0].id, "y");
  EXPECT_TRUE((*read)[1].steps[0].refused);
}

TEST(AttackLogTest, BadLinesAreRefusedWithTheirLineNumber) {
  const std::string ok = R"({"attack":"ikea","session":"a","step":1,"query":"q","hits":[],"refused":false})";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"not json", ":2: not a JSON object"},
      {R"({"attack":"ikea","session":"a","step":3,"query":"q","hits":[],"refused":false})",
       "step 3 after step 1"},
      {R"({"attack":"IKEA","session":"b","step":1,"query":"q","hits":[],"refused":false})", "[a-z0-9_]"},
      {R"({"attack":"ikea","session":"has space","step":1,"query":"q","hits":[],"refused":false})",
       "printable"},
      {R"({"attack":"ikea","session":"b","step":"1","query":"q","hits":[],"refused":false})", "\"step\""},
      {R"({"attack":"ikea","session":"b","step":1,"query":"q","hits":[7],"refused":false})", "\"hits\""},
      {R"({"attack":"ikea","session":"b","step":1,"query":"q","hits":[]})", "\"refused\""},
      {R"({"attack":"dgea","session":"a","step":2,"query":"q","hits":[],"refused":false})", "attack name"},
  };
  for (const auto& [line, message] : cases) {
    std::istringstream in(ok + "\n" + line + "\n");
    absl::StatusOr<std::vector<AttackSession>> read = ReadAttackLog(in, "log.jsonl");
    ASSERT_EQ(read.status().code(), absl::StatusCode::kInvalidArgument) << line;
    EXPECT_NE(read.status().message().find("log.jsonl:2"), std::string_view::npos) << read.status();
    EXPECT_NE(read.status().message().find(message), std::string_view::npos) << read.status();
  }
  std::istringstream huge(std::string(2 << 20, 'x'));
  EXPECT_EQ(ReadAttackLog(huge).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ReadAttackLogFile("/nonexistent/log.jsonl").status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace bulwark::extraction
