// Word-level helpers (see text_terms.h).
#include "attack/extraction/text_terms.h"

#include <absl/container/flat_hash_set.h>
#include <absl/strings/str_join.h>
#include <absl/strings/str_split.h>

#include <algorithm>

#include "core/strings.h"
#include "embed/idf_table.h"
#include "embed/wordnet_canonicalizer.h"

namespace bulwark::extraction {
namespace {

std::vector<std::string> Tokens(std::string_view text) {
  std::vector<std::string> tokens;
  for (absl::string_view t : absl::StrSplit(ToAbsl(text), absl::ByAnyChar(" \t\r\n"), absl::SkipEmpty())) {
    tokens.emplace_back(t);
  }
  return tokens;
}

}  // namespace

std::vector<std::string> LowerWords(std::string_view text) {
  std::vector<std::string> words;
  std::string current;
  for (char c : text) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c >= 'a' && c <= 'z') {
      current.push_back(c);
    } else if (!current.empty()) {
      words.push_back(std::move(current));
      current.clear();
    }
  }
  if (!current.empty()) words.push_back(std::move(current));
  return words;
}

std::vector<std::string> SalientWords(std::string_view text, size_t n) {
  struct Candidate {
    std::string word;
    float idf;
    size_t order;
  };
  std::vector<Candidate> candidates;
  absl::flat_hash_set<std::string> seen;
  for (std::string& word : LowerWords(text)) {
    if (word.size() < 4 || WordNetCanonicalizer::IsStopword(word) || !seen.insert(word).second) continue;
    const float idf = IdfLookup(word);
    candidates.push_back({std::move(word), idf, candidates.size()});
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate& a, const Candidate& b) { return a.idf > b.idf; });
  std::vector<std::string> out;
  for (size_t i = 0; i < candidates.size() && i < n; ++i) out.push_back(std::move(candidates[i].word));
  return out;
}

std::string FirstTokens(std::string_view text, size_t n) {
  std::vector<std::string> tokens = Tokens(text);
  if (tokens.size() > n) tokens.resize(n);
  return absl::StrJoin(tokens, " ");
}

std::string LastTokens(std::string_view text, size_t n) {
  std::vector<std::string> tokens = Tokens(text);
  if (tokens.size() > n) tokens.erase(tokens.begin(), tokens.end() - static_cast<ptrdiff_t>(n));
  return absl::StrJoin(tokens, " ");
}

const std::vector<std::string>& CommandWords() {
  static const std::vector<std::string> kWords = {
      "ignore", "instructions", "instruction", "verbatim",  "output",    "print",    "repeat",
      "copy",   "chunk",        "chunks",      "save",      "examples",  "example",  "previous",
      "return", "json",         "context",     "documents", "knowledge", "roleplay", "summarization"};
  return kWords;
}

bool HasCommandWord(std::string_view text) {
  static const absl::flat_hash_set<std::string> kSet(CommandWords().begin(), CommandWords().end());
  for (const std::string& word : LowerWords(text)) {
    if (kSet.contains(word)) return true;
  }
  return false;
}

}  // namespace bulwark::extraction
