#include "honeypot/lexical_realizer.h"

#include <gtest/gtest.h>

#include <memory>

#include "bulwark/embedder.h"
#include "embed/embedder_factory.h"

namespace bulwark::honeypot {
namespace {

// Loads the WordNet LM, the lexical embedder (with synonyms) and the realiser once.
class LexicalRealizerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string dir(WordNetCanonicalizer::kDefaultDir);
    if (!WordNetCanonicalizer::CheckDataPresent(dir).ok()) return;
    auto embedder = CreateEmbedder({{"kind", "lexical"}});
    ASSERT_TRUE(embedder.ok()) << embedder.status();
    embedder_ = embedder->release();
    auto lm = BigramLm::TrainOnWordNet(dir);
    ASSERT_TRUE(lm.ok()) << lm.status();
    std::shared_ptr<const BigramLm> shared = *std::move(lm);
    auto wordnet = WordNetCanonicalizer::Shared(dir);
    ASSERT_TRUE(wordnet.ok()) << wordnet.status();
    auto realizer = LexicalRealizer::Create(*embedder_, shared,
                                            LexicalRealizer::DefaultVocabulary(*shared, wordnet->get()));
    ASSERT_TRUE(realizer.ok()) << realizer.status();
    realizer_ = realizer->release();
  }
  static void TearDownTestSuite() {
    delete realizer_;
    delete embedder_;
  }
  void SetUp() override {
    if (realizer_ == nullptr) GTEST_SKIP() << "wordnet-base is not installed";
  }
  static std::vector<float> Embed(std::string_view text) { return *embedder_->Embed(text); }
  static std::unique_ptr<PotTextGate> Gate(const std::vector<std::string>& memories, double bound) {
    std::vector<std::vector<float>> rows;
    for (const auto& m : memories) rows.push_back(Embed(m));
    auto gate = PotTextGate::Create(memories, ToMatrix(rows), bound);
    EXPECT_TRUE(gate.ok()) << gate.status();
    return gate.ok() ? *std::move(gate) : nullptr;
  }

  static inline Embedder* embedder_ = nullptr;
  static inline LexicalRealizer* realizer_ = nullptr;
};

TEST_F(LexicalRealizerTest, VocabularyIsPublicWordNetWords) {
  EXPECT_GT(realizer_->vocabulary_size(), 10000u);
  EXPECT_LT(realizer_->vocabulary_size(), 60000u);
}

TEST_F(LexicalRealizerTest, RealisesATargetCloselyAndPassesTheGates) {
  const std::vector<std::string> memories = {"Pick up the dry cleaning on Tuesday.",
                                             "The wifi password for the cabin is on the fridge."};
  auto gate = Gate(memories, 0.5);
  const std::vector<float> target = Embed("a stringed musical instrument played with a bow in an orchestra");
  auto pot = realizer_->Realize(target, *gate);
  ASSERT_TRUE(pot.ok()) << pot.status();
  EXPECT_TRUE(pot->passed) << pot->rejection << ": " << pot->text;
  RecordProperty("realised", pot->text);
  EXPECT_GT(pot->target_cos, 0.6) << pot->text;
  EXPECT_LT(pot->privacy_max, 0.5);
  EXPECT_GE(pot->readable, -1.0);
  EXPECT_LE(pot->readable, 0.0);
  EXPECT_GT(pot->words, 2);
  EXPECT_NEAR(
      pot->target_cos,
      [&] {
        const auto e = Embed(pot->text);
        double dot = 0;
        for (size_t i = 0; i < e.size(); ++i) dot += e[i] * target[i];
        return dot;
      }(),
      1e-5);
  // Deterministic.
  auto again = realizer_->Realize(target, *gate);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->text, pot->text);
}

TEST_F(LexicalRealizerTest, NeverCrossesThePrivacyBoundOrCopiesAMemory) {
  // The target IS a memory: the text must stay below the bound and copy no 4-gram of it.
  const std::vector<std::string> memories = {
      "The violin lesson with the orchestra teacher moved to the music hall on Thursday evening.",
      "Buy strings and rosin for the bow before the concert."};
  auto gate = Gate(memories, 0.45);
  auto pot = realizer_->Realize(Embed(memories[0]), *gate);
  ASSERT_TRUE(pot.ok()) << pot.status();
  if (pot->passed) {
    EXPECT_LT(pot->privacy_max, 0.45) << pot->text;
    EXPECT_EQ(gate->CopiedNgram(pot->text), "") << pot->text;
  } else {
    EXPECT_FALSE(pot->rejection.empty());
  }
  EXPECT_LT(gate->PrivacyMax(pot->embedding), 0.45 + 1e-6) << pot->text << " / " << pot->rejection;
}

TEST_F(LexicalRealizerTest, SafetyContentRaisesEntailment) {
  auto gate = Gate({"Call the plumber about the leaking kitchen tap."}, 0.6);
  const std::vector<float> target = Embed("ancient maps of mountain rivers and valleys");
  auto with = realizer_->Realize(target, *gate, "Geography: rivers, mountains, valleys, maps and atlases.");
  ASSERT_TRUE(with.ok()) << with.status();
  EXPECT_GT(with->entail, 0.0) << with->text;
  auto without = realizer_->Realize(target, *gate);
  ASSERT_TRUE(without.ok());
  EXPECT_EQ(without->entail, 0.0);
}

TEST_F(LexicalRealizerTest, RejectsAWrongDimension) {
  auto gate = Gate({"x y z"}, 0.5);
  EXPECT_EQ(realizer_->Realize(std::vector<float>(7, 0.1f), *gate).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace bulwark::honeypot
