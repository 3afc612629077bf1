// LexicalTokenizer: the tokens the store's lexical (BM25) index is built from and queried with
// (issue #19 point 2: "a lexical index ... with stemming"). Independent of the store's embedder, so
// a store with a neural embedder gets the same lexical ranking as one with the lexical embedder.
//
//   1. words: maximal runs of ASCII letters and digits and of non-ASCII bytes (UTF-8 sequences are
//      kept whole), ASCII letters lowercased; words longer than kMaxWordBytes are dropped
//   2. stop words (optional): a fixed list of English function words is dropped; question words
//      (optional, for queries): the interrogatives and auxiliaries that frame a question ("what",
//      "when", "do", "does", "can", ...), never the pronouns ("i", "my": whose memory it is)
//   3. stemming (optional): the Snowball English (Porter2) stemmer of libstemmer (Debian
//      libstemmer-dev), so "appointments" and "appointment" meet
//
// Thread-safe: Tokens may be called from any thread (each thread gets its own stemmer).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace bulwark {

struct LexicalTokenizerOptions {
  bool stem = true;             // Snowball English stemming
  bool stop_words = true;       // drop English function words
  bool question_words = false;  // drop interrogatives and auxiliaries (IsLexicalQuestionWord)
};

class LexicalTokenizer {
 public:
  static constexpr size_t kMaxWordBytes = 64;
  // At most this many tokens are taken from one text (the rest is ignored).
  static constexpr size_t kMaxTokens = 4096;

  explicit LexicalTokenizer(LexicalTokenizerOptions options = {}) : options_(options) {}

  // The tokens of `text` in order (repeats kept). Never fails; empty for a text with no word.
  std::vector<std::string> Tokens(std::string_view text) const;

  const LexicalTokenizerOptions& options() const { return options_; }

 private:
  LexicalTokenizerOptions options_;
};

// True if `word` (lowercase) is on the tokenizer's stop-word list.
bool IsLexicalStopWord(std::string_view word);
// True if `word` (lowercase) is an interrogative or auxiliary that frames a question (a subset of
// the stop words without pronouns, articles and prepositions).
bool IsLexicalQuestionWord(std::string_view word);

}  // namespace bulwark
