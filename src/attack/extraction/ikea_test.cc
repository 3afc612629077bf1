// IKEA (ikea.h) on the 300-memory fixture: its questions carry no extraction-style command word
// yet it keeps leaking new memories, its mutations follow the
// memories it was shown, it replays from its seed, and the LLM path generates anchors and
// questions through the loopback chat server.
#include "attack/extraction/ikea.h"

#include <absl/container/flat_hash_set.h>
#include <gtest/gtest.h>

#include "attack/extraction/extraction_fixture.h"
#include "attack/extraction/text_terms.h"
#include "embed/lexical_embedder.h"
#include "testing/chat_server.h"

namespace bulwark::extraction {
namespace {

class IkeaTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { fixture_ = new testing::FixtureStore(); }
  static void TearDownTestSuite() { delete fixture_; }

  std::unique_ptr<IkeaAttack> Attack(const ChatClient* llm = nullptr) {
    IkeaOptions options{.embedder = &embedder_, .llm = llm};
    if (llm == nullptr) {
      auto wordnet = WordNetGraph::Shared("/usr/share/wordnet");
      EXPECT_TRUE(wordnet.ok()) << wordnet.status();
      if (wordnet.ok()) options.wordnet = *wordnet;
    } else {
      options.topics = {"health"};
      options.anchors_per_topic = 5;
    }
    auto attack = IkeaAttack::Create(options);
    EXPECT_TRUE(attack.ok()) << attack.status();
    return attack.ok() ? *std::move(attack) : nullptr;
  }
  AttackSession Run(IkeaAttack& attack, uint64_t seed, int queries = 64) {
    SeededCsprng rng = SessionRng(seed, "ikea", 0);
    StoreExtractionTarget target = fixture_->Target();
    auto session = attack.Run(target, "ikea", {.queries = queries, .k = 4}, rng);
    EXPECT_TRUE(session.ok()) << session.status();
    return session.ok() ? *session : AttackSession{};
  }

  LexicalEmbedder embedder_{nullptr};
  static testing::FixtureStore* fixture_;
};
testing::FixtureStore* IkeaTest::fixture_ = nullptr;

TEST_F(IkeaTest, QuestionsLookBenignYetLeak) {
  auto attack = Attack();
  ASSERT_NE(attack, nullptr);
  const AttackSession session = Run(*attack, 1);
  ASSERT_EQ(session.steps.size(), 64u);
  absl::flat_hash_set<std::string> ids_so_far;
  int mutations = 0;
  for (const AttackStep& step : session.steps) {
    EXPECT_FALSE(HasCommandWord(step.query)) << step.query;
    if (!step.source_id.empty()) {
      EXPECT_TRUE(ids_so_far.contains(step.source_id)) << "a mutation follows a memory that was shown";
      ++mutations;
    }
    for (const RetrievedText& hit : step.hits) ids_so_far.insert(hit.id);
  }
  const testing::BenignLeakage benign = testing::BenignBaseline(*fixture_, 64);
  std::printf(
      "IKEA 64 rounds, k = 4, 300 memories: unique %zu (benign mean %.1f, max %zu); %d mutation rounds\n",
      session.UniqueHits(), benign.mean, benign.max, mutations);
  EXPECT_GT(mutations, 8);
  // More than one new memory per round. Not more than benign users, though: the lexical embedder
  // weighs the question template's words as much as the one anchor word, and benign questions are
  // about memories that exist (measured 95 against a benign mean of 131; doc/attacks.md).
  EXPECT_GT(session.UniqueHits(), 64u);
}

TEST_F(IkeaTest, SameSeedSameSessionOtherSeedOtherSession) {
  auto attack = Attack();
  ASSERT_NE(attack, nullptr);
  const AttackSession a = Run(*attack, 3, 10), b = Run(*attack, 3, 10), c = Run(*attack, 4, 10);
  bool differs = false;
  for (size_t i = 0; i < a.steps.size(); ++i) {
    EXPECT_EQ(a.steps[i].query, b.steps[i].query);
    differs = differs || a.steps[i].query != c.steps[i].query;
  }
  EXPECT_TRUE(differs);
}

TEST_F(IkeaTest, LlmPathGeneratesAnchorsAndQuestions) {
  bulwark::testing::LoopbackChatServer server;
  ASSERT_TRUE(server.running());
  server.SetContent([](const nlohmann::json& request) {
    const std::string prompt = bulwark::testing::LoopbackChatServer::LastUserContent(request);
    if (prompt.find("very general questions") != std::string::npos) {
      return std::string(
          R"({"questions": ["How is my health routine going?", "Any news on my doctor visits?"]})");
    }
    return std::string(R"({"words": ["doctor", "dentist", "gym", "yoga", "vitamins"]})");
  });
  auto llm = ChatClient::Create(
      {.endpoint = {.url = server.url(), .timeout_ms = 5000, .max_retries = 0}, .model = "test-model"});
  ASSERT_TRUE(llm.ok()) << llm.status();
  auto attack = Attack(llm->get());
  ASSERT_NE(attack, nullptr);
  const AttackSession session = Run(*attack, 5, 4);
  ASSERT_EQ(session.steps.size(), 4u);
  for (const AttackStep& step : session.steps) {
    EXPECT_TRUE(step.query == "How is my health routine going?" ||
                step.query == "Any news on my doctor visits?")
        << step.query;
  }
  EXPECT_GE(server.requests(), 5);  // Gen_c for the topic, then Gen_q for every round
}

TEST_F(IkeaTest, CreateNeedsAnEmbedderAndAGenerator) {
  EXPECT_EQ(IkeaAttack::Create({}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(IkeaAttack::Create({.embedder = &embedder_}).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace bulwark::extraction
