#include "detect/char_watermark.h"

#include <absl/strings/ascii.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <set>
#include <string>
#include <utility>

#include "detect/watermark_lexicon.h"
#include "detect/watermark_marker.h"
#include "detect/watermark_test_texts.h"
#include "testing/status_matchers.h"

namespace bulwark {
namespace {

using ::bulwark::testing::IsOk;

using watermark_test_texts::BenignMemories;
using watermark_test_texts::Paragraphs;
using watermark_test_texts::RandomKeys;

std::vector<uint8_t> FilledCharKey(uint8_t fill) { return std::vector<uint8_t>(32, fill); }

std::string LowerCopy(std::string_view s) { return absl::AsciiStrToLower(std::string(s)); }

// The score recomputed from IsGreen alone: each distinct (previous, character) pair of printable
// characters once, the previous character taken as "other" when it is not printable.
WatermarkScore BruteForceCharScore(const CharWatermarkScheme& scheme, std::string_view text) {
  auto printable = [](unsigned char c) { return c >= 0x20 && c <= 0x7E; };
  std::set<std::pair<int, int>> pairs;
  WatermarkScore score;
  unsigned char prev = 0;
  for (char ch : text) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (printable(c) && pairs.insert({printable(prev) ? prev : -1, c}).second) {
      ++score.n;
      score.green += scheme.IsGreen(prev, c);
    }
    prev = c;
  }
  // gamma_eff from the green lists themselves: the green characters of the start context / 95.
  int green_per_context = 0;
  for (int c = 0x20; c <= 0x7E; ++c) green_per_context += scheme.IsGreen(0, static_cast<unsigned char>(c));
  const double gamma = green_per_context / 95.0, n = static_cast<double>(score.n);
  if (score.n > 0) {
    score.z = (static_cast<double>(score.green) - gamma * n) / std::sqrt(gamma * (1 - gamma) * n);
    score.p_value = 0.5 * std::erfc(score.z / std::sqrt(2.0));
  }
  return score;
}

TEST(CharWatermarkTest, ScoreEqualsABruteForceRecountFromIsGreen) {
  std::vector<std::string> texts = Paragraphs();
  texts.push_back("");
  texts.push_back("aaaa aaaa");
  texts.push_back("Caf\xc3\xa9 at 9am\nthen\tthe office; caf\xc3\xa9 again.\r\n~{|}");
  for (double gamma : {0.25, 0.45, 0.5, 0.8}) {
    for (const auto& key : RandomKeys(4, 5)) {
      auto scheme = CharWatermarkScheme::Create(key, gamma);
      ASSERT_TRUE(scheme.ok()) << scheme.status();
      const int g = static_cast<int>(std::lround(gamma * 95));
      EXPECT_EQ(scheme->green_count(), g);
      EXPECT_DOUBLE_EQ(scheme->gamma(), g / 95.0);
      // Every context has exactly G green printable characters, and no other byte is green.
      for (int prev = 0; prev < 256; ++prev) {
        int green = 0;
        for (int c = 0; c < 256; ++c) {
          const bool is_green =
              scheme->IsGreen(static_cast<unsigned char>(prev), static_cast<unsigned char>(c));
          if (c < 0x20 || c > 0x7E) {
            EXPECT_FALSE(is_green);
          }
          green += is_green;
        }
        ASSERT_EQ(green, g) << prev;
      }
      for (const auto& text : texts) {
        const WatermarkScore fast = scheme->Score(text), slow = BruteForceCharScore(*scheme, text);
        EXPECT_EQ(fast.n, slow.n) << text;
        EXPECT_EQ(fast.green, slow.green) << text;
        EXPECT_NEAR(fast.z, slow.z, 1e-12) << text;
        EXPECT_NEAR(fast.p_value, slow.p_value, 1e-12) << text;
        EXPECT_NEAR(fast.expected, scheme->gamma() * static_cast<double>(fast.n), 1e-9);
      }
    }
  }
  // The empty text: nothing counted, nothing verifies.
  const WatermarkScore empty = CharWatermarkScheme::Create(FilledCharKey(1), 0.45)->Score("");
  EXPECT_EQ(empty.n, 0u);
  EXPECT_EQ(empty.z, 0);
  EXPECT_EQ(empty.p_value, 1);
  EXPECT_FALSE(WatermarkScheme::Verifies(empty, -1.0));
}

TEST(CharWatermarkTest, GreenListsDependOnTheKeyAndTheContext) {
  auto a = CharWatermarkScheme::Create(FilledCharKey(1), 0.45);
  auto b = CharWatermarkScheme::Create(FilledCharKey(2), 0.45);
  auto a_again = CharWatermarkScheme::Create(FilledCharKey(1), 0.45);
  int differ_by_key = 0, differ_by_context = 0, same_as_itself = 0;
  for (int c = 0x20; c <= 0x7E; ++c) {
    const auto ch = static_cast<unsigned char>(c);
    differ_by_key += a->IsGreen('e', ch) != b->IsGreen('e', ch);
    differ_by_context += a->IsGreen('e', ch) != a->IsGreen('t', ch);
    same_as_itself += a->IsGreen('e', ch) == a_again->IsGreen('e', ch);
  }
  EXPECT_GT(differ_by_key, 20);  // two independent 43-of-95 lists differ in about 47 places
  EXPECT_GT(differ_by_context, 20);
  EXPECT_EQ(same_as_itself, 95);
  // Every byte that is not printable ASCII is the same "other" context as the start.
  for (int c = 0x20; c <= 0x7E; ++c) {
    const auto ch = static_cast<unsigned char>(c);
    EXPECT_EQ(a->IsGreen(0, ch), a->IsGreen('\n', ch));
    EXPECT_EQ(a->IsGreen(0, ch), a->IsGreen(0xC3, ch));
  }
}

TEST(CharWatermarkTest, GammaIsValidated) {
  const auto key = FilledCharKey(3);
  for (double gamma : {0.0, 1.0, -0.1, 1.5, 0.004, 0.996, std::numeric_limits<double>::quiet_NaN()}) {
    auto scheme = CharWatermarkScheme::Create(key, gamma);
    ASSERT_FALSE(scheme.ok()) << gamma;
    EXPECT_EQ(scheme.status().code(), absl::StatusCode::kInvalidArgument) << gamma;
  }
  EXPECT_EQ(CharWatermarkScheme::Create(key, 0.01)->green_count(), 1);   // round(0.95)
  EXPECT_EQ(CharWatermarkScheme::Create(key, 0.99)->green_count(), 94);  // round(94.05)
  EXPECT_EQ(CharWatermarkScheme::Create(key, 0.45)->green_count(), 43);  // round(42.75)
  // Through the factory the gate uses.
  auto scheme = CreateWatermarkScheme(WatermarkKind::kCharacter, key, 0.45);
  ASSERT_THAT(scheme, IsOk());
  EXPECT_EQ((*scheme)->kind(), WatermarkKind::kCharacter);
  EXPECT_EQ((*scheme)->name(), "character");
  EXPECT_FALSE(CreateWatermarkScheme(WatermarkKind::kCharacter, key, 0.004).ok());
  EXPECT_TRUE(CreateWatermarkScheme(WatermarkKind::kLexical, key, 0.004).ok());  // lexical: any (0, 1)
  EXPECT_EQ(ParseWatermarkKind("character").value(), WatermarkKind::kCharacter);
  EXPECT_EQ(ParseWatermarkKind("lexical").value(), WatermarkKind::kLexical);
  EXPECT_EQ(ParseWatermarkKind("Character").status().code(), absl::StatusCode::kInvalidArgument);
}

// For the character scheme, Verifies is the documented rule: z >= z_threshold (with a green pair).
TEST(CharWatermarkTest, VerifiesIffZReachesTheThreshold) {
  size_t checked = 0;
  for (const auto& key : RandomKeys(8, 9)) {
    auto scheme = CharWatermarkScheme::Create(key, 0.45);
    for (const auto& text : Paragraphs()) {
      const WatermarkScore s = scheme->Score(text);
      for (double threshold : {-2.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0, s.z}) {
        EXPECT_EQ(WatermarkScheme::Verifies(s, threshold), s.green > 0 && s.z >= threshold)
            << s.z << " " << threshold;
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 8u * Paragraphs().size() * 9);
}

// Unmarked benign text scores z ~ N(0, 1) under random keys: mean near 0, standard deviation near
// 1, and the share that verifies near the nominal 1 - Phi(1.5) = 0.0668.
TEST(CharWatermarkTest, UnmarkedBenignTextScoresNearZero) {
  const std::vector<std::string> memories = BenignMemories();
  ASSERT_EQ(memories.size(), 1400u);
  std::vector<CharWatermarkScheme> schemes;
  for (const auto& key : RandomKeys(64, 41)) schemes.push_back(*CharWatermarkScheme::Create(key, 0.45));
  for (const std::vector<std::string>* corpus : {&Paragraphs(), &memories}) {
    double sum = 0, sum_squares = 0;
    size_t trials = 0, passes = 0, pairs = 0, min_pairs = SIZE_MAX, max_pairs = 0;
    for (const auto& scheme : schemes) {
      for (const auto& text : *corpus) {
        const WatermarkScore s = scheme.Score(text);
        pairs += s.n;
        min_pairs = std::min(min_pairs, s.n);
        max_pairs = std::max(max_pairs, s.n);
        sum += s.z;
        sum_squares += s.z * s.z;
        passes += WatermarkScheme::Verifies(s, 1.5);
        ++trials;
      }
    }
    const double mean = sum / static_cast<double>(trials);
    const double sd = std::sqrt(sum_squares / static_cast<double>(trials) - mean * mean);
    const double rate = static_cast<double>(passes) / static_cast<double>(trials);
    std::cout << (corpus == &memories ? "benign memories" : "paragraphs") << " under 64 keys: z mean " << mean
              << ", sd " << sd << "; unmarked pass rate " << rate << " (" << passes << " of " << trials
              << "); distinct pairs per text " << min_pairs << " to " << max_pairs << ", mean "
              << static_cast<double>(pairs) / static_cast<double>(trials) << "\n";
    EXPECT_LT(std::abs(mean), 0.25);
    EXPECT_GT(sd, 0.6);
    EXPECT_LT(sd, 1.3);
    EXPECT_LT(rate, 0.12);
  }
}

// Each edit of a marked text is a lexicon substitution: it covers one site of the original (with
// at most an "a"/"an" before it and the next word's first letter after a sentence join) and writes
// another variant of that site's group.
void ExpectEditsAreSubstitutions(const std::string& text, const MarkedText& marked) {
  const WatermarkLexicon& lexicon = WatermarkLexicon::Default();
  const std::vector<VariantSite> sites = lexicon.Sites(text);
  std::string rebuilt;
  size_t pos = 0;
  for (const auto& e : marked.edits) {
    ASSERT_GE(e.offset, pos);
    ASSERT_EQ(text.substr(e.offset, e.before.size()), e.before);
    EXPECT_NE(e.before, e.after);
    rebuilt += text.substr(pos, e.offset - pos) + e.after;
    pos = e.offset + e.before.size();
    bool is_substitution = false;
    for (const auto& s : sites) {
      if (s.begin < e.offset || s.end > pos || s.begin - e.offset > 3 || pos - s.end > 1) continue;
      for (int v = 0; v < s.group.size; ++v) {
        if (v != s.variant &&
            LowerCopy(e.after).find(LowerCopy(lexicon.Render(s, text, v))) != std::string::npos) {
          is_substitution = true;
        }
      }
    }
    EXPECT_TRUE(is_substitution) << "'" << e.before << "' -> '" << e.after << "' in: " << text;
  }
  rebuilt += text.substr(pos);
  EXPECT_EQ(rebuilt, marked.text);  // the marked text differs from the original only at the edits
  // And it reads back as the same groups: the substitutions stay in the channel.
  const std::vector<VariantSite> after = lexicon.Sites(marked.text);
  ASSERT_EQ(after.size(), sites.size()) << marked.text;
  for (size_t i = 0; i < sites.size(); ++i) EXPECT_EQ(after[i].group.key, sites[i].group.key) << marked.text;
}

// The marker reaches z >= 1.5 for few (paragraph, key) pairs (doc/write_gate.md has the numbers);
// every text it marks verifies under its key and differs from the original only by substitutions.
TEST(CharWatermarkTest, MarkedParagraphsVerifyForTheirKeyThroughSubstitutionsOnly) {
  size_t trials = 0, reached = 0;
  double gain = 0;
  for (const auto& key : RandomKeys(16, 7)) {
    auto scheme = CharWatermarkScheme::Create(key, 0.45);
    ASSERT_THAT(scheme, IsOk());
    for (const std::string& text : Paragraphs()) {
      const WatermarkScheme& as_interface = *scheme;
      const MarkedText marked = MarkText(text, as_interface, 1.5);
      ++trials;
      EXPECT_DOUBLE_EQ(marked.before.z, scheme->Score(text).z);
      EXPECT_EQ(marked.sites, WatermarkLexicon::Default().Sites(text).size());
      if (WatermarkScheme::Verifies(marked.before, 1.5)) {
        EXPECT_TRUE(marked.reached_target);
        EXPECT_TRUE(marked.edits.empty());
        continue;
      }
      if (!marked.reached_target) {  // left unchanged, with the best z the search found
        EXPECT_EQ(marked.text, text);
        EXPECT_TRUE(marked.edits.empty());
        EXPECT_LT(marked.best.z, 1.5);
        EXPECT_GE(marked.best.z, marked.before.z);
        continue;
      }
      ++reached;
      gain += marked.after.z - marked.before.z;
      EXPECT_TRUE(WatermarkScheme::Verifies(scheme->Score(marked.text), 1.5)) << marked.text;
      EXPECT_DOUBLE_EQ(marked.after.z, scheme->Score(marked.text).z);
      EXPECT_FALSE(marked.edits.empty());
      ExpectEditsAreSubstitutions(text, marked);
    }
  }
  std::cout << "character scheme: " << reached << " of " << trials
            << " (paragraph, key) pairs were marked from below to z >= 1.5 (mean gain "
            << (reached ? gain / static_cast<double>(reached) : 0) << ")\n";
  EXPECT_GE(reached, 8u);  // 12 with these keys when measured
}

// Measurements for doc/write_gate.md ("Character-level scheme"): the share of texts the marker
// brings to z >= 1.5 under 16 keys, and how often unmarked text verifies under 64 keys.
TEST(CharWatermarkTest, MarkableShareOnParagraphsAndBenignMemories) {
  const std::vector<std::string> memories = BenignMemories();
  ASSERT_EQ(memories.size(), 1400u);
  std::vector<CharWatermarkScheme> schemes;
  for (const auto& key : RandomKeys(16, 51)) schemes.push_back(*CharWatermarkScheme::Create(key, 0.45));
  for (const std::vector<std::string>* corpus : {&Paragraphs(), &memories}) {
    size_t trials = 0, verified_unmarked = 0, marked = 0, with_sites = 0;
    size_t searched = 0;  // texts with a site that do not verify unmarked
    double gain = 0;      // over them: the best z the search found - z unmarked
    for (const auto& scheme : schemes) {
      for (const auto& text : *corpus) {
        const MarkedText m = MarkText(text, scheme, 1.5);
        ++trials;
        with_sites += m.sites > 0;
        if (m.sites > 0 && !WatermarkScheme::Verifies(m.before, 1.5)) {
          ++searched;
          gain += m.best.z - m.before.z;
        }
        if (WatermarkScheme::Verifies(m.before, 1.5)) {
          ++verified_unmarked;
        } else if (m.reached_target) {
          ++marked;
          EXPECT_TRUE(WatermarkScheme::Verifies(scheme.Score(m.text), 1.5));
        } else {
          EXPECT_EQ(m.text, text);
        }
      }
    }
    std::cout << (corpus == &memories ? "1,400 benign memories" : "9 paragraphs")
              << " x 16 keys: " << verified_unmarked + marked << " of " << trials << " verify after marking ("
              << verified_unmarked << " already did unmarked, " << marked << " by marking); " << with_sites
              << " have a substitution site; mean z gain of the search where it ran "
              << gain / static_cast<double>(std::max<size_t>(searched, 1)) << " over " << searched << "\n";
    EXPECT_GT(verified_unmarked + marked, 0u);
  }
}

}  // namespace
}  // namespace bulwark
