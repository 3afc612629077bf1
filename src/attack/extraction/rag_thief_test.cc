// RAG-Thief (rag_thief.h) on the 300-memory fixture: round 1 is the initial adversarial query;
// every later query continues from a chunk that leaked earlier (it quotes that chunk's first or
// last tokens, or is a restart when nothing new is queued) and so keeps finding new memories; the
// LLM path asks the loopback chat server for the continuations.
#include "attack/extraction/rag_thief.h"

#include <absl/container/flat_hash_map.h>
#include <gtest/gtest.h>

#include "attack/extraction/extraction_fixture.h"
#include "attack/extraction/text_terms.h"
#include "testing/chat_server.h"

namespace bulwark::extraction {
namespace {

class RagThiefTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { fixture_ = new testing::FixtureStore(); }
  static void TearDownTestSuite() { delete fixture_; }

  AttackSession Run(RagThiefAttack& attack, uint64_t seed, int queries = 64) {
    SeededCsprng rng = SessionRng(seed, "rag_thief", 0);
    StoreExtractionTarget target = fixture_->Target();
    auto session = attack.Run(target, "rt", {.queries = queries, .k = 4}, rng);
    EXPECT_TRUE(session.ok()) << session.status();
    return session.ok() ? *session : AttackSession{};
  }
  static std::shared_ptr<const WordNetGraph> Wordnet() {
    auto wordnet = WordNetGraph::Shared("/usr/share/wordnet");
    EXPECT_TRUE(wordnet.ok()) << wordnet.status();
    return wordnet.ok() ? *wordnet : nullptr;
  }
  static testing::FixtureStore* fixture_;
};
testing::FixtureStore* RagThiefTest::fixture_ = nullptr;

TEST_F(RagThiefTest, ContinuesFromLeakedChunks) {
  RagThiefAttack attack({.wordnet = Wordnet()});
  const AttackSession session = Run(attack, 1);
  ASSERT_EQ(session.steps.size(), 64u);
  EXPECT_EQ(session.steps[0].query, kRagThiefInitialQuery);
  absl::flat_hash_map<std::string, std::string> leaked;  // id -> text, returned before this step
  const std::string command = kRagThiefCommand;
  int continued = 0;
  for (const AttackStep& step : session.steps) {
    if (!step.source_id.empty()) {
      ASSERT_TRUE(leaked.contains(step.source_id)) << "continues from a chunk that leaked earlier";
      const std::string& chunk = leaked[step.source_id];
      ASSERT_EQ(step.query.substr(0, command.size()), command);
      const std::string anchor = step.query.substr(command.size());
      EXPECT_TRUE(anchor.find(FirstTokens(chunk, 8)) != std::string::npos ||
                  anchor.find(LastTokens(chunk, 8)) != std::string::npos)
          << anchor << " | " << chunk;
      ++continued;
    }
    for (const RetrievedText& hit : step.hits) leaked[hit.id] = hit.text;
  }
  EXPECT_GE(continued, 56) << "nearly every round continues from a chunk";
  const testing::BenignLeakage benign = testing::BenignBaseline(*fixture_, 64);
  std::printf(
      "RAG-Thief 64 rounds, k = 4, 300 memories: unique %zu (benign mean %.1f, max %zu); %d continuations\n",
      session.UniqueHits(), benign.mean, benign.max, continued);
  // Under the lexical embedder the 150-character command outweighs an 8-token anchor, so each round
  // also returns the memories nearest the command (and the anchor chunk itself): measured 65 unique
  // memories against 131 for benign sessions of 64 turns (doc/attacks.md). What the algorithm
  // claims, continuing from what leaked, still holds: most rounds bring a new memory.
  EXPECT_GE(session.UniqueHits(), 48u);
}

TEST_F(RagThiefTest, OverlapAnchorsAloneStillContinue) {
  RagThiefAttack attack({});  // no WordNet: overlap anchors only
  const AttackSession session = Run(attack, 2, 16);
  for (size_t i = 1; i < session.steps.size(); ++i) EXPECT_FALSE(session.steps[i].source_id.empty()) << i;
  EXPECT_GT(session.UniqueHits(), 16u);
}

TEST_F(RagThiefTest, SameSeedSameSession) {
  RagThiefAttack attack({.wordnet = Wordnet()});
  const AttackSession a = Run(attack, 3, 12), b = Run(attack, 3, 12);
  ASSERT_EQ(a.steps.size(), b.steps.size());
  for (size_t i = 0; i < a.steps.size(); ++i) EXPECT_EQ(a.steps[i].query, b.steps[i].query);
}

TEST_F(RagThiefTest, LlmPathAsksForContinuations) {
  bulwark::testing::LoopbackChatServer server;
  ASSERT_TRUE(server.running());
  server.SetContent([](const nlohmann::json&) {
    return std::string(
        R"({"continuations": ["dentist appointment on Friday", "the quarterly report is due"]})");
  });
  auto llm = ChatClient::Create(
      {.endpoint = {.url = server.url(), .timeout_ms = 5000, .max_retries = 0}, .model = "test-model"});
  ASSERT_TRUE(llm.ok()) << llm.status();
  RagThiefAttack attack({.llm = llm->get()});
  const AttackSession session = Run(attack, 4, 5);
  ASSERT_EQ(session.steps.size(), 5u);
  EXPECT_EQ(server.requests(), 4);  // one reflection per round after the first
  for (size_t i = 1; i < session.steps.size(); ++i) {
    const std::string tail = session.steps[i].query.substr(std::string(kRagThiefCommand).size());
    EXPECT_TRUE(tail == "dentist appointment on Friday" || tail == "the quarterly report is due") << tail;
  }
  const std::string prompt = bulwark::testing::LoopbackChatServer::LastUserContent(server.bodies()[0]);
  EXPECT_NE(prompt.find(session.steps[0].hits[0].text), std::string::npos) << "the chunk is quoted";
}

}  // namespace
}  // namespace bulwark::extraction
