// Tests of WordNetGlosses on the real Debian WordNet 3.0 (skipped when /usr/share/wordnet is
// absent): the gloss neighbourhoods that relate paraphrase pairs of the retrieval sets, the sense
// limit, and the refusal of a missing or damaged database.
#include "embed/wordnet_glosses.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "testing/status_matchers.h"

namespace bulwark {
namespace {

using ::bulwark::testing::StatusIs;
using ::testing::Contains;
using ::testing::IsEmpty;
using ::testing::Not;

class WordNetGlossesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!WordNetCanonicalizer::CheckDataPresent(std::string(WordNetCanonicalizer::kDefaultDir)).ok()) {
      GTEST_SKIP() << "WordNet (Debian wordnet-base) is not installed";
    }
    auto loaded = WordNetGlosses::Shared(std::string(WordNetCanonicalizer::kDefaultDir));
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    glosses_ = *loaded;
  }
  std::vector<std::string> Related(std::string_view word, int senses = 1) const {
    std::vector<std::string> out;
    glosses_->ForEachRelated(word, senses, [&](uint32_t id) { out.emplace_back(glosses_->word(id)); });
    return out;
  }
  std::shared_ptr<const WordNetGlosses> glosses_;
};

TEST_F(WordNetGlossesTest, DefinitionWordsRelateAParaphrasePair) {
  // drive (verb, sense 1): "operate or control a vehicle".
  EXPECT_THAT(Related("drive"), Contains("vehicle"));
  // penicillin: "any of various antibiotics obtained from Penicillium molds ...".
  EXPECT_THAT(Related("penicillin"), Contains("antibiotic"));
  // lawn: "a field of cultivated and mowed grass".
  EXPECT_THAT(Related("lawn"), Contains("grass"));
  // vegetarian: "eater of fruits and grains and nuts; someone who eats no meat or fish ...".
  EXPECT_THAT(Related("vegetarian"), Contains("meat"));
}

TEST_F(WordNetGlossesTest, HypernymAndDerivationLemmasJoin) {
  EXPECT_THAT(Related("coffee"), Contains("beverage"));   // hypernym and definition
  EXPECT_THAT(Related("vegetarian"), Contains("eater"));  // hypernym
  EXPECT_THAT(Related("drive"), Contains("driver"));      // derivation pointer
}

TEST_F(WordNetGlossesTest, ExamplesStopwordsAndUnknownWordsAddNothing) {
  EXPECT_THAT(Related("qwzxv"), IsEmpty());
  EXPECT_THAT(Related("drive"), Not(Contains("the")));
  // "able": "... to do something; \"able to swim\"": the example's "swim" is left out.
  EXPECT_THAT(Related("able"), Not(Contains("swim")));
}

TEST_F(WordNetGlossesTest, MoreSensesOnlyAddWords) {
  const std::vector<std::string> one = Related("drink", 1);
  const std::vector<std::string> three = Related("drink", 3);
  EXPECT_GT(three.size(), one.size());
  for (const std::string& word : one) EXPECT_THAT(three, Contains(word));
}

TEST(WordNetGlossesLoadTest, MissingOrDamagedDatabaseIsRefused) {
  EXPECT_FALSE(WordNetGlosses::Shared("/nonexistent/wordnet").ok());
  const std::string source(WordNetCanonicalizer::kDefaultDir);
  if (!WordNetCanonicalizer::CheckDataPresent(source).ok()) GTEST_SKIP() << "WordNet is not installed";
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "glosses_damaged";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  for (const auto& entry : std::filesystem::directory_iterator(source)) {
    std::filesystem::copy(entry.path(), dir / entry.path().filename());
  }
  // A line whose offset field is not its byte position.
  {
    std::ofstream append(dir / "data.adv", std::ios::app);
    append << "99999999 02 r 01 nowhere 0 001 \\ 00000001 a 0000 | points to a missing synset\n";
  }
  absl::StatusOr<std::shared_ptr<const WordNetGlosses>> damaged = WordNetGlosses::Shared(dir.string());
  EXPECT_THAT(damaged.status(), StatusIs(absl::StatusCode::kDataLoss));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace bulwark
