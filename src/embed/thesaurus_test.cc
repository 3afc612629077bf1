// Tests of the Aiksaurus thesaurus loader (embed/thesaurus.h): heads and members of a hand-built
// thesaurus, multi-word and upper-case entries, every malformed-file case refused with DataLoss,
// and the Debian files when installed.
#include "embed/thesaurus.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "testing/status_matchers.h"

namespace bulwark {
namespace {

using ::bulwark::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

void AppendId(uint16_t id, std::string* out) {
  out->push_back(static_cast<char>(id >> 8));
  out->push_back(static_cast<char>(id & 0xFF));
}

std::string IdList(const std::vector<uint16_t>& ids) {
  std::string out;
  for (const uint16_t id : ids) AppendId(id, &out);
  AppendId(0xFFFF, &out);
  return out;
}

std::string WordRecord(std::string_view word, const std::vector<uint16_t>& meanings) {
  std::string out(word);
  out.push_back('\0');
  return out + IdList(meanings);
}

// Words: 0 beverage, 1 drink, 2 espresso, 3 latte, 4 Java, 5 cold:brew, 6 coffee.
// Meanings: 0 = titles (drink, beverage), members {beverage, drink, espresso, latte}
//           1 = titles (coffee, java), members {cold:brew, coffee, espresso, java}.
std::string Words() {
  return WordRecord("beverage", {0}) + WordRecord("drink", {0}) + WordRecord("espresso", {0, 1}) +
         WordRecord("latte", {0}) + WordRecord("Java", {1}) + WordRecord("cold:brew", {1}) +
         WordRecord("coffee", {1});
}
std::string Meanings() { return IdList({1, 0, 0, 1, 2, 3}) + IdList({6, 4, 5, 6, 2, 4}); }

std::vector<std::string> Heads(const Thesaurus& t, std::string_view word) {
  std::vector<std::string> out;
  t.ForEachHead(word, [&](uint32_t id) { out.emplace_back(t.term(id)); });
  return out;
}
std::vector<std::string> Members(const Thesaurus& t, std::string_view word) {
  std::vector<std::string> out;
  t.ForEachMember(word, [&](uint32_t id) { out.emplace_back(t.term(id)); });
  return out;
}

TEST(ThesaurusTest, AWordReachesTheHeadsAndMembersOfItsMeanings) {
  absl::StatusOr<std::shared_ptr<const Thesaurus>> t = Thesaurus::Parse(Words(), Meanings());
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)->meaning_count(), 2u);
  EXPECT_THAT(Heads(**t, "espresso"), UnorderedElementsAre("drink", "beverage", "coffee", "java"));
  EXPECT_THAT(Heads(**t, "latte"), UnorderedElementsAre("drink", "beverage"));
  // A head is not its own head; the upper-case "Java" is the word "java".
  EXPECT_THAT(Heads(**t, "coffee"), UnorderedElementsAre("java"));
  EXPECT_THAT(Members(**t, "latte"), UnorderedElementsAre("drink", "beverage", "espresso"));
  // The multi-word entry is neither a key nor a member.
  EXPECT_FALSE((*t)->Contains("cold:brew"));
  EXPECT_THAT(Members(**t, "java"), UnorderedElementsAre("coffee", "espresso"));
  EXPECT_TRUE(Heads(**t, "tea").empty());
}

TEST(ThesaurusTest, MalformedFilesAreDataLoss) {
  const std::string words = Words(), meanings = Meanings();
  const auto parse_error = [](std::string_view w, std::string_view m) {
    return Thesaurus::Parse(w, m).status();
  };
  EXPECT_THAT(parse_error(words, meanings.substr(0, meanings.size() - 1)),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("meanings.dat")));
  EXPECT_THAT(parse_error(words.substr(0, words.size() - 3), meanings),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("words.dat")));
  EXPECT_THAT(parse_error(words + "x", meanings), StatusIs(absl::StatusCode::kDataLoss, HasSubstr("NUL")));
  EXPECT_THAT(parse_error(words + WordRecord("", {0}), meanings), StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(parse_error(words + WordRecord("bad word", {0}), meanings),
              StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(parse_error(words + WordRecord(std::string(Thesaurus::kMaxWordBytes + 1, 'a'), {0}), meanings),
              StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(parse_error(words + WordRecord("tea", {2}), meanings),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("out of range")));
  EXPECT_THAT(parse_error(words, meanings + IdList({0, 99})),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("out of range")));
  EXPECT_THAT(parse_error(words, meanings + IdList({0})),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("two titles")));
  const std::vector<uint16_t> many(Thesaurus::kMaxMeaningsPerWord + 1, 0);
  EXPECT_THAT(parse_error(words + WordRecord("tea", many), meanings), StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_TRUE(Thesaurus::Parse("", "").ok());
}

TEST(ThesaurusTest, MissingDirectoryIsNotFound) {
  EXPECT_THAT(Thesaurus::Shared("/nonexistent/bulwark-thesaurus").status(),
              StatusIs(absl::StatusCode::kNotFound));
}

TEST(ThesaurusTest, DebianFilesLoad) {
  const std::string dir(Thesaurus::kDefaultDir);
  if (!std::filesystem::exists(std::filesystem::path(dir) / "words.dat")) {
    GTEST_SKIP() << "the thesaurus (Debian libaiksaurus-1.2-data) is not installed";
  }
  absl::StatusOr<std::shared_ptr<const Thesaurus>> t = Thesaurus::Shared(dir);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_GT((*t)->term_count(), 20'000u);
  EXPECT_GT((*t)->meaning_count(), 2'000u);
  // "sip" is listed under the meaning headed "drink".
  EXPECT_THAT(Heads(**t, "sip"), ::testing::Contains("drink"));
}

}  // namespace
}  // namespace bulwark
