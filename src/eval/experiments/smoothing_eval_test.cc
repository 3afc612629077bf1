// The smoothing experiment's inputs: scenario files are checked line by line, and the conditions
// follow max_t and k.
#include "eval/experiments/smoothing_eval.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "testing/status_matchers.h"
#include "testing/temp_dir.h"

namespace bulwark::eval {
namespace {

using ::bulwark::testing::IsOk;
using ::bulwark::testing::StatusIs;

constexpr char kScenario[] =
    R"({"question": "Q?", "injected_claim": "bad", "malicious_answer": "bad", "supporting_passages": ["good"],)"
    R"( "correct_keywords": ["good"], "malicious_keywords": ["bad"]})";

std::string WriteFile(const testing::TempDir& dir, const std::string& text) {
  const std::string path = (dir / "scenarios.jsonl").string();
  std::ofstream(path) << text;
  return path;
}

TEST(SmoothingEvalTest, ReadsScenarios) {
  testing::TempDir dir;
  auto scenarios = ReadSmoothingScenarios(WriteFile(dir, std::string(kScenario) + "\n\n" + kScenario + "\n"));
  ASSERT_THAT(scenarios, IsOk());
  ASSERT_EQ(scenarios->size(), 2u);
  EXPECT_EQ((*scenarios)[1].id, "line-3");
  EXPECT_EQ((*scenarios)[0].supporting, (std::vector<std::string>{"good"}));
}

TEST(SmoothingEvalTest, RefusesBadScenarioFiles) {
  testing::TempDir dir;
  EXPECT_THAT(ReadSmoothingScenarios((dir / "missing.jsonl").string()),
              StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(ReadSmoothingScenarios(WriteFile(dir, std::string(kScenario) + "\n")),
              StatusIs(absl::StatusCode::kInvalidArgument));  // one scenario
  EXPECT_THAT(ReadSmoothingScenarios(WriteFile(dir, std::string(kScenario) + "\n{\"question\": \"Q?\"}\n")),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(SmoothingEvalTest, ConditionsFollowMaxTAndK) {
  const std::vector<SmoothingCondition> conditions = SmoothingConditions({.max_t = 2, .k = 5});
  ASSERT_EQ(conditions.size(), 8u);  // t = 1, 2; S = 10 + t, 20; provenance off, on
  EXPECT_EQ(conditions[0].size, 11);
  EXPECT_FALSE(conditions[0].provenance);
  EXPECT_TRUE(conditions[1].provenance);
  EXPECT_EQ(conditions[1].t_effective(), 0);
  EXPECT_EQ(conditions[7].t, 2);
  EXPECT_EQ(conditions[7].size, 20);
  EXPECT_EQ(SmoothingConditions({.max_t = 1, .k = 15}).size(), 2u);  // S = 11 < k is skipped
}

}  // namespace
}  // namespace bulwark::eval
