// MINJA: a query-only attacker's auto-stored records land in memory and are retrieved by the
// victims' plain queries; the indication is progressively shortened.
#include "attack/minja.h"

#include <gtest/gtest.h>

#include "attack/attack.h"
#include "attack/attack_fixture.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"

namespace bulwark::attack {
namespace {

using ::bulwark::testing::IsOk;

MinjaTarget ReportMinjaTarget() {
  return {.questions = testing::ReportVictimQueries(),
          .target_topic = "quarterly report submission",
          .poison_goal = testing::kReportGoal};
}

TEST(AutoStoringAgentTest, SplitsTheQuestionFromTheGuidance) {
  auto [q, g] = AutoStoringAgent::SplitQuestion("Where is the key? Remember: it moved. Step 1: look.");
  EXPECT_EQ(q, "Where is the key?");
  EXPECT_EQ(g, "Remember: it moved. Step 1: look.");
  EXPECT_EQ(AutoStoringAgent::ReasoningOf("Question: a?\nReasoning: b c"), "b c");
  EXPECT_EQ(AutoStoringAgent::ReasoningOf("a plain memory"), "");
}

TEST(MinjaTest, AutoStoredRecordsLandInMemoryAndPlainVictimQueriesRetrieveThem) {
  bulwark::testing::TempDir dir;
  auto store = testing::CreateStore(dir.path(), testing::NoGateConfig());
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(testing::AddBenign(*store, "user"));
  AutoStoringAgent agent(store.get(), "user");
  auto result = RunMinja(agent, ReportMinjaTarget(), {.seed = 1});
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->record_ids.size(), 10u);
  // Progressive shortening: the last queries carry (almost) no indication.
  EXPECT_GT(result->rounds.front().bridging_kept, result->rounds.back().bridging_kept);
  EXPECT_LE(result->rounds.back().bridging_kept * 4, result->rounds.front().bridging_kept);
  // Every record landed in memory (the attacker never wrote), signed and verified, and carries
  // the goal -- also those written after the indication was gone.
  for (const std::string& id : result->record_ids) {
    auto entry = store->Get("user", id);
    ASSERT_TRUE(entry.ok()) << entry.status();
    EXPECT_EQ(entry->source, Source::kAgent);
    EXPECT_EQ(entry->principal, "agent");
    EXPECT_EQ(entry->state, State::kActive);
  }
  EXPECT_EQ(result->records_with_goal, 10);
  const std::string& last = result->rounds.back().interaction.record.text;
  EXPECT_NE(last.find(testing::kReportGoal), std::string::npos) << last;
  // Victims ask plain queries and retrieve the records.
  auto outcome = MeasureRetrieval(*store, "user", testing::ReportVictimQueries(), result->record_ids, 3);
  ASSERT_THAT(outcome, IsOk());
  EXPECT_EQ(outcome->asr_r, 1.0);
  // ...but not for unrelated queries.
  auto benign = MeasureRetrieval(*store, "user", {"When is my dentist appointment?"}, result->record_ids, 1);
  ASSERT_THAT(benign, IsOk());
  EXPECT_EQ(benign->asr_r, 0.0);
}

TEST(MinjaTest, RejectsBadOptions) {
  bulwark::testing::TempDir dir;
  auto store = testing::CreateStore(dir.path(), testing::NoGateConfig());
  ASSERT_NE(store, nullptr);
  AutoStoringAgent agent(store.get(), "user");
  EXPECT_FALSE(RunMinja(agent, {}, {}).ok());
  EXPECT_FALSE(RunMinja(agent, ReportMinjaTarget(), {.rounds = 0}).ok());
  EXPECT_FALSE(RunMinja(agent, ReportMinjaTarget(), {.keep_start = 0}).ok());
}

}  // namespace
}  // namespace bulwark::attack
