// Tests of the thesaurus association terms of the lexical index (LexicalTerms with
// HybridOptions::thesaurus) and of their retrieval_config keys: a memory's words carry the heads of
// their thesaurus meanings once per distinct word, a query's words meet them, so BM25 relates
// "what drink" to "an espresso" with a hand-built thesaurus; off or missing, no "%" term exists.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "index/bm25_index.h"
#include "store/hybrid_ranking.h"
#include "store/lexical_terms.h"
#include "testing/status_matchers.h"

namespace bulwark {
namespace {

using ::bulwark::testing::StatusIs;
using ::testing::Contains;
using ::testing::Each;
using ::testing::Not;
using ::testing::StartsWith;

bool HaveWordNetForThesaurus() {
  return WordNetCanonicalizer::CheckDataPresent(std::string(WordNetCanonicalizer::kDefaultDir)).ok();
}

std::string IdList(const std::vector<uint16_t>& ids) {
  std::string out;
  for (const uint16_t id : ids) {
    out.push_back(static_cast<char>(id >> 8));
    out.push_back(static_cast<char>(id & 0xFF));
  }
  return out + "\xFF\xFF";
}

// Aiksaurus-format files: words 0 drink, 1 espresso, 2 latte, 3 coffee, 4 beverage; meanings
// 0 = heads (drink, beverage) {espresso, latte}, 1 = heads (coffee, beverage) {espresso}.
std::string WriteThesaurus() {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("bulwark-thesaurus-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto word = [](std::string_view w, const std::vector<uint16_t>& m) {
    return std::string(w) + std::string(1, '\0') + IdList(m);
  };
  std::ofstream(dir / "words.dat", std::ios::binary)
      << word("drink", {0}) << word("espresso", {0, 1}) << word("latte", {0}) << word("coffee", {1})
      << word("beverage", {0, 1});
  std::ofstream(dir / "meanings.dat", std::ios::binary) << IdList({0, 4, 1, 2}) << IdList({3, 4, 1});
  return dir.string();
}

HybridOptions WithThesaurus(const nlohmann::json& extra = nlohmann::json::object()) {
  nlohmann::json config = {{"thesaurus", true}, {"thesaurus_weight", 0.75}};
  config.update(extra);
  absl::StatusOr<HybridOptions> options = ParseRetrievalConfig(config);
  EXPECT_TRUE(options.ok()) << options.status();
  return options.ok() ? *options : HybridOptions{};
}

int CountOf(const std::vector<std::string>& terms, std::string_view term) {
  return static_cast<int>(std::count(terms.begin(), terms.end(), term));
}

TEST(ThesaurusTermsTest, KeysAreParsedAndChecked) {
  absl::StatusOr<HybridOptions> defaults = ParseRetrievalConfig(nullptr);
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_FALSE(defaults->thesaurus);
  const HybridOptions set = WithThesaurus(
      {{"thesaurus_min_links", 2}, {"thesaurus_members", true}, {"thesaurus_query_related", 0.5}});
  EXPECT_TRUE(set.thesaurus);
  EXPECT_EQ(set.thesaurus_weight, 0.75);
  EXPECT_EQ(set.thesaurus_min_links, 2);
  EXPECT_TRUE(set.thesaurus_members);
  EXPECT_EQ(set.thesaurus_query_related, 0.5);
  for (const nlohmann::json& bad :
       {nlohmann::json{{"thesaurus", 1}}, nlohmann::json{{"thesaurus_weight", -1}},
        nlohmann::json{{"thesaurus_min_links", 0}}, nlohmann::json{{"thesaurus_min_links", 17}},
        nlohmann::json{{"thesaurus_members", "no"}}, nlohmann::json{{"thesaurus_query_related", -0.5}}}) {
    EXPECT_THAT(ParseRetrievalConfig(bad).status(), StatusIs(absl::StatusCode::kInvalidArgument))
        << bad.dump();
  }
}

TEST(ThesaurusTermsTest, OffOrMissingMeansNoThesaurusTerms) {
  const LexicalTerms off(HybridOptions{});
  EXPECT_FALSE(off.thesaurus_enabled());
  EXPECT_THAT(off.Document("An espresso after lunch"), Each(Not(StartsWith("%"))));
  const LexicalTerms missing(WithThesaurus(), std::string(WordNetCanonicalizer::kDefaultDir),
                             "/nonexistent/bulwark-thesaurus");
  EXPECT_FALSE(missing.thesaurus_enabled());
  EXPECT_THAT(missing.Query("What do I drink?").tokens, Each(Not(StartsWith("%"))));
}

TEST(ThesaurusTermsTest, AQueryWordMeetsTheHeadOfAMemoryWord) {
  if (!HaveWordNetForThesaurus()) GTEST_SKIP() << "WordNet (Debian wordnet-base) is not installed";
  const std::string dir = WriteThesaurus();
  const LexicalTerms terms(WithThesaurus(), std::string(WordNetCanonicalizer::kDefaultDir), dir);
  ASSERT_TRUE(terms.thesaurus_enabled());
  // "espressos" is listed as "espresso": heads drink, beverage (meaning 0), coffee (meaning 1);
  // beverage is one link although two meanings reach it.
  const std::vector<std::string> one = terms.Document("Two espressos after lunch");
  EXPECT_EQ(CountOf(one, "%drink"), 1);
  EXPECT_EQ(CountOf(one, "%beverage"), 1);
  EXPECT_EQ(CountOf(one, "%coffee"), 1);
  // Two distinct words pointing to "drink" count twice; a repeated word once.
  const std::vector<std::string> two = terms.Document("espresso, espresso or a latte");
  EXPECT_EQ(CountOf(two, "%drink"), 2);
  EXPECT_EQ(CountOf(two, "%coffee"), 1);
  const LexicalTerms two_links(WithThesaurus({{"thesaurus_min_links", 2}}),
                               std::string(WordNetCanonicalizer::kDefaultDir), dir);
  const std::vector<std::string> strict = two_links.Document("espresso, espresso or a latte");
  EXPECT_EQ(CountOf(strict, "%drink"), 2);
  EXPECT_EQ(CountOf(strict, "%coffee"), 0);

  const QueryTerms query = terms.Query("What do I drink after lunch?");
  ASSERT_EQ(query.tokens.size(), query.weights.size());
  bool asked = false;
  for (size_t i = 0; i < query.tokens.size(); ++i) {
    if (query.tokens[i] != "%drink") continue;
    asked = true;
    EXPECT_EQ(query.weights[i], 0.75);
  }
  EXPECT_TRUE(asked);

  // Through BM25 the association ranks the memory that shares no word with the query first.
  Bm25Index index;
  ASSERT_TRUE(index.Add(1, terms.Document("Tax appointment at the bank on March 28")).ok());
  ASSERT_TRUE(index.Add(2, terms.Document("A double espresso every morning")).ok());
  ASSERT_TRUE(index.Add(3, terms.Document("Lunch with Bev on the last Friday of the month")).ok());
  const QueryTerms drink = terms.Query("What do I drink?");
  const std::vector<Bm25Hit> hits = index.Search(drink.tokens, 3, nullptr, nullptr, drink.weights);
  ASSERT_FALSE(hits.empty());
  EXPECT_EQ(hits[0].id, 2);
  std::filesystem::remove_all(dir);
}

TEST(ThesaurusTermsTest, QueryExpansionAsksForTheQueryWordsHeads) {
  if (!HaveWordNetForThesaurus()) GTEST_SKIP() << "WordNet (Debian wordnet-base) is not installed";
  const std::string dir = WriteThesaurus();
  const LexicalTerms plain(WithThesaurus(), std::string(WordNetCanonicalizer::kDefaultDir), dir);
  EXPECT_THAT(plain.Query("Which latte?").tokens, Not(Contains("%beverage")));
  const LexicalTerms related(WithThesaurus({{"thesaurus_query_related", 0.5}}),
                             std::string(WordNetCanonicalizer::kDefaultDir), dir);
  const QueryTerms query = related.Query("Which latte?");
  ASSERT_EQ(query.tokens.size(), query.weights.size());
  bool asked = false;
  for (size_t i = 0; i < query.tokens.size(); ++i) {
    if (query.tokens[i] != "%beverage") continue;
    asked = true;
    EXPECT_EQ(query.weights[i], 0.75 * 0.5);
  }
  EXPECT_TRUE(asked);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace bulwark
