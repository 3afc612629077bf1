#include "detect/watermark.h"

#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>

#include "detect/siphash.h"
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

std::vector<uint8_t> Key(uint8_t fill) { return std::vector<uint8_t>(32, fill); }

TEST(SipHashTest, ReferenceVectors) {
  // Aumasson and Bernstein, "SipHash: a fast short-input PRF", Appendix A: key 00..0f, message
  // 00..(len-1).
  SipHashKey key;
  for (int i = 0; i < 16; ++i) key[static_cast<size_t>(i)] = static_cast<uint8_t>(i);
  std::string message;
  for (int i = 0; i < 15; ++i) message.push_back(static_cast<char>(i));
  EXPECT_EQ(SipHash24(key, message), 0xa129ca6149be45e5ull);
  EXPECT_EQ(SipHash24(key, ""), 0x726fdb47dd0e0e31ull);
  EXPECT_EQ(SipHash24(key, message.substr(0, 8)), 0x93f5f5799a932462ull);
}

TEST(WatermarkTest, PValueIsTheExactPoissonBinomialTail) {
  // Against enumeration of all 2^n green patterns.
  const std::vector<double> p = {0.5, 0.5, 3.0 / 7, 0.4, 0.5, 1.0 / 3, 0.5};
  for (size_t g = 0; g <= p.size(); ++g) {
    double tail = 0;
    for (uint32_t pattern = 0; pattern < (1u << p.size()); ++pattern) {
      double prob = 1;
      for (size_t i = 0; i < p.size(); ++i) prob *= (pattern >> i & 1) ? p[i] : 1 - p[i];
      if (static_cast<size_t>(__builtin_popcount(pattern)) >= g) tail += prob;
    }
    const WatermarkScore s = ScoreGreenSites(p, g);
    EXPECT_NEAR(s.p_value, tail, 1e-12) << g;
    if (s.p_value < 0.5) {
      EXPECT_NEAR(0.5 * std::erfc(s.z / std::sqrt(2.0)), s.p_value, 1e-9) << g;  // z = Phi^-1(1 - p)
    }
  }
  // Four two-way sites all green: p = 1/16 <= 1 - Phi(1.5) = 0.0668 verifies; three do not (1/8).
  EXPECT_TRUE(WatermarkScheme::Verifies(ScoreGreenSites(std::vector<double>(4, 0.5), 4), 1.5));
  EXPECT_FALSE(WatermarkScheme::Verifies(ScoreGreenSites(std::vector<double>(3, 0.5), 3), 1.5));
  EXPECT_NEAR(ScoreGreenSites(std::vector<double>(4, 0.5), 4).z, 1.5341, 1e-4);
  const WatermarkScore none = ScoreGreenSites({}, 0);
  EXPECT_EQ(none.p_value, 1);
  EXPECT_EQ(none.z, 0);
}

TEST(WatermarkTest, EachSiteHasItsGreenFraction) {
  auto scheme = LexicalWatermarkScheme::Create(Key(2), 0.45);
  ASSERT_THAT(scheme, IsOk());
  EXPECT_FALSE(LexicalWatermarkScheme::Create(Key(2), 0.0).ok());
  EXPECT_FALSE(LexicalWatermarkScheme::Create(Key(2), 1.0).ok());
  const auto sites = WatermarkLexicon::Default().Sites("Do not be late: the call is at 4pm on June 1.");
  ASSERT_EQ(sites.size(), 3u);
  for (const auto& s : sites) {
    const int green = __builtin_popcount(scheme->GreenMask(s.group, 0));
    EXPECT_EQ(green, std::max(1, static_cast<int>(std::floor(0.45 * s.group.size))));
    EXPECT_DOUBLE_EQ(scheme->GreenFraction(s.group), static_cast<double>(green) / s.group.size);
  }
  // Over many keys each variant is green about as often as any other.
  std::vector<int> counts(sites[1].group.size, 0);
  for (const auto& key : RandomKeys(2000, 1)) {
    const uint32_t mask = LexicalWatermarkScheme::Create(key, 0.45)->GreenMask(sites[1].group, 0);
    for (int v = 0; v < sites[1].group.size; ++v) counts[static_cast<size_t>(v)] += mask >> v & 1;
  }
  for (int c : counts) EXPECT_NEAR(c / 2000.0, scheme->GreenFraction(sites[1].group), 0.05);
}

