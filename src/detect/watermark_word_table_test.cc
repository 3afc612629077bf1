// The watermark's word table, now data (data/watermark/word_groups.tsv compiled in), equals the
// table that was written in watermark_lexicon.cc before: same groups, order, preferences,
// contexts and variants. The digest below is SHA-256 of the old table dumped one group per line
// ("preference<TAB>context<TAB>variant<TAB>...\n") by the old WordGroupSpecs(); a change to the
// table changes marked texts and detector scores, so it must be deliberate.
#include "detect/watermark_word_table.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "core/hex.h"
#include "detect/watermark_lexicon.h"
#include "testing/status_matchers.h"

namespace bulwark {
namespace {

using ::bulwark::testing::IsOk;
using ::bulwark::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr size_t kOldGroupCount = 243;
constexpr char kOldTableSha256[] = "af4859239217bcfd538e0bdc0db58d376b1858a8f5ed438dff55c64d394a0165";

std::string Dump(const std::vector<WordGroupSpec>& groups) {
  std::string out;
  for (const WordGroupSpec& g : groups) {
    out += std::to_string(g.preference) + "\t" + (g.before_word ? "before_word" : "-");
    for (const std::string& form : g.forms) out += "\t" + form;
    out += "\n";
  }
  return out;
}

TEST(WatermarkWordTableTest, CompiledInTableEqualsTheOldInlineTable) {
  auto groups = ParseWordGroupTable(DefaultWordGroupTable());
  ASSERT_THAT(groups, IsOk());
  EXPECT_EQ(groups->size(), kOldGroupCount);
  EXPECT_EQ(Sha256Hex(Dump(*groups)), kOldTableSha256);
  // A few groups by hand: the first, a context-restricted one, an interchangeable-word one.
  EXPECT_THAT(groups->front().forms, ElementsAre("do not", "don't"));
  EXPECT_EQ(groups->front().preference, 0);
  bool saw_it_is = false;
  for (const WordGroupSpec& g : *groups) {
    if (g.forms.front() == "it is") {
      saw_it_is = true;
      EXPECT_TRUE(g.before_word);
    }
    if (g.forms.front() == "someone") {
      EXPECT_EQ(g.preference, 3);
    }
  }
  EXPECT_TRUE(saw_it_is);
}

TEST(WatermarkWordTableTest, TheLexiconUsesTheTable) {
  auto groups = ParseWordGroupTable(DefaultWordGroupTable());
  ASSERT_THAT(groups, IsOk());
  const auto& lexicon_groups = WatermarkLexicon::Default().word_groups();
  ASSERT_EQ(lexicon_groups.size(), groups->size());
  for (size_t i = 0; i < groups->size(); ++i) EXPECT_EQ(lexicon_groups[i], (*groups)[i].forms);
}

TEST(WatermarkWordTableTest, MalformedLinesAreRefusedWithTheirLineNumber) {
  EXPECT_THAT(ParseWordGroupTable("# only a comment\n"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("no groups")));
  EXPECT_THAT(ParseWordGroupTable("0\t-\tcolour\tcolor\n4\t-\ta\tb\n"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("line 2: preference")));
  EXPECT_THAT(ParseWordGroupTable("0\tmaybe\ta\tb\n"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("context")));
  EXPECT_THAT(ParseWordGroupTable("0\t-\tonly\n"), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ParseWordGroupTable("0\t-\ta\t\n"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("empty variant")));
  EXPECT_THAT(ParseWordGroupTable("0\t-\ta\tb\tc\td\te\tf\tg\th\n"),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace bulwark
