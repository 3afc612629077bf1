// The benign-session simulator (benign_session.h) on the 300-memory fixture: sessions have the
// requested length, contain the hard negatives (follow-ups on the previous answer's top memory,
// broad questions, briefings across every category), never use a follow-up on a memory the
// session was not shown, and replay from their seed; the corpus loader rejects bad lines.
#include "attack/extraction/benign_session.h"

#include <absl/container/flat_hash_set.h>
#include <gtest/gtest.h>

#include <fstream>

#include "attack/extraction/extraction_fixture.h"

namespace bulwark::extraction {
namespace {

class BenignSessionTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { fixture_ = new testing::FixtureStore(); }
  static void TearDownTestSuite() { delete fixture_; }

  std::vector<AttackSession> Sessions(BenignSessionOptions options, int length, int count,
                                      uint64_t seed = 1) {
    auto sim = BenignSessionSimulator::Create(testing::Corpus(), options);
    EXPECT_TRUE(sim.ok()) << sim.status();
    std::vector<AttackSession> out;
    if (!sim.ok()) return out;
    StoreExtractionTarget target = fixture_->Target();
    for (int i = 0; i < count; ++i) {
      SeededCsprng rng = SessionRng(seed, "benign", static_cast<uint64_t>(i));
      auto session = (*sim)->Run(target, "b" + std::to_string(i), {.queries = length, .k = 4}, rng);
      EXPECT_TRUE(session.ok()) << session.status();
      if (session.ok()) out.push_back(*std::move(session));
    }
    return out;
  }
  static testing::FixtureStore* fixture_;
};
testing::FixtureStore* BenignSessionTest::fixture_ = nullptr;

TEST_F(BenignSessionTest, SessionsHoldTheHardNegatives) {
  int follow_ups = 0, broad = 0, total = 0;
  for (int length : {8, 64}) {
    for (const AttackSession& s : Sessions({}, length, 20)) {
      ASSERT_EQ(s.steps.size(), static_cast<size_t>(length));
      EXPECT_EQ(s.attack, "benign");
      absl::flat_hash_set<std::string> shown;
      for (const AttackStep& step : s.steps) {
        ++total;
        if (!step.source_id.empty()) {
          EXPECT_TRUE(shown.contains(step.source_id)) << "a follow-up is on a memory the session was shown";
          ++follow_ups;
        }
        for (const std::string& q : BroadQuestions()) broad += step.query == q ? 1 : 0;
        for (const RetrievedText& hit : step.hits) shown.insert(hit.id);
      }
    }
  }
  std::printf("benign turns %d: follow-ups %d, broad %d\n", total, follow_ups, broad);
  EXPECT_GT(follow_ups, total / 6);  // about 0.3 of the turns
  EXPECT_GT(broad, total / 30);      // about 0.1 of the rest
}

TEST_F(BenignSessionTest, BriefingsTouchEveryCategory) {
  const std::vector<AttackSession> sessions = Sessions({.briefing_probability = 1.0}, 64, 3);
  ASSERT_EQ(sessions.size(), 3u);
  for (const AttackSession& s : sessions) {
    int briefings = 0;
    for (const AttackStep& step : s.steps) {
      for (const char* c : {"task_reminders", "calendar_events", "preferences", "factual_knowledge",
                            "document_references", "configuration_settings", "conversation_history"}) {
        briefings += step.query == BriefingQuestion(c) ? 1 : 0;
      }
    }
    EXPECT_GE(briefings, 7) << "every category's briefing question at least once";
  }
}

TEST_F(BenignSessionTest, SameSeedSameSessions) {
  const auto a = Sessions({}, 16, 3, 9), b = Sessions({}, 16, 3, 9), c = Sessions({}, 16, 3, 10);
  ASSERT_EQ(a.size(), 3u);
  bool differs = false;
  for (size_t i = 0; i < a.size(); ++i) {
    for (size_t t = 0; t < a[i].steps.size(); ++t) {
      EXPECT_EQ(a[i].steps[t].query, b[i].steps[t].query);
      differs = differs || a[i].steps[t].query != c[i].steps[t].query;
    }
  }
  EXPECT_TRUE(differs);
}

TEST_F(BenignSessionTest, LoaderRejectsBadInput) {
  bulwark::testing::TempDir dir;
  const std::string bad = (dir / "bad.jsonl").string();
  std::ofstream(bad) << "{\"query\": \"ok\", \"category\": \"x\"}\n{\"query\": 3}\n";
  auto corpus = LoadBenignCorpus({bad}, "");
  ASSERT_EQ(corpus.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(corpus.status().message().find("bad.jsonl:2"), std::string_view::npos) << corpus.status();
  EXPECT_EQ(LoadBenignCorpus({(dir / "missing.jsonl").string()}, "").status().code(),
            absl::StatusCode::kNotFound);
  const std::string empty = (dir / "empty.jsonl").string();
  std::ofstream(empty) << "\n";
  EXPECT_EQ(LoadBenignCorpus({empty}, "").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(BenignSessionSimulator::Create(testing::Corpus(), {.pivot_probability = 2}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace bulwark::extraction
