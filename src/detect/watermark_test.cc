#include "detect/watermark.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>

#include "detect/watermark_marker.h"
#include "embed/synonym_table.h"

namespace bulwark {
namespace {

std::vector<uint8_t> Key(uint8_t fill) { return std::vector<uint8_t>(32, fill); }

const char kText[] =
    "Remember that the quarterly planning meeting moved to Thursday afternoon in the large conference room. "
    "Bring the printed budget summary, do not forget the updated headcount figures, and let us ask the finance "
    "team whether the travel allowance for the spring conference is still approved. I am also supposed to "
    "confirm the catering order and the colour of the new team shirts before Friday. After the meeting, "
    "schedule a short call with the vendor about the delayed shipment of office chairs, check whether the "
    "parking permits for the visitors have arrived, and write a brief note to the manager explaining why the "
    "launch date cannot move again. It is important that the whole group understands the new plan.";

TEST(WatermarkTest, ZScoreIsTheFormula) {
  auto scheme = WatermarkScheme::Create(Key(1), 0.45);
  ASSERT_TRUE(scheme.ok());
  EXPECT_NEAR(scheme->gamma(), 43.0 / 95, 1e-12);
  const std::string text = "Call Bob at 5pm. Call Bob.";  // the repeated pairs count once
  std::set<std::pair<unsigned char, unsigned char>> pairs;
  size_t green = 0;
  unsigned char prev = 0;
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (pairs.insert({prev == 0 ? 0 : prev, c}).second && scheme->IsGreen(prev, c)) ++green;
    prev = c;
  }
  const size_t n = pairs.size();
  EXPECT_EQ(n, 19u);
  const WatermarkScore s = scheme->Score(text);
  EXPECT_EQ(s.n, n);
  EXPECT_EQ(s.green, green);
  const double g = scheme->gamma();
  EXPECT_NEAR(s.z, (green - g * n) / std::sqrt(g * (1 - g) * n), 1e-12);
}

TEST(WatermarkTest, EachContextHasExactlyGammaGreen) {
  auto scheme = WatermarkScheme::Create(Key(2), 0.45);
  ASSERT_TRUE(scheme.ok());
  for (int prev : {0, int{' '}, int{'a'}, int{'~'}}) {
    int green = 0;
    for (int c = 0x20; c <= 0x7E; ++c) green += scheme->IsGreen(static_cast<unsigned char>(prev), static_cast<unsigned char>(c));
    EXPECT_EQ(green, 43) << prev;
  }
  EXPECT_FALSE(WatermarkScheme::Create(Key(2), 0.0).ok());
  EXPECT_FALSE(WatermarkScheme::Create(Key(2), 1.0).ok());
}

TEST(WatermarkTest, UnmarkedTextFailsAndMarkedTextPasses) {
  auto synonyms = SynonymTable::Shared();
  ASSERT_TRUE(synonyms.ok()) << synonyms.status();
  int passes_unmarked = 0;
  for (uint8_t k = 1; k <= 8; ++k) {
    auto scheme = WatermarkScheme::Create(Key(k), 0.45);
    ASSERT_TRUE(scheme.ok());
    const WatermarkScore before = scheme->Score(kText);
    passes_unmarked += before.z >= 1.5;
    const MarkedText marked = MarkText(kText, *scheme, synonyms->get(), 1.5);
    EXPECT_TRUE(marked.reached_target) << "key " << int{k} << " z " << marked.after.z;
    EXPECT_GE(scheme->Score(marked.text).z, 1.5);
    EXPECT_DOUBLE_EQ(marked.after.z, scheme->Score(marked.text).z);
    EXPECT_EQ(marked.edits.empty(), before.z >= 1.5);  // edits only when needed
    // Every edit is visible: applying the edits to the original reproduces the marked text.
    std::string rebuilt;
    size_t pos = 0;
    for (const auto& e : marked.edits) {
      ASSERT_EQ(std::string(kText).substr(e.offset, e.before.size()), e.before);
      rebuilt += std::string(kText).substr(pos, e.offset - pos) + e.after;
      pos = e.offset + e.before.size();
    }
    rebuilt += std::string(kText).substr(pos);
    EXPECT_EQ(rebuilt, marked.text);
    // A different key does not verify the marked text any better than chance.
    auto other = WatermarkScheme::Create(Key(static_cast<uint8_t>(k + 100)), 0.45);
    EXPECT_LT(other->Score(marked.text).z, 3.0);
  }
  EXPECT_LE(passes_unmarked, 2);  // unmarked text passes only by chance (P(z >= 1.5) ~ 7%)
}

TEST(WatermarkTest, ShortTextMayNotReachTheTarget) {
  auto scheme = WatermarkScheme::Create(Key(3), 0.45);
  const MarkedText marked = MarkText("Hi", *scheme, nullptr, 2.5);
  EXPECT_FALSE(marked.reached_target);
  EXPECT_EQ(marked.text, "Hi");
}

TEST(WatermarkTest, ContractionsKeepCase) {
  auto scheme = WatermarkScheme::Create(Key(4), 0.45);
  // Force every site: a target no text reaches.
  const MarkedText marked = MarkText("Do not go. I am here.", *scheme, nullptr, 1e9);
  for (const auto& e : marked.edits) {
    if (e.before == "Do not") {
      EXPECT_EQ(e.after, "Don't");
    }
    if (e.before == "I am") {
      EXPECT_EQ(e.after, "I'm");
    }
  }
}

}  // namespace
}  // namespace bulwark
