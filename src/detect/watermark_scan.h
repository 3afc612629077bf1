// The character classes, token boundaries and range checks that every scanner of the watermark's
// substitution channel (detect/watermark_lexicon.h) shares: the word lexicon, the number sites
// (detect/watermark_number_sites.h) and the punctuation sites (detect/watermark_punctuation_sites.h).
// Inline: the scanners call them for every token of every text the watermark detector reads.
#pragma once

#include <absl/strings/ascii.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "detect/watermark_lexicon.h"

namespace bulwark::watermark_scan {

inline constexpr std::array<std::string_view, 5> kTitles = {"Dr", "Mr", "Mrs", "Ms", "Prof"};

// Equality that rejects on the size and the first byte before calling memcmp: the word lists
// below are compared with every token.
inline bool Same(std::string_view a, std::string_view b) {
  return a.size() == b.size() && (a.empty() || a[0] == b[0]) && a == b;
}

// Whether `word` is in `list`.
template <size_t N>
bool InList(const std::array<std::string_view, N>& list, std::string_view word, size_t from = 0) {
  for (size_t k = from; k < N; ++k) {
    if (Same(list[k], word)) return true;
  }
  return false;
}

// `c` is one of `set` (a few characters: inlined, unlike string_view::find's memchr call).
inline bool OneOf(char c, std::string_view set) {
  for (char s : set) {
    if (c == s) return true;
  }
  return false;
}
inline bool IsWordChar(char c) {
  return absl::ascii_isalpha(c) || absl::ascii_isdigit(c) || static_cast<unsigned char>(c) >= 0x80;
}
inline bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

inline bool IsTokenStart(std::string_view t, size_t i) {
  if (i >= t.size() || !IsWordChar(t[i])) return false;
  if (i == 0) return true;
  if (IsWordChar(t[i - 1])) return false;
  // Not the rest of "don't" or "e-mail".
  return !((t[i - 1] == '\'' || t[i - 1] == '-') && i >= 2 && IsWordChar(t[i - 2]));
}

// End of the token starting at i: word characters, apostrophes and hyphens, without trailing
// apostrophes or hyphens.
inline size_t TokenEnd(std::string_view t, size_t i) {
  size_t j = i;
  while (j < t.size() && (IsWordChar(t[j]) || t[j] == '\'' || t[j] == '-')) ++j;
  while (j > i && (t[j - 1] == '\'' || t[j - 1] == '-')) --j;
  return j;
}

// A site starts after a space, an opening bracket or quote, or at the start of the text: not
// inside an e-mail address, a URL, a path or a number.
inline bool LeftOk(std::string_view t, size_t i) {
  if (i == 0) return true;
  const char c = t[i - 1];
  return IsSpace(c) || c == '(' || c == '[' || c == '{' || c == '"' || c == '\'';
}

inline bool IsCloser(char c) {
  return IsSpace(c) || c == ')' || c == ']' || c == '}' || c == '"' || c == '\'';
}

// A site ends before a space, a closing bracket or quote, the end of the text, or a punctuation
// mark that is itself followed by one of those (so "color.txt" and "4pm-6pm" are not sites).
inline bool RightOk(std::string_view t, size_t e) {
  if (e >= t.size() || IsCloser(t[e])) return true;
  const char c = t[e];
  if (c == '.' || c == ',' || c == ';' || c == ':' || c == '!' || c == '?') {
    return e + 1 >= t.size() || IsCloser(t[e + 1]);
  }
  return false;
}

inline bool EqualsLower(std::string_view t, size_t i, std::string_view lowercase) {
  if (i + lowercase.size() > t.size()) return false;
  for (size_t k = 0; k < lowercase.size(); ++k) {
    if (absl::ascii_tolower(t[i + k]) != lowercase[k]) return false;
  }
  return true;
}

// Reads 1 or 2 digits at i (no leading zero unless `allow_zero`); returns the count of digits.
inline int ReadSmallNumber(std::string_view t, size_t i, int* value, bool allow_zero) {
  if (i >= t.size() || !absl::ascii_isdigit(t[i]) || (!allow_zero && t[i] == '0')) return 0;
  int n = 1, v = t[i] - '0';
  if (i + 1 < t.size() && absl::ascii_isdigit(t[i + 1])) {
    v = v * 10 + (t[i + 1] - '0');
    n = 2;
    if (i + 2 < t.size() && absl::ascii_isdigit(t[i + 2])) return 0;
  }
  *value = v;
  return n;
}

// The token before position i (separated by exactly one space), or empty.
inline std::string_view PreviousToken(std::string_view t, size_t i) {
  if (i < 2 || t[i - 1] != ' ') return {};
  size_t b = i - 1;
  while (b > 0 && (IsWordChar(t[b - 1]) || t[b - 1] == ':')) --b;
  return t.substr(b, i - 1 - b);
}

inline bool IsRangeWord(std::string_view w) {
  std::string lower(w);
  for (char& c : lower) c = absl::ascii_tolower(c);
  return lower == "to" || lower == "and" || lower == "or" || lower == "until" || lower == "till" ||
         lower == "through" || lower == "thru";
}

inline bool EndsWithDigit(std::string_view w) { return !w.empty() && absl::ascii_isdigit(w.back()); }

inline constexpr std::array<std::string_view, 23> kMonthNames = {
    "January",   "February", "March",    "April",    "May", "June", "July", "August",
    "September", "October",  "November", "December", "Jan", "Feb",  "Mar",  "Apr",
    "Jun",       "Jul",      "Aug",      "Sep",      "Oct", "Nov",  "Dec"};

inline bool IsMonthName(std::string_view w) { return InList(kMonthNames, w); }

// "3 to 4pm", "3-4pm", "between 1 and 3 June": the second end of a range.
inline bool EndsRange(std::string_view t, size_t i) {
  size_t j = i;
  while (j > 0 && t[j - 1] == ' ') --j;
  if (j > 0 && (t[j - 1] == '-' || t[j - 1] == '/')) return true;
  if (j >= 3 && t.substr(j - 3, 3) == "\xE2\x80\x93") return true;  // en dash
  const std::string_view word = PreviousToken(t, i);
  if (!IsRangeWord(word)) return false;
  const std::string_view before = PreviousToken(t, i - word.size() - 1);
  return EndsWithDigit(before) || IsMonthName(before);  // "1 to 3 June", "19 December to 22 December"
}

// "4pm to 6pm", "June 1 - 3": the first end of a range, or a date followed by a year.
inline bool StartsRange(std::string_view t, size_t e) {
  size_t j = e;
  while (j < t.size() && t[j] == ' ') ++j;
  if (j < t.size() && (t[j] == '-' || t[j] == '/')) return true;
  if (t.substr(j, 3) == "\xE2\x80\x93") return true;
  if (j == e + 1) {
    const size_t w = TokenEnd(t, j);
    if (w > j && IsRangeWord(t.substr(j, w - j)) && w + 1 < t.size() && t[w] == ' ') {
      // "4pm to 6pm", "June 1 to 3", "December 19 to December 22".
      return absl::ascii_isdigit(t[w + 1]) || IsMonthName(t.substr(w + 1, TokenEnd(t, w + 1) - w - 1));
    }
  }
  return false;
}

inline bool FollowedByYear(std::string_view t, size_t e) {
  size_t j = e;
  if (j < t.size() && t[j] == ',') ++j;
  if (j >= t.size() || t[j] != ' ') return false;
  ++j;
  for (int k = 0; k < 4; ++k, ++j) {
    if (j >= t.size() || !absl::ascii_isdigit(t[j])) return false;
  }
  return j >= t.size() || !IsWordChar(t[j]);
}

inline uint64_t Fnv1a(std::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}

inline uint64_t GroupKey(VariantKind kind, uint64_t value) {
  return (static_cast<uint64_t>(kind) << 56) | (value & 0x00FFFFFFFFFFFFFFull);
}

}  // namespace bulwark::watermark_scan
