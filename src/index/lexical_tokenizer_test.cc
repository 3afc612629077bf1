// LexicalTokenizer: words, lowercasing, stop words, Snowball stemming and the bounds.
#include "index/lexical_tokenizer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace bulwark {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(LexicalTokenizer, StemsAndDropsStopWords) {
  const LexicalTokenizer tokenizer;
  EXPECT_THAT(tokenizer.Tokens("When are my Dental appointments?"), ElementsAre("dental", "appoint"));
  EXPECT_THAT(tokenizer.Tokens("the appointment"), ElementsAre("appoint"));
  EXPECT_THAT(tokenizer.Tokens("Running 10k, 6:30 pm"), ElementsAre("run", "10k", "6", "30", "pm"));
}

TEST(LexicalTokenizer, OptionsOff) {
  const LexicalTokenizer tokenizer({.stem = false, .stop_words = false});
  EXPECT_THAT(tokenizer.Tokens("When are my appointments?"),
              ElementsAre("when", "are", "my", "appointments"));
}

TEST(LexicalTokenizer, QuestionWordsGoPronounsStay) {
  const LexicalTokenizer tokenizer({.stem = true, .stop_words = false, .question_words = true});
  EXPECT_THAT(tokenizer.Tokens("What time does my daughter go to sleep?"),
              ElementsAre("time", "my", "daughter", "go", "to", "sleep"));
  EXPECT_THAT(tokenizer.Tokens("When can I text you? Who is Bev?"), ElementsAre("i", "text", "you", "bev"));
  EXPECT_TRUE(IsLexicalQuestionWord("which"));
  EXPECT_FALSE(IsLexicalQuestionWord("my"));
  EXPECT_FALSE(IsLexicalQuestionWord("whatever"));
}

TEST(LexicalTokenizer, KeepsUtf8WordsWholeAndBoundsWords) {
  const LexicalTokenizer tokenizer({.stem = false, .stop_words = true});
  EXPECT_THAT(tokenizer.Tokens("Żurek pâté"), ElementsAre("Żurek", "pâté"));  // non-ASCII not lowercased
  EXPECT_THAT(tokenizer.Tokens(std::string(LexicalTokenizer::kMaxWordBytes + 1, 'a')), IsEmpty());
  EXPECT_THAT(tokenizer.Tokens(" ,.;"), IsEmpty());
  std::string many;
  for (size_t i = 0; i < LexicalTokenizer::kMaxTokens + 10; ++i) many += "word ";
  EXPECT_EQ(tokenizer.Tokens(many).size(), LexicalTokenizer::kMaxTokens);
}

// The stem memo changes nothing: a word stems the same the first time, when memoized, and after
// the memo was emptied (more distinct words than it holds).
TEST(LexicalTokenizer, StemMemoKeepsTheStems) {
  const LexicalTokenizer tokenizer;
  EXPECT_THAT(tokenizer.Tokens("appointments running"), ElementsAre("appoint", "run"));
  EXPECT_THAT(tokenizer.Tokens("appointments running"), ElementsAre("appoint", "run"));
  std::string words;
  for (int i = 0; i < 20000; ++i) words += "w" + std::to_string(i) + "ing ";
  EXPECT_EQ(tokenizer.Tokens(words).size(), LexicalTokenizer::kMaxTokens);
  for (int round = 0; round < 5; ++round) {
    std::string batch;
    for (int i = round * 4000; i < (round + 1) * 4000; ++i) batch += "w" + std::to_string(i) + "ing ";
    EXPECT_EQ(tokenizer.Tokens(batch).size(), 4000u);
  }
  EXPECT_THAT(tokenizer.Tokens("Appointments RUNNING"), ElementsAre("appoint", "run"));
}

}  // namespace
}  // namespace bulwark
