#include "detect/odd_token.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>

#include "detect/abbreviation_model.h"

namespace bulwark {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool IsUpper(char c) { return c >= 'A' && c <= 'Z'; }
bool IsLower(char c) { return c >= 'a' && c <= 'z'; }
bool IsLetter(char c) { return IsUpper(c) || IsLower(c); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Punctuation that wraps a token in prose: quotes, brackets, sentence marks.
bool IsWrapper(char c) {
  static constexpr std::string_view kWrappers = ".,;:!?\"'()[]{}<>*`";
  return kWrappers.find(c) != std::string_view::npos;
}

// The longest run of a code-like token that may be an abbreviation ("cust", "stg", "db").
constexpr size_t kMaxAbbreviationLetters = 4;

struct Run {
  size_t begin = 0, end = 0;  // offsets in the token
};

// The token's letter runs, split at non-letters and at a lower-to-upper case change.
template <typename F>
void ForEachRun(std::string_view tok, F&& f) {
  size_t i = 0;
  while (i < tok.size()) {
    if (!IsLetter(tok[i])) {
      ++i;
      continue;
    }
    size_t j = i + 1;
    while (j < tok.size() && IsLetter(tok[j]) && !(IsLower(tok[j - 1]) && IsUpper(tok[j]))) ++j;
    f(Run{i, j});
    i = j;
  }
}

bool CodeLike(std::string_view tok) {
  bool letter = false, joiner = false;
  for (size_t i = 0; i < tok.size(); ++i) {
    const char c = tok[i];
    letter |= IsLetter(c);
    if (IsDigit(c) || c == '_') joiner = true;
    if (c == '-' && i > 0 && i + 1 < tok.size()) joiner = true;
    if (i > 0 && IsLower(tok[i - 1]) && IsUpper(c)) joiner = true;
  }
  return letter && joiner;
}

// Whether the run of `tok` is one the model may judge (see the header's list).
bool Judged(std::string_view tok, Run r, bool code_like, size_t last_dot) {
  const size_t n = r.end - r.begin;
  if (n < 2) return false;
  const std::string_view s = tok.substr(r.begin, n);
  if (std::all_of(s.begin(), s.end(), IsUpper)) return false;  // acronym or code
  if (IsUpper(s[0]) && !code_like) return false;               // a name
  if (!code_like && n < 5) return false;                       // a short abbreviation
  const bool touches_digit =
      (r.begin > 0 && IsDigit(tok[r.begin - 1])) || (r.end < tok.size() && IsDigit(tok[r.end]));
  if (touches_digit && n <= 4) return false;  // unit, ordinal, version
  if (last_dot != std::string_view::npos && r.begin > last_dot && n <= 4) return false;  // extension, TLD
  return true;
}

void ScoreToken(size_t offset, std::string_view tok, const CharTrigramModel& model, OddestToken* best) {
  if (tok.find('@') != std::string_view::npos || tok.find("://") != std::string_view::npos) return;
  if (tok.size() >= 4 && (tok.substr(0, 4) == "www." || tok.substr(0, 4) == "WWW.")) return;
  if (std::any_of(tok.begin(), tok.end(), [](char c) { return static_cast<unsigned char>(c) >= 0x80; }))
    return;
  const bool code_like = CodeLike(tok);
  const size_t last_dot = tok.rfind('.');
  ForEachRun(tok, [&](Run r) {
    if (!Judged(tok, r, code_like, last_dot)) return;
    std::array<char, 64> lower{};
    const size_t n = std::min(r.end - r.begin, lower.size());
    for (size_t k = 0; k < n; ++k) lower[k] = static_cast<char>(tok[r.begin + k] | 0x20);
    const std::string_view run(lower.data(), n);
    double bits = model.BitsPerChar(run);
    // A short run of a code-like token may be an abbreviation (the header).
    if (code_like && n <= kMaxAbbreviationLetters) {
      bits = std::min(bits, AbbreviationModel::Default().BitsPerLetter(run));
    }
    if (bits > best->bits_per_char) {
      *best = OddestToken{bits, offset, tok.size(), offset + r.begin, r.end - r.begin};
    }
  });
}

// The fast path: one table lookup per byte for its class, and one pass over a token for the
// exclusions, the code-like test and its last '.' (the plain path makes five).
enum CharClass : uint8_t {
  kSpace = 1,
  kWrapper = 2,
  kUpperCase = 4,
  kLowerCase = 8,
  kDigit = 16,
  kHigh = 32
};

constexpr std::array<uint8_t, 256> kClasses = [] {
  std::array<uint8_t, 256> t{};
  for (const char c : std::string_view(" \t\n\r\f\v")) t[static_cast<unsigned char>(c)] |= kSpace;
  for (const char c : std::string_view(".,;:!?\"'()[]{}<>*`")) t[static_cast<unsigned char>(c)] |= kWrapper;
  for (int c = 'A'; c <= 'Z'; ++c) t[c] |= kUpperCase;
  for (int c = 'a'; c <= 'z'; ++c) t[c] |= kLowerCase;
  for (int c = '0'; c <= '9'; ++c) t[c] |= kDigit;
  for (int c = 0x80; c < 0x100; ++c) t[c] |= kHigh;
  return t;
}();

inline uint8_t ClassOf(char c) { return kClasses[static_cast<unsigned char>(c)]; }

// ScoreToken's decisions, taken in one pass over `tok` and one over its letter runs.
void ScoreTokenFast(size_t offset, std::string_view tok, const CharTrigramModel& model, OddestToken* best) {
  const size_t size = tok.size();
  if (size >= 4 && (tok.substr(0, 4) == "www." || tok.substr(0, 4) == "WWW.")) return;
  bool letter = false, joiner = false;
  size_t last_dot = std::string_view::npos;
  uint8_t previous = 0;
  bool all_lower = true;  // every byte a-z
  for (size_t i = 0; i < size; ++i) {
    const char c = tok[i];
    const uint8_t k = ClassOf(c);
    all_lower &= k == kLowerCase;
    if ((k & kHigh) != 0 || c == '@') return;
    if (c == ':' && i + 2 < size && tok[i + 1] == '/' && tok[i + 2] == '/') return;
    letter |= (k & (kUpperCase | kLowerCase)) != 0;
    joiner |= (k & kDigit) != 0 || c == '_' || (c == '-' && i > 0 && i + 1 < size) ||
              ((previous & kLowerCase) != 0 && (k & kUpperCase) != 0);
    if (c == '.') last_dot = i;
    previous = k;
  }
  if (all_lower) {
    // A plain lower-case word (most tokens): not code-like, one run, judged from 5 letters on,
    // already lower case.
    if (size >= 5) {
      const double bits = model.BitsPerChar(tok.substr(0, std::min<size_t>(size, 64)));
      if (bits > best->bits_per_char) *best = OddestToken{bits, offset, size, offset, size};
    }
    return;
  }
  const bool code_like = letter && joiner;
  size_t i = 0;
  while (i < size) {
    uint8_t k = ClassOf(tok[i]);
    if ((k & (kUpperCase | kLowerCase)) == 0) {
      ++i;
      continue;
    }
    // The run [i, j): letters, split at a lower-to-upper case change.
    const bool first_upper = (k & kUpperCase) != 0;
    bool any_lower = (k & kLowerCase) != 0;
    size_t j = i + 1;
    for (; j < size; ++j) {
      const uint8_t next = ClassOf(tok[j]);
      if ((next & (kUpperCase | kLowerCase)) == 0 || ((k & kLowerCase) != 0 && (next & kUpperCase) != 0))
        break;
      any_lower |= (next & kLowerCase) != 0;
      k = next;
    }
    const size_t n = j - i;
    // Judged (the header's list): at least 2 letters; not an acronym; not a name; not a short
    // abbreviation; not a unit, ordinal or version; not an extension or top-level domain.
    const bool touches_digit =
        (i > 0 && (ClassOf(tok[i - 1]) & kDigit) != 0) || (j < size && (ClassOf(tok[j]) & kDigit) != 0);
    const bool judged = n >= 2 && any_lower && !(first_upper && !code_like) && !(!code_like && n < 5) &&
                        !(touches_digit && n <= 4) &&
                        !(last_dot != std::string_view::npos && i > last_dot && n <= 4);
    if (judged) {
      char lower[64];
      const size_t m = std::min(n, sizeof(lower));
      for (size_t q = 0; q < m; ++q) lower[q] = static_cast<char>(tok[i + q] | 0x20);
      const std::string_view run(lower, m);
      double bits = model.BitsPerChar(run);
      if (code_like && m <= kMaxAbbreviationLetters) {
        bits = std::min(bits, AbbreviationModel::Default().BitsPerLetter(run));
      }
      if (bits > best->bits_per_char) *best = OddestToken{bits, offset, size, offset + i, n};
    }
    i = j;
  }
}

}  // namespace

OddestToken FindOddestToken(std::string_view text, const CharTrigramModel& model) {
  text = text.substr(0, std::min(text.size(), kMaxOddTokenBytes));
  OddestToken best;
  size_t i = 0;
  const size_t size = text.size();
  while (i < size) {
    while (i < size && (ClassOf(text[i]) & kSpace) != 0) ++i;
    size_t j = i;
    while (j < size && (ClassOf(text[j]) & kSpace) == 0) ++j;
    size_t b = i, e = j;
    while (b < e && (ClassOf(text[b]) & kWrapper) != 0) ++b;
    while (e > b && (ClassOf(text[e - 1]) & kWrapper) != 0) --e;
    if (e > b) ScoreTokenFast(b, text.substr(b, e - b), model, &best);
    i = j;
  }
  return best;
}

OddestToken FindOddestTokenPlain(std::string_view text, const CharTrigramModel& model) {
  text = text.substr(0, std::min(text.size(), kMaxOddTokenBytes));
  OddestToken best;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && IsSpace(text[i])) ++i;
    size_t j = i;
    while (j < text.size() && !IsSpace(text[j])) ++j;
    size_t b = i, e = j;
    while (b < e && IsWrapper(text[b])) ++b;
    while (e > b && IsWrapper(text[e - 1])) --e;
    if (e > b) ScoreToken(b, text.substr(b, e - b), model, &best);
    i = j;
  }
  return best;
}

}  // namespace bulwark
