// DGEA (dgea.h) on the 300-memory fixture: each optimized query moves away from what was already
// extracted (lower cosine to the centroid of the earlier hits than a random suffix reaches), so it
// leaks far more than the random-suffix ablation and more than the mean benign session of the same
// length, and it replays from its seed.
#include "attack/extraction/dgea.h"

#include <gtest/gtest.h>

#include "attack/extraction/extraction_fixture.h"
#include "embed/lexical_embedder.h"

namespace bulwark::extraction {
namespace {

class DgeaTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { fixture_ = new testing::FixtureStore(); }
  static void TearDownTestSuite() { delete fixture_; }

  std::unique_ptr<DgeaAttack> Attack(bool optimize) {
    auto wordnet = WordNetGraph::Shared("/usr/share/wordnet");
    EXPECT_TRUE(wordnet.ok()) << wordnet.status();
    auto attack = DgeaAttack::Create({.embedder = &embedder_, .wordnet = *wordnet, .optimize = optimize});
    EXPECT_TRUE(attack.ok()) << attack.status();
    return attack.ok() ? *std::move(attack) : nullptr;
  }
  AttackSession Run(DgeaAttack& attack, uint64_t seed, int queries = 64) {
    SeededCsprng rng = SessionRng(seed, "dgea", 0);
    StoreExtractionTarget target = fixture_->Target();
    auto session = attack.Run(target, "dgea", {.queries = queries, .k = 4}, rng);
    EXPECT_TRUE(session.ok()) << session.status();
    return session.ok() ? *session : AttackSession{};
  }
  // Mean over rounds t >= 2 of cos(E(q_t), centroid of the texts returned before t).
  double MeanCosineToExtracted(const AttackSession& session) {
    std::vector<double> sum(LexicalEmbedder::kDimension, 0);
    double total = 0;
    int n = 0;
    for (const AttackStep& step : session.steps) {
      const std::vector<float> q = *embedder_.Embed(step.query);
      double dot = 0, norm = 0;
      for (size_t i = 0; i < sum.size(); ++i) dot += sum[i] * q[i], norm += sum[i] * sum[i];
      if (norm > 0) total += dot / std::sqrt(norm), ++n;
      for (const RetrievedText& hit : step.hits) {
        const std::vector<float> e = *embedder_.Embed(hit.text);
        for (size_t i = 0; i < sum.size(); ++i) sum[i] += e[i];
      }
    }
    return n > 0 ? total / n : 0;
  }

  LexicalEmbedder embedder_{nullptr};
  static testing::FixtureStore* fixture_;
};
testing::FixtureStore* DgeaTest::fixture_ = nullptr;

TEST_F(DgeaTest, QueriesAreThePrefixAndAnOptimizedSuffix) {
  auto attack = Attack(true);
  ASSERT_NE(attack, nullptr);
  const AttackSession session = Run(*attack, 1, 8);
  ASSERT_EQ(session.steps.size(), 8u);
  const std::string prefix = kDgeaPrefix;
  for (const AttackStep& step : session.steps) {
    ASSERT_EQ(step.query.substr(0, prefix.size()), prefix);
    EXPECT_EQ(step.query.find('!', prefix.size()), std::string::npos)
        << "every suffix position improved: " << step.query;
  }
}

TEST_F(DgeaTest, QueriesMoveAwayFromWhatWasExtractedAndLeakMoreThanRandomSuffixes) {
  auto optimized = Attack(true);
  auto random = Attack(false);
  ASSERT_NE(optimized, nullptr);
  ASSERT_NE(random, nullptr);
  const AttackSession a = Run(*optimized, 2);
  const AttackSession r = Run(*random, 2);
  const double cos_optimized = MeanCosineToExtracted(a);
  const double cos_random = MeanCosineToExtracted(r);
  const testing::BenignLeakage benign = testing::BenignBaseline(*fixture_, 64);
  std::printf(
      "DGEA 64 rounds, k = 4, 300 memories: unique %zu (random suffix %zu; benign mean %.1f, max %zu); "
      "mean cos(query, extracted centroid) %.3f (random suffix %.3f)\n",
      a.UniqueHits(), r.UniqueHits(), benign.mean, benign.max, cos_optimized, cos_random);
  EXPECT_LT(cos_optimized, cos_random - 0.1);
  EXPECT_GT(a.UniqueHits(), r.UniqueHits() + 30);
  // More than a benign user of the same session length, on average (not more than the most
  // far-ranging benign session: measured 145 against a mean of 131 and a maximum of 151).
  EXPECT_GT(static_cast<double>(a.UniqueHits()), benign.mean);
}

TEST_F(DgeaTest, SameSeedSameQueries) {
  auto attack = Attack(true);
  ASSERT_NE(attack, nullptr);
  const AttackSession a = Run(*attack, 5, 6), b = Run(*attack, 5, 6), c = Run(*attack, 6, 6);
  ASSERT_EQ(a.steps.size(), 6u);
  for (size_t i = 0; i < a.steps.size(); ++i) EXPECT_EQ(a.steps[i].query, b.steps[i].query);
  EXPECT_NE(a.steps[0].query, c.steps[0].query);
}

TEST_F(DgeaTest, CreateRejectsMissingPieces) {
  EXPECT_EQ(DgeaAttack::Create({}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(DgeaAttack::Create({.embedder = &embedder_}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      DgeaAttack::Create(
          {.embedder = &embedder_, .vocabulary = {"a"}, .public_corpus = {"x", "y"}, .suffix_tokens = 0})
          .status()
          .code(),
      absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace bulwark::extraction
