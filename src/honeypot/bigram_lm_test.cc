#include "honeypot/bigram_lm.h"

#include <gtest/gtest.h>

#include <cmath>

#include "embed/wordnet_canonicalizer.h"

namespace bulwark::honeypot {
namespace {

TEST(BigramLmTest, ConditionalsSumToOne) {
  const std::vector<std::string> corpus = {"the cat sat on the mat", "the dog sat on the log",
                                           "a cat and a dog"};
  auto lm = BigramLm::Train(corpus);
  ASSERT_TRUE(lm.ok()) << lm.status();
  EXPECT_EQ((*lm)->sentence_count(), 3u);
  EXPECT_EQ((*lm)->token_count(), 17u);
  EXPECT_GT((*lm)->discount(), 0.0);
  EXPECT_LT((*lm)->discount(), 1.0);
  for (std::string_view prev : {"<s>", "the", "sat", "dog", "unseen-word"}) {
    const int p = (*lm)->Id(prev);
    double total =
        std::exp((*lm)->LogProb(p, BigramLm::kEnd)) + std::exp((*lm)->LogProb(p, BigramLm::kUnknown));
    (*lm)->ForEachToken(
        [&](std::string_view w, uint32_t) { total += std::exp((*lm)->LogProb(p, (*lm)->Id(w))); });
    EXPECT_NEAR(total, 1.0, 1e-9) << prev;
  }
  // Seen continuations beat unseen ones.
  EXPECT_GT((*lm)->LogProb((*lm)->Id("the"), (*lm)->Id("cat")),
            (*lm)->LogProb((*lm)->Id("the"), (*lm)->Id("on")));
  EXPECT_EQ((*lm)->Count("the"), 4u);
  EXPECT_FALSE(BigramLm::Train(std::vector<std::string>{"", "!!"}).ok());
}

TEST(BigramLmTest, TokenizesLikeTheLexicalEmbedder) {
  EXPECT_EQ(BigramLm::Tokenize("Hello, World-42 x"), (std::vector<std::string>{"hello", "world", "42", "x"}));
}

TEST(BigramLmTest, WordNetModelPrefersFluentOrder) {
  if (!WordNetCanonicalizer::CheckDataPresent(std::string(WordNetCanonicalizer::kDefaultDir)).ok()) {
    GTEST_SKIP() << "wordnet-base is not installed";
  }
  auto sentences = BigramLm::WordNetSentences(std::string(WordNetCanonicalizer::kDefaultDir));
  ASSERT_TRUE(sentences.ok()) << sentences.status();
  EXPECT_GT(sentences->size(), 150000u);  // 117,659 glosses plus their examples
  auto lm = BigramLm::Train(*sentences);
  ASSERT_TRUE(lm.ok()) << lm.status();
  EXPECT_GT((*lm)->vocabulary_size(), 50000u);
  std::vector<std::string_view> fluent = {"a", "person", "who", "works", "in", "a", "hospital"};
  std::vector<std::string_view> shuffled = {"hospital", "a", "works", "who", "in", "person", "a"};
  EXPECT_GT((*lm)->MeanLogProb(fluent), (*lm)->MeanLogProb(shuffled) + 1.0);
  EXPECT_EQ(BigramLm::WordNetSentences("/nonexistent").status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace bulwark::honeypot
