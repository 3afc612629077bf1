// Tests of the WordNet gloss terms of the lexical index (LexicalTerms with HybridOptions::glosses)
// and of their retrieval_config keys: a memory's words carry their gloss neighbourhoods, a query's
// words meet them, so BM25 relates "what vehicle" to "I drive"; off, the terms are the words only.
#include "store/lexical_terms.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "index/bm25_index.h"
#include "store/hybrid_ranking.h"
#include "testing/status_matchers.h"

namespace bulwark {
namespace {

using ::bulwark::testing::StatusIs;
using ::testing::Contains;
using ::testing::Each;
using ::testing::Not;
using ::testing::StartsWith;

bool HaveWordNet() {
  return WordNetCanonicalizer::CheckDataPresent(std::string(WordNetCanonicalizer::kDefaultDir)).ok();
}

HybridOptions WithGlosses(double weight, double query_related = 0) {
  absl::StatusOr<HybridOptions> options = ParseRetrievalConfig(
      {{"glosses", true}, {"gloss_weight", weight}, {"gloss_query_related", query_related}});
  EXPECT_TRUE(options.ok()) << options.status();
  return options.ok() ? *options : HybridOptions{};
}

TEST(LexicalTermsGlossTest, GlossKeysAreParsedAndChecked) {
  absl::StatusOr<HybridOptions> defaults = ParseRetrievalConfig(nullptr);
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_FALSE(defaults->glosses);
  absl::StatusOr<HybridOptions> set = ParseRetrievalConfig(
      {{"glosses", true}, {"gloss_weight", 2}, {"gloss_query_related", 0.5}, {"gloss_senses", 3}});
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_TRUE(set->glosses);
  EXPECT_EQ(set->gloss_weight, 2);
  EXPECT_EQ(set->gloss_query_related, 0.5);
  EXPECT_EQ(set->gloss_senses, 3);
  for (const nlohmann::json& bad :
       {nlohmann::json{{"glosses", "yes"}}, nlohmann::json{{"gloss_weight", -1}},
        nlohmann::json{{"gloss_query_related", "0"}}, nlohmann::json{{"gloss_senses", 0}},
        nlohmann::json{{"gloss_senses", WordNetGlosses::kMaxSenses + 1}}}) {
    EXPECT_THAT(ParseRetrievalConfig(bad).status(), StatusIs(absl::StatusCode::kInvalidArgument))
        << bad.dump();
  }
}

TEST(LexicalTermsGlossTest, OffMeansWordsOnly) {
  const LexicalTerms terms(HybridOptions{});
  EXPECT_FALSE(terms.glosses_enabled());
  EXPECT_THAT(terms.Document("I drive a green Subaru"), Each(Not(StartsWith("^"))));
  const QueryTerms query = terms.Query("What vehicle do I own?");
  EXPECT_THAT(query.tokens, Each(Not(StartsWith("^"))));
  EXPECT_EQ(query.tokens.size(), query.weights.size());
}

TEST(LexicalTermsGlossTest, AQueryWordMeetsTheGlossOfAMemoryWord) {
  if (!HaveWordNet()) GTEST_SKIP() << "WordNet (Debian wordnet-base) is not installed";
  const LexicalTerms terms(WithGlosses(0.75));
  ASSERT_TRUE(terms.glosses_enabled());
  // drive (verb, first sense): "operate or control a vehicle".
  const std::vector<std::string> memory = terms.Document("I drive a green Subaru");
  EXPECT_THAT(memory, Contains("^vehicle"));
  EXPECT_THAT(memory, Contains("^drive"));
  const QueryTerms query = terms.Query("What vehicle do I own?");
  ASSERT_EQ(query.tokens.size(), query.weights.size());
  for (size_t i = 0; i < query.tokens.size(); ++i) {
    if (query.tokens[i] == "^vehicle") {
      EXPECT_EQ(query.weights[i], 0.75);
    }
  }
  EXPECT_THAT(query.tokens, Contains("^vehicle"));
  // Without query expansion the query asks for its own words' gloss terms only.
  EXPECT_THAT(query.tokens, Not(Contains("^conveyance")));
  EXPECT_EQ(WithGlosses(1, 0.5).gloss_query_related, 0.5);
  EXPECT_THAT(LexicalTerms(WithGlosses(1, 0.5)).Query("What vehicle do I own?").tokens,
              Contains("^conveyance"));  // vehicle: "a conveyance that transports people or objects"

  // Through BM25 the gloss term ranks the memory that shares no word with the query first.
  Bm25Index index;
  ASSERT_TRUE(index.Add(1, terms.Document("Tax appointment at the bank on March 28")).ok());
  ASSERT_TRUE(index.Add(2, terms.Document("I drive a green Subaru")).ok());
  ASSERT_TRUE(index.Add(3, terms.Document("Lunch with Bev on the last Friday of the month")).ok());
  const std::vector<Bm25Hit> hits = index.Search(query.tokens, 3, nullptr, nullptr, query.weights);
  ASSERT_FALSE(hits.empty());
  EXPECT_EQ(hits[0].id, 2);
}

// A query's question words are no BM25 terms by default (HybridOptions::query_question_words);
// a memory keeps every word, so its length is the same either way.
TEST(LexicalTermsQuestionWordsTest, AQueryDropsItsQuestionWordsUnlessAsked) {
  absl::StatusOr<HybridOptions> defaults = ParseRetrievalConfig(nullptr);
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_FALSE(defaults->query_question_words);
  const LexicalTerms terms(*defaults);
  const QueryTerms query = terms.Query("When does my flight leave?");
  EXPECT_EQ(query.tokens, (std::vector<std::string>{"my", "flight", "leav"}));
  EXPECT_EQ(query.weights, (std::vector<double>{1, 1, 1}));
  EXPECT_EQ(terms.Document("When does my flight leave?").size(), 5u);
  absl::StatusOr<HybridOptions> kept = ParseRetrievalConfig({{"query_question_words", true}});
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_EQ(LexicalTerms(*kept).Query("When does my flight leave?").tokens,
            (std::vector<std::string>{"when", "doe", "my", "flight", "leav"}));
  EXPECT_THAT(ParseRetrievalConfig({{"query_question_words", 1}}),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace bulwark