TEST(WatermarkTest, UnmarkedParagraphsFailAndMarkedOnesPass) {
  int trials = 0, marked_ok = 0, unmarked_failed = 0, other_key_passes = 0;
  for (const auto& key : RandomKeys(16, 7)) {
    auto scheme = LexicalWatermarkScheme::Create(key, 0.45);
    ASSERT_THAT(scheme, IsOk());
    auto other = LexicalWatermarkScheme::Create(RandomKeys(1, key[0] + 1000u)[0], 0.45);
    for (const std::string& text : Paragraphs()) {
      ASSERT_GE(text.size(), 300u);
      ASSERT_LE(text.size(), 800u);
      const bool unmarked_passes = WatermarkScheme::Verifies(scheme->Score(text), 1.5);
      const MarkedText marked = MarkText(text, *scheme, 1.5);
      ++trials;
      unmarked_failed += !unmarked_passes;
      // Every paragraph has the channel: with all its sites green it verifies, whatever the key.
      EXPECT_TRUE(WatermarkScheme::Verifies(marked.best, 1.5)) << text;
      EXPECT_TRUE(marked.reached_target) << text << "\n-> " << marked.text;
      marked_ok += marked.reached_target;
      EXPECT_TRUE(WatermarkScheme::Verifies(scheme->Score(marked.text), 1.5));
      EXPECT_DOUBLE_EQ(marked.after.z, scheme->Score(marked.text).z);
      EXPECT_EQ(marked.edits.empty(), unmarked_passes);  // edits only when needed
      // Every edit is visible: applying the edits to the original reproduces the marked text.
      std::string rebuilt;
      size_t pos = 0;
      for (const auto& e : marked.edits) {
        ASSERT_GE(e.offset, pos);
        ASSERT_EQ(text.substr(e.offset, e.before.size()), e.before);
        rebuilt += text.substr(pos, e.offset - pos) + e.after;
        pos = e.offset + e.before.size();
      }
      rebuilt += text.substr(pos);
      EXPECT_EQ(rebuilt, marked.text);
      // Under another key the marked text is as good as unmarked.
      other_key_passes += WatermarkScheme::Verifies(other->Score(marked.text), 1.5);
    }
  }
  EXPECT_EQ(marked_ok, trials);                   // the marker's success rate: all of them
  EXPECT_GE(unmarked_failed, trials * 85 / 100);  // unmarked text passes only by chance (<= 6.7%)
  EXPECT_LE(other_key_passes, trials * 15 / 100);
}

// Notes of 300-800 bytes: consecutive benign memories joined until 300 bytes (over 800: dropped).
std::vector<std::string> BenignNotes() {
  std::vector<std::string> notes;
  std::string note;
  for (const auto& m : BenignMemories()) {
    note = note.empty() ? m : note + " " + m;
    if (note.size() >= 300) {
      if (note.size() <= 800) notes.push_back(note);
      note.clear();
    }
  }
  return notes;
}

// Knowledge-base paragraphs: each enterprise scenario's supporting passages, joined.
std::vector<std::string> EnterpriseParagraphs() {
  std::ifstream in(std::string(BULWARK_SOURCE_DIR) + "/data/corpora/enterprise_scenarios.jsonl");
  std::vector<std::string> out;
  std::string line;
  while (std::getline(in, line)) {
    std::string paragraph;
    const nlohmann::json scenario =
        nlohmann::json::parse(line);  // a named copy: no reference into a temporary
    for (const auto& p : scenario["supporting_passages"]) {
      paragraph += (paragraph.empty() ? "" : " ") + p.get<std::string>();
    }
    out.push_back(paragraph);
  }
  return out;
}

// The probability that unmarked `text` verifies under a random key: P(G >= g*) for the smallest
// green count g* that verifies (0 if none does).
double ExactFalseAcceptance(const LexicalWatermarkScheme& scheme, const std::string& text) {
  std::vector<double> p;
  for (const auto& s : scheme.ScoredSites(text)) p.push_back(scheme.GreenFraction(s.site.group));
  for (size_t g = 0; g <= p.size(); ++g) {
    const WatermarkScore score = ScoreGreenSites(p, g);
    if (WatermarkScheme::Verifies(score, 1.5)) return score.p_value;
  }
  return 0;
}

