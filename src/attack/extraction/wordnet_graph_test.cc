// WordNetGraph (wordnet_graph.h) on Debian's WordNet 3.0: senses in frequency order, hypernym and
// hyponym edges, sister terms two hops away, lexicographer files, and a clear error for a missing
// directory.
#include "attack/extraction/wordnet_graph.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace bulwark::extraction {
namespace {

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST(WordNetGraphTest, SensesRelationsAndLexFiles) {
  auto graph = WordNetGraph::Shared("/usr/share/wordnet");
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_GT((*graph)->size(), 80000u);  // 82,115 noun synsets in WordNet 3.0
  const std::vector<int32_t> dog = (*graph)->Senses("Dog");
  ASSERT_FALSE(dog.empty());
  const WordNetGraph::Synset& first = (*graph)->synset(dog[0]);
  EXPECT_TRUE(Contains(first.lemmas, "dog"));
  EXPECT_EQ(WordNetGraph::LexFileName(first.lexfile), "noun.animal");
  EXPECT_NE(first.gloss.find("domesticated"), std::string::npos) << first.gloss;
  EXPECT_FALSE((*graph)->Senses("hot dog").empty());
  EXPECT_TRUE((*graph)->Senses("qwxzv").empty());

  const std::vector<std::string> one_hop = (*graph)->RelatedLemmas("dog", 1, 200, 1);
  EXPECT_TRUE(Contains(one_hop, "canine")) << "hypernym";
  EXPECT_TRUE(Contains(one_hop, "puppy")) << "hyponym";
  EXPECT_FALSE(Contains(one_hop, "dog"));
  EXPECT_FALSE(Contains(one_hop, "wolf")) << "a sister term is two hops away";
  EXPECT_TRUE(Contains((*graph)->RelatedLemmas("dog", 2, 1000, 1), "wolf"));
  EXPECT_EQ((*graph)->RelatedLemmas("dog", 2, 5).size(), 5u);
}

TEST(WordNetGraphTest, MissingDirectoryIsNotFound) {
  EXPECT_EQ(WordNetGraph::Shared("/nonexistent").status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace bulwark::extraction
