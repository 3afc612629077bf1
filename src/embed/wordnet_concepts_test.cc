// Tests of WordNetConcepts on the real Debian WordNet 3.0 (skipped when /usr/share/wordnet is
// absent): the concept terms the lexical index gets for category-vs-instance pairs, the depth cut
// for generic concepts, and the refusal of a missing database.
#include "embed/wordnet_concepts.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

namespace bulwark {
namespace {

using ::testing::Contains;
using ::testing::IsEmpty;
using ::testing::Not;

class WordNetConceptsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!WordNetCanonicalizer::CheckDataPresent(std::string(WordNetCanonicalizer::kDefaultDir)).ok()) {
      GTEST_SKIP() << "WordNet (Debian wordnet-base) is not installed";
    }
    auto loaded = WordNetConcepts::Shared(std::string(WordNetCanonicalizer::kDefaultDir));
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    concepts_ = *loaded;
  }
  std::vector<std::string> Doc(std::string_view word, ConceptOptions options = {}) const {
    std::vector<std::string> out;
    concepts_->DocumentConcepts(word, options, &out);
    return out;
  }
  std::vector<std::string> Query(std::string_view word, ConceptOptions options = {}) const {
    std::vector<std::string> out;
    concepts_->QueryConcepts(word, options, &out);
    return out;
  }
  std::shared_ptr<const WordNetConcepts> concepts_;
};

TEST_F(WordNetConceptsTest, AnInstanceCarriesItsCategory) {
  // "beverage, drink, drinkable, potable" is the third noun sense of "drink" and the hypernym of
  // the first sense of "coffee".
  const std::string beverage = concepts_->SynsetTerm("beverage", WordNetPos::kNoun, 0);
  ASSERT_FALSE(beverage.empty());
  EXPECT_EQ(concepts_->SynsetTerm("drink", WordNetPos::kNoun, 2), beverage);
  EXPECT_THAT(Doc("coffee", {.senses = 1, .up = 1, .min_depth = 0}), Contains(beverage));
  EXPECT_THAT(Query("drink", {.senses = 3, .up = 0, .min_depth = 0}), Contains(beverage));
  EXPECT_THAT(Query("drink", {.senses = 1, .up = 0, .min_depth = 0}), Not(Contains(beverage)));
  // Inflected forms reach their lemma (morphy): "coffees" -> "coffee".
  EXPECT_EQ(Doc("coffees", {.senses = 1, .up = 1, .min_depth = 0}),
            Doc("coffee", {.senses = 1, .up = 1, .min_depth = 0}));
}

TEST_F(WordNetConceptsTest, UpLimitsTheHypernymLevels) {
  const ConceptOptions none{.senses = 1, .up = 0, .min_depth = 0};
  const ConceptOptions one{.senses = 1, .up = 1, .min_depth = 0};
  const std::vector<std::string> own = Doc("coffee", none);
  const std::vector<std::string> with_parent = Doc("coffee", one);
  EXPECT_EQ(own, std::vector<std::string>{concepts_->SynsetTerm("coffee", WordNetPos::kNoun, 0)});
  EXPECT_GT(with_parent.size(), own.size());
  for (const std::string& term : own) EXPECT_THAT(with_parent, Contains(term));
}

TEST_F(WordNetConceptsTest, GenericConceptsAreCutByDepth) {
  const std::string entity = concepts_->SynsetTerm("entity", WordNetPos::kNoun, 0);
  ASSERT_FALSE(entity.empty());
  EXPECT_EQ(concepts_->Depth(entity), 0);
  EXPECT_GT(concepts_->Depth(concepts_->SynsetTerm("coffee", WordNetPos::kNoun, 0)), 4);
  // Climbing all the way up from "coffee" reaches "entity" only when the depth cut allows it.
  EXPECT_THAT(Doc("coffee", {.senses = 1, .up = WordNetConcepts::kMaxUp, .min_depth = 0}), Contains(entity));
  const std::vector<std::string> cut =
      Doc("coffee", {.senses = 1, .up = WordNetConcepts::kMaxUp, .min_depth = 4});
  EXPECT_THAT(cut, Not(Contains(entity)));
  for (const std::string& term : cut) EXPECT_GE(concepts_->Depth(term), 4) << term;
  EXPECT_EQ(concepts_->Depth("~n"), -1);
  EXPECT_EQ(concepts_->Depth("coffee"), -1);
}

TEST_F(WordNetConceptsTest, SynonymsShareTheirSynsetAndEveryTermIsMarked) {
  const ConceptOptions own{.senses = 1, .up = 0, .min_depth = 0};
  // "automobile" is also a verb ("travel in an automobile"); its noun synset is the car's.
  EXPECT_EQ(Doc("car", own), std::vector<std::string>{concepts_->SynsetTerm("car", WordNetPos::kNoun, 0)});
  EXPECT_THAT(Doc("automobile", own), Contains(concepts_->SynsetTerm("car", WordNetPos::kNoun, 0)));
  for (const std::string& term : Doc("coffee", {.senses = 2, .up = 3, .min_depth = 0})) {
    ASSERT_GE(term.size(), 3u);
    EXPECT_EQ(term[0], WordNetConcepts::kPrefix);
  }
}

TEST_F(WordNetConceptsTest, StopwordsUnknownAndNonAsciiWordsAddNothing) {
  const ConceptOptions all{.senses = 3, .up = 3, .min_depth = 0};
  for (std::string_view word : {"the", "in", "who", "zzqxv", "caf\xc3\xa9", "Coffee", "ab", ""}) {
    EXPECT_THAT(Doc(word, all), IsEmpty()) << word;
    EXPECT_THAT(Query(word, all), IsEmpty()) << word;
  }
  EXPECT_THAT(Doc(std::string(WordNetCanonicalizer::kMaxWordBytes + 1, 'a'), all), IsEmpty());
}

TEST(WordNetConceptsLoad, AMissingDatabaseIsAnError) {
  const auto dir = std::filesystem::temp_directory_path() / "bulwark-no-wordnet-here";
  std::filesystem::remove_all(dir);
  auto loaded = WordNetConcepts::Shared(dir.string());
  EXPECT_FALSE(loaded.ok());
}

}  // namespace
}  // namespace bulwark