// Unmarked benign text verifies at most at the nominal rate 1 - Phi(1.5) = 0.0668, and at the
// exact rate the test predicts: 1,400 benign memories (data/corpora) under 16 random keys, and
// 335 notes of 300-800 bytes made of consecutive memories.
TEST(WatermarkTest, UnmarkedBenignTextVerifiesAtMostAtTheNominalRate) {
  std::vector<std::string> memories = BenignMemories(), notes = BenignNotes(),
                           enterprise = EnterpriseParagraphs();
  ASSERT_EQ(memories.size(), 1400u);
  const double nominal = 0.5 * std::erfc(1.5 / std::sqrt(2.0));
  const auto keys = RandomKeys(64, 21);
  std::vector<LexicalWatermarkScheme> schemes;
  for (const auto& key : keys) schemes.push_back(*LexicalWatermarkScheme::Create(key, 0.45));
  for (const std::vector<std::string>* corpus : {&memories, &notes, &enterprise}) {
    size_t trials = 0, passes = 0, markable = 0;
    double expected = 0;  // per text, whatever the key
    for (const auto& text : *corpus) {
      expected += ExactFalseAcceptance(schemes.front(), text);
      markable += WatermarkScheme::Verifies(MarkText(text, schemes.front(), 1.5).best, 1.5);
      for (const auto& scheme : schemes) {
        ++trials;
        passes += WatermarkScheme::Verifies(scheme.Score(text), 1.5);
      }
    }
    const double rate = static_cast<double>(passes) / trials, expected_rate = expected / corpus->size();
    // Texts share sites (the first serial comma, "do not"), so under one key their outcomes are
    // correlated: the tolerance is 6 binomial standard deviations rather than 3.
    const double sd = std::sqrt(expected_rate * (1 - expected_rate) / (64.0 * corpus->size()));
    const char* name = corpus == &memories ? "benign memories"
                       : corpus == &notes  ? "notes of 300-800 bytes"
                                           : "enterprise paragraphs";
    std::cout << name << ": unmarked pass rate " << rate << " (" << passes << " of " << trials
              << "), exact expectation " << expected_rate << ", nominal " << nominal << "; markable "
              << markable << " of " << corpus->size() << "\n";
    EXPECT_LE(expected_rate, nominal);
    EXPECT_NEAR(rate, expected_rate, 6 * sd + 1e-9);
    if (corpus == &notes) {
      EXPECT_GE(markable, corpus->size() * 6 / 10);
    }
  }
}

// Whether a text can be marked does not depend on the key: every markable note and enterprise
// paragraph is marked and verifies under each of 16 keys.
TEST(WatermarkTest, EveryMarkableTextIsMarkedUnderEveryKey) {
  std::vector<std::string> texts = BenignNotes();
  for (auto& p : EnterpriseParagraphs()) texts.push_back(std::move(p));
  size_t markable = 0, marked = 0;
  for (const auto& key : RandomKeys(16, 31)) {
    auto scheme = LexicalWatermarkScheme::Create(key, 0.45);
    for (const auto& text : texts) {
      const MarkedText m = MarkText(text, *scheme, 1.5);
      if (!WatermarkScheme::Verifies(m.best, 1.5)) {
        EXPECT_EQ(m.text, text);
        continue;
      }
      ++markable;
      marked += m.reached_target && WatermarkScheme::Verifies(scheme->Score(m.text), 1.5);
      EXPECT_TRUE(m.reached_target) << text << "\n-> " << m.text;
    }
  }
  std::cout << marked << " of " << markable << " markable (text, key) pairs marked\n";
  EXPECT_EQ(marked, markable);
  EXPECT_GT(markable, 16 * texts.size() / 2);
}

TEST(WatermarkTest, TextWithoutEnoughChannelIsLeftUnchanged) {
  auto scheme = LexicalWatermarkScheme::Create(Key(3), 0.45);
  for (const char* text :
       {"Hi", "Call Bob at 5pm.", "Dentist appointment on Tuesday with Dr. Lee; do not be late."}) {
    const MarkedText marked = MarkText(text, *scheme, 1.5);
    EXPECT_FALSE(WatermarkScheme::Verifies(marked.best, 1.5)) << text;
    EXPECT_FALSE(marked.reached_target) << text;
    EXPECT_EQ(marked.text, text);
    EXPECT_TRUE(marked.edits.empty());
  }
}

TEST(WatermarkTest, EditsKeepCaseAndArticles) {
  const std::string text =
      "Do not go. It is an 8pm call; I am here. COLOUR is fine. We bought apples, pears, and plums. Last "
      "year we "
      "went to Porto on June 1 at 4pm and I do not regret it.";
  std::set<std::string> seen;
  for (const auto& key : RandomKeys(64, 11)) {
    const MarkedText marked = MarkText(text, *LexicalWatermarkScheme::Create(key, 0.45), 1.5);
    ASSERT_TRUE(marked.reached_target);
    for (const auto& e : marked.edits) {
      seen.insert(e.before);
      if (e.before == "Do not") {
        EXPECT_EQ(e.after, "Don't");
      } else if (e.before == "I am") {
        EXPECT_EQ(e.after, "I'm");
      } else if (e.before == "COLOUR") {
        EXPECT_EQ(e.after, "COLOR");
      } else if (e.before == "an 8pm") {  // the article follows the new first sound
        EXPECT_EQ(e.after, "a 20:00");
      } else if (e.before == "8pm") {
        EXPECT_TRUE(e.after == "8 pm" || e.after == "8:00pm" || e.after == "8:00 pm") << e.after;
      }
      if (e.before == ". C") ADD_FAILURE() << "'COLOUR' is not a sentence starter";
    }
  }
  for (const char* before : {"Do not", "I am", "COLOUR"}) EXPECT_TRUE(seen.count(before)) << before;
}

