// Tests of BertTokenizer against known BERT splits: WordPiece greedy longest match with "##"
// continuations and [UNK], the 100-character rule, normalisation (lowercase, accents, control and
// whitespace characters, CJK, punctuation), truncation, and vocabulary checks.
#include "embed/bert/bert_tokenizer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace bulwark::bert {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr int kLargeVocab = 1000;

// Vocabulary lines: [PAD]=0 [UNK]=1 [CLS]=2 [SEP]=3, then the words.
std::string Vocab() {
  return "[PAD]\n[UNK]\n[CLS]\n[SEP]\nun\n##aff\n##able\nthe\nquick\nbrown\nfox\n##es\njump\n##ed\n##ing\n"
         "hello\n,\n!\n.\n?\n'\ns\nt\ndon\ncafe\nnaive\n中\n国\nwant\n##s\n##ing\na\n##a\n##b\nb\n"
         "\xC3\xA9\n";  // é (only reachable without lowercasing)
}

BertTokenizer Uncased() {
  absl::StatusOr<BertTokenizer> tokenizer =
      BertTokenizer::FromVocab(Vocab(), /*do_lower_case=*/true, kLargeVocab);
  EXPECT_TRUE(tokenizer.ok()) << tokenizer.status();
  return *std::move(tokenizer);
}

TEST(BertTokenizerTest, FindsSpecialTokens) {
  const BertTokenizer tokenizer = Uncased();
  EXPECT_EQ(tokenizer.unk_id(), 1);
  EXPECT_EQ(tokenizer.cls_id(), 2);
  EXPECT_EQ(tokenizer.sep_id(), 3);
  EXPECT_EQ(tokenizer.vocab_size(), 36);
}

TEST(BertTokenizerTest, GreedyLongestMatchWordPiece) {
  const BertTokenizer tokenizer = Uncased();
  // The example of BERT's WordpieceTokenizer docstring.
  EXPECT_THAT(tokenizer.Pieces("unaffable"), ElementsAre("un", "##aff", "##able"));
  EXPECT_THAT(tokenizer.Pieces("jumped foxes jumping"),
              ElementsAre("jump", "##ed", "fox", "##es", "jump", "##ing"));
  // Longest match first: "wants" is want + ##s, not w...; "aab" is a ##a ##b.
  EXPECT_THAT(tokenizer.Pieces("wants aab"), ElementsAre("want", "##s", "a", "##a", "##b"));
  // Any unmatched remainder turns the whole word into [UNK].
  EXPECT_THAT(tokenizer.Pieces("unaffablex the"), ElementsAre("[UNK]", "the"));
  EXPECT_THAT(tokenizer.Pieces("xyz"), ElementsAre("[UNK]"));
}

TEST(BertTokenizerTest, WordsOverOneHundredCharactersAreUnknown) {
  const BertTokenizer tokenizer = Uncased();
  const std::string hundred = "a" + std::string(99, 'b');  // a ##b x 99? ##b after a, then ##b ...
  EXPECT_EQ(tokenizer.Pieces(hundred).size(), 100u);
  EXPECT_THAT(tokenizer.Pieces(hundred + "b"), ElementsAre("[UNK]"));
  // Characters, not bytes, count: 100 two-byte "é" letters are still one word of 100 characters.
  std::string accented;
  for (int i = 0; i < 100; ++i) accented += "\xC3\xA9";
  EXPECT_THAT(tokenizer.Words(accented), ElementsAre(std::string(100, 'e')));
}

TEST(BertTokenizerTest, SplitsPunctuationAndWhitespace) {
  const BertTokenizer tokenizer = Uncased();
  EXPECT_THAT(
      tokenizer.Words("Hello, the quick!brown fox... don't?"),
      ElementsAre("hello", ",", "the", "quick", "!", "brown", "fox", ".", ".", ".", "don", "'", "t", "?"));
  EXPECT_THAT(tokenizer.Words("a\tb\nc\r\nd\xC2\xA0"
                              "e\xE3\x80\x80"
                              "f"),  // NBSP and ideographic space
              ElementsAre("a", "b", "c", "d", "e", "f"));
  // Non-ASCII punctuation (category P*): inverted question mark, guillemets, em dash.
  EXPECT_THAT(tokenizer.Words("\xC2\xBFque\xC2\xBB\xE2\x80\x94x"),
              ElementsAre("\xC2\xBF", "que", "\xC2\xBB", "\xE2\x80\x94", "x"));
  // ASCII symbols BERT counts as punctuation although Unicode calls them symbols: $ + < = > ^ ` | ~
  EXPECT_THAT(tokenizer.Words("a$b^c`d|e"), ElementsAre("a", "$", "b", "^", "c", "`", "d", "|", "e"));
  EXPECT_THAT(tokenizer.Words(" \t\n "), IsEmpty());
  EXPECT_THAT(tokenizer.Words(""), IsEmpty());
}

