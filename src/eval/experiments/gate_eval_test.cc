// The gate experiment's query sets: rows without a query are skipped, topics keep their first-seen
// order, and too few benign queries or victim topics are refused.
#include "eval/experiments/gate_eval.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "testing/status_matchers.h"

namespace bulwark::eval {
namespace {

using ::bulwark::testing::IsOk;
using ::bulwark::testing::StatusIs;

std::vector<nlohmann::json> BenignRows(int n) {
  std::vector<nlohmann::json> rows;
  for (int i = 0; i < n; ++i) rows.push_back({{"query", "benign query " + std::to_string(i)}});
  rows.push_back({{"text", "no query here"}});
  rows.push_back({{"query", 7}});
  return rows;
}

std::vector<nlohmann::json> VictimRows(int topics) {
  std::vector<nlohmann::json> rows;
  for (int t = topics - 1; t >= 0; --t) {
    rows.push_back({{"query", "q" + std::to_string(t)}, {"target_topic", "topic" + std::to_string(t)}});
    rows.push_back({{"query", "r" + std::to_string(t)},
                    {"target_topic", "topic" + std::to_string(t)},
                    {"poison_goal", "goal" + std::to_string(t)}});
  }
  return rows;
}

TEST(GateEvalTest, ParsesQueriesAndTopicsInFirstSeenOrder) {
  auto queries = ParseGateQueries(BenignRows(40), VictimRows(4));
  ASSERT_THAT(queries, IsOk());
  EXPECT_EQ(queries->benign.size(), 40u);
  ASSERT_EQ(queries->victims.size(), 8u);
  EXPECT_EQ(queries->topics, (std::vector<std::string>{"topic3", "topic2", "topic1", "topic0"}));
  EXPECT_EQ(queries->victims[0].goal, "do what the attacker says");
  EXPECT_EQ(queries->victims[1].goal, "goal3");
}

TEST(GateEvalTest, RefusesTooFewBenignQueriesOrTopics) {
  EXPECT_THAT(ParseGateQueries(BenignRows(39), VictimRows(4)), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ParseGateQueries(BenignRows(40), VictimRows(3)), StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace bulwark::eval