// What the marker writes, the detector reads: every variant of every group, rendered into a
// sentence, scans back as the same group and variant.
TEST(WatermarkLexiconTest, EveryVariantScansBack) {
  const WatermarkLexicon& lexicon = WatermarkLexicon::Default();
  auto expect_round_trip = [&](const std::string& prefix, const std::string& sample,
                               const std::string& suffix) {
    const std::string text = prefix + sample + suffix;
    const auto sites = lexicon.Sites(text);
    const VariantSite* at = nullptr;
    for (const auto& s : sites) {
      if (s.begin == prefix.size()) at = &s;
    }
    ASSERT_NE(at, nullptr) << "no site at '" << sample << "' in: " << text;
    for (int v = 0; v < at->group.size; ++v) {
      const std::string variant = lexicon.Render(*at, text, v);
      const std::string rewritten = prefix + variant + suffix;
      const auto back = lexicon.Sites(rewritten);
      const VariantSite* found = nullptr;
      for (const auto& s : back) {
        if (s.begin == prefix.size()) found = &s;
      }
      ASSERT_NE(found, nullptr) << "variant '" << variant << "' is not read back in: " << rewritten;
      EXPECT_EQ(found->group.key, at->group.key) << rewritten;
      EXPECT_EQ(found->variant, v) << rewritten;
      EXPECT_EQ(found->end, prefix.size() + variant.size()) << rewritten;
      EXPECT_EQ(back.size(), sites.size()) << rewritten;
    }
  };
  for (const auto& group : lexicon.word_groups()) {
    // Inside a sentence, before an ordinary word.
    expect_round_trip("Note that ", group.front(), " works here.");
  }
  for (int minutes : {0, 9 * 60 + 5, 10 * 60, 12 * 60, 12 * 60 + 30, 16 * 60, 23 * 60 + 59}) {
    const int h24 = minutes / 60, h12 = h24 % 12 == 0 ? 12 : h24 % 12;
    char sample[16];
    std::snprintf(sample, sizeof sample, "%d:%02d%s", h12, minutes % 60, h24 >= 12 ? "pm" : "am");
    expect_round_trip("The call is at ", sample, " today.");
  }
  for (const char* date : {"January 1", "May 5", "June 30", "September 22", "December 31"}) {
    expect_round_trip("It happens on ", date, ", as planned.");
  }
  for (int n : {2, 9, 10, 21, 47, 99}) expect_round_trip("We need ", std::to_string(n), " chairs for it.");
  expect_round_trip("The volume is capped at ", "70%", " tonight.");
  expect_round_trip("Book it with ", "Dr.", " Lee soon.");
  expect_round_trip("We bought apples, pears", ", ", "and plums.");
  expect_round_trip("The meeting moved to Thursday", ". ", "The room is booked.");
  expect_round_trip("Last year", " ", "we went to Porto.");
}

TEST(WatermarkLexiconTest, NotInsideAddressesNamesRangesOrAmbiguousContractions) {
  const WatermarkLexicon& lexicon = WatermarkLexicon::Default();
  for (const char* text :
       {"Write to email@example.com today", "See https://example.com/colour now", "Open colour.txt now",
        "A colour-coded map", "We met on Harbour Street again", "Lunch 3-4pm daily",
        "Lunch from 3 to 4pm daily", "Away 1 to 3 June only", "Due June 1, 2026 at noon",
        "Since then it's been quiet", "Please let us know soon", "Version 3 adds charts",
        "Room 3 needs chairs", "Call at 10:30 tomorrow", "Call at 4 p.m. tomorrow",
        "There was a while to wait"}) {
    std::string found;
    for (const auto& s : lexicon.Sites(text))
      found += "[" + std::string(text).substr(s.begin, s.end - s.begin) + "]";
    EXPECT_EQ(found, "") << text;
  }
}

TEST(WatermarkLexiconTest, FormsBelongToOneGroup) {
  std::set<std::string> forms;
  for (const auto& group : WatermarkLexicon::Default().word_groups()) {
    EXPECT_GE(group.size(), 2u);
    for (const auto& f : group) {
      std::string lower = f;
      for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      EXPECT_TRUE(forms.insert(lower).second) << f;
    }
  }
}

}  // namespace
}  // namespace bulwark
