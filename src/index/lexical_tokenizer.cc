// Words, stop words and Snowball stemming for the lexical index (see lexical_tokenizer.h).
#include "index/lexical_tokenizer.h"

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>
#include <libstemmer.h>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>

namespace bulwark {
namespace {

// English function words: articles, pronouns, auxiliaries, prepositions, conjunctions and
// question words. Content words ("morning", "day") are kept even when frequent: IDF weighs them.
constexpr std::string_view kStopWords[] = {
    "a",      "about", "after", "again", "all",   "am",    "an",      "and",    "any",   "are",    "as",
    "at",     "be",    "been",  "being", "both",  "but",   "by",      "can",    "could", "did",    "do",
    "does",   "doing", "for",   "from",  "had",   "has",   "have",    "having", "he",    "her",    "here",
    "hers",   "him",   "his",   "how",   "i",     "if",    "in",      "into",   "is",    "it",     "its",
    "just",   "me",    "more",  "most",  "my",    "no",    "nor",     "not",    "of",    "on",     "once",
    "only",   "or",    "other", "our",   "ours",  "out",   "over",    "own",    "s",     "same",   "she",
    "should", "so",    "some",  "such",  "t",     "than",  "that",    "the",    "their", "theirs", "them",
    "then",   "there", "these", "they",  "this",  "those", "through", "to",     "too",   "under",  "until",
    "up",     "us",    "very",  "was",   "we",    "were",  "what",    "when",   "where", "which",  "while",
    "who",    "whom",  "why",   "will",  "with",  "would", "you",     "your",   "yours", "ll",     "re",
    "ve",     "d",     "m",     "don",   "doesn", "didn",  "isn",     "aren",   "wasn",  "weren",  "won",
};

const absl::flat_hash_set<std::string_view>& StopWords() {
  static const auto* words =
      new absl::flat_hash_set<std::string_view>(std::begin(kStopWords), std::end(kStopWords));
  return *words;
}

// Words that frame a question and say nothing of its subject: interrogatives and auxiliaries.
constexpr std::string_view kQuestionWords[] = {
    "what", "when", "where", "which", "who",    "whom",  "whose", "why",  "how",
    "do",   "does", "did",   "doing", "is",     "are",   "was",   "were", "be",
    "been", "am",   "can",   "could", "should", "would", "will",
};

struct StemmerDeleter {
  void operator()(sb_stemmer* s) const { sb_stemmer_delete(s); }
};

// The calling thread's Snowball English stemmer (a stemmer object is not thread-safe). Null if
// libstemmer cannot allocate one; words are then kept unstemmed.
sb_stemmer* ThreadStemmer() {
  thread_local std::unique_ptr<sb_stemmer, StemmerDeleter> stemmer(sb_stemmer_new("english", "UTF_8"));
  return stemmer.get();
}

// The calling thread's memo of stems (word -> its stem): text follows Zipf's law, so most words
// of a bulk load (every memory's text at the first hybrid search) were stemmed before, and a hash
// lookup is several times cheaper than the Snowball stemmer. Bounded: emptied when it holds
// kMaxMemoWords words (about 1 MB per thread).
constexpr size_t kMaxMemoWords = 16384;
absl::flat_hash_map<std::string, std::string>& ThreadStemMemo() {
  thread_local absl::flat_hash_map<std::string, std::string> memo;
  return memo;
}

// The stem of the lowercase `word` (unchanged if the stemmer returns nothing).
void Stem(sb_stemmer* stemmer, std::string* word) {
  auto& memo = ThreadStemMemo();
  if (const auto it = memo.find(*word); it != memo.end()) {
    *word = it->second;
    return;
  }
  const sb_symbol* stemmed = sb_stemmer_stem(stemmer, reinterpret_cast<const sb_symbol*>(word->data()),
                                             static_cast<int>(word->size()));
  if (stemmed == nullptr) return;
  std::string stem(reinterpret_cast<const char*>(stemmed), static_cast<size_t>(sb_stemmer_length(stemmer)));
  if (memo.size() >= kMaxMemoWords) memo.clear();
  memo.emplace(*word, stem);
  *word = std::move(stem);
}

bool IsWordByte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80;
}

}  // namespace

bool IsLexicalStopWord(std::string_view word) { return StopWords().contains(word); }

bool IsLexicalQuestionWord(std::string_view word) {
  return std::find(std::begin(kQuestionWords), std::end(kQuestionWords), word) != std::end(kQuestionWords);
}

std::vector<std::string> LexicalTokenizer::Tokens(std::string_view text) const {
  std::vector<std::string> tokens;
  sb_stemmer* stemmer = options_.stem ? ThreadStemmer() : nullptr;
  size_t i = 0;
  while (i < text.size() && tokens.size() < kMaxTokens) {
    while (i < text.size() && !IsWordByte(static_cast<unsigned char>(text[i]))) ++i;
    const size_t start = i;
    while (i < text.size() && IsWordByte(static_cast<unsigned char>(text[i]))) ++i;
    if (i == start || i - start > kMaxWordBytes) continue;
    std::string word(text.substr(start, i - start));
    for (char& c : word) {
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    if (options_.stop_words && IsLexicalStopWord(word)) continue;
    if (options_.question_words && IsLexicalQuestionWord(word)) continue;
    if (stemmer != nullptr) Stem(stemmer, &word);
    if (!word.empty()) tokens.push_back(std::move(word));
  }
  return tokens;
}

}  // namespace bulwark