TEST(BertTokenizerTest, LowercasesAndStripsAccents) {
  const BertTokenizer tokenizer = Uncased();
  EXPECT_THAT(tokenizer.Pieces("Café NAÏVE"), ElementsAre("cafe", "naive"));
  EXPECT_THAT(tokenizer.Words("\xC4\xB0stanbul"), ElementsAre("istanbul"));  // U+0130 capital I with dot
  EXPECT_THAT(tokenizer.Words("ÅNGSTRÖM Ελληνικά"), ElementsAre("angstrom", "ελληνικα"));
  EXPECT_THAT(tokenizer.Words("e\xCC\x81"), ElementsAre("e"));  // a decomposed accent is dropped too

  absl::StatusOr<BertTokenizer> cased =
      BertTokenizer::FromVocab(Vocab(), /*do_lower_case=*/false, kLargeVocab);
  ASSERT_TRUE(cased.ok()) << cased.status();
  EXPECT_THAT(cased->Words("Café"), ElementsAre("Café"));
  EXPECT_THAT(cased->Pieces("\xC3\xA9 the The"), ElementsAre("\xC3\xA9", "the", "[UNK]"));
}

TEST(BertTokenizerTest, CjkCharactersAreWordsOfTheirOwn) {
  const BertTokenizer tokenizer = Uncased();
  EXPECT_THAT(tokenizer.Words("the中国fox"), ElementsAre("the", "中", "国", "fox"));
  EXPECT_THAT(tokenizer.Pieces("中国"), ElementsAre("中", "国"));
  // Hiragana is not in BERT's CJK blocks: it stays inside the word. Uncased BERT strips its voicing
  // mark too (が is か + U+3099, a nonspacing mark), as Hugging Face's tokenizer does.
  EXPECT_THAT(tokenizer.Words("ひらがな中"), ElementsAre("ひらかな", "中"));
}

TEST(BertTokenizerTest, DropsControlCharactersAndInvalidUtf8) {
  const BertTokenizer tokenizer = Uncased();
  EXPECT_THAT(tokenizer.Words(std::string("fo\0x\x07y", 6)), ElementsAre("foxy"));
  EXPECT_THAT(tokenizer.Words("zero\xE2\x80\x8Bwidth"), ElementsAre("zerowidth"));  // U+200B is Cf
  EXPECT_THAT(tokenizer.Words("bad\xFF\xC3utf8"), ElementsAre("badutf8"));
  EXPECT_THAT(tokenizer.Words("rep\xEF\xBF\xBDlaced"), ElementsAre("replaced"));  // U+FFFD itself
}

TEST(BertTokenizerTest, SpecialTokensInTheTextAreJustText) {
  const BertTokenizer tokenizer = Uncased();
  EXPECT_THAT(tokenizer.Words("the [SEP] fox"), ElementsAre("the", "[", "sep", "]", "fox"));
  const std::vector<int32_t> ids = tokenizer.Encode("[CLS][SEP]", 16);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), tokenizer.cls_id()), 1);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), tokenizer.sep_id()), 1);
}

TEST(BertTokenizerTest, EncodeAddsClsSepAndTruncates) {
  const BertTokenizer tokenizer = Uncased();
  EXPECT_THAT(tokenizer.Encode("the quick fox", 16), ElementsAre(2, 7, 8, 10, 3));
  EXPECT_THAT(tokenizer.Encode("", 16), ElementsAre(2, 3));
  // "unaffable the" is 4 pieces; 5 tokens leave room for 3.
  EXPECT_THAT(tokenizer.Encode("unaffable the", 5), ElementsAre(2, 4, 5, 6, 3));
  EXPECT_THAT(tokenizer.Encode("unaffable the", 2), ElementsAre(2, 3));
  // Reading stops at the truncation point, so a huge text costs no more than a short one.
  std::string huge;
  for (int i = 0; i < 200000; ++i) huge += "the ";
  EXPECT_EQ(tokenizer.Encode(huge, 8).size(), 8u);
}

TEST(BertTokenizerTest, VocabularyChecks) {
  auto code = [](const std::string& vocab, int max_size = kLargeVocab) {
    return BertTokenizer::FromVocab(vocab, true, max_size).status().code();
  };
  EXPECT_EQ(code("[CLS]\n[SEP]\n"), absl::StatusCode::kInvalidArgument);  // no [UNK]
  EXPECT_EQ(code("[UNK]\n[SEP]\n"), absl::StatusCode::kInvalidArgument);  // no [CLS]
  EXPECT_EQ(code(Vocab(), 10), absl::StatusCode::kInvalidArgument);       // more lines than vocab_size
  EXPECT_EQ(code("[UNK]\n[CLS]\n[SEP]\n" + std::string(BertTokenizer::kMaxTokenBytes + 1, 'x')),
            absl::StatusCode::kInvalidArgument);
  // CRLF line ends are accepted; a duplicate keeps its last id, as Hugging Face does.
  absl::StatusOr<BertTokenizer> crlf =
      BertTokenizer::FromVocab("[UNK]\r\n[CLS]\r\n[SEP]\r\nab\r\nab", true, 5);
  ASSERT_TRUE(crlf.ok()) << crlf.status();
  EXPECT_EQ(crlf->cls_id(), 1);
  EXPECT_THAT(crlf->Encode("ab", 8), ElementsAre(1, 4, 2));
}

}  // namespace
}  // namespace bulwark::bert
