#include "detect/watermark_lexicon.h"

#include <absl/strings/ascii.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>

#include "detect/watermark_word_table.h"

namespace bulwark {
namespace {

// ---------------------------------------------------------------------------------------------
// Character classes and boundaries.

constexpr std::array<std::string_view, 5> kTitles = {"Dr", "Mr", "Mrs", "Ms", "Prof"};

// Equality that rejects on the size and the first byte before calling memcmp: the word lists
// below are compared with every token.
bool Same(std::string_view a, std::string_view b) {
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
bool OneOf(char c, std::string_view set) {
  for (char s : set) {
    if (c == s) return true;
  }
  return false;
}
bool IsWordChar(char c) {
  return absl::ascii_isalpha(c) || absl::ascii_isdigit(c) || static_cast<unsigned char>(c) >= 0x80;
}
bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

bool IsTokenStart(std::string_view t, size_t i) {
  if (i >= t.size() || !IsWordChar(t[i])) return false;
  if (i == 0) return true;
  if (IsWordChar(t[i - 1])) return false;
  // Not the rest of "don't" or "e-mail".
  return !((t[i - 1] == '\'' || t[i - 1] == '-') && i >= 2 && IsWordChar(t[i - 2]));
}

// End of the token starting at i: word characters, apostrophes and hyphens, without trailing
// apostrophes or hyphens.
size_t TokenEnd(std::string_view t, size_t i) {
  size_t j = i;
  while (j < t.size() && (IsWordChar(t[j]) || t[j] == '\'' || t[j] == '-')) ++j;
  while (j > i && (t[j - 1] == '\'' || t[j - 1] == '-')) --j;
  return j;
}

// A site starts after a space, an opening bracket or quote, or at the start of the text: not
// inside an e-mail address, a URL, a path or a number.
bool LeftOk(std::string_view t, size_t i) {
  if (i == 0) return true;
  const char c = t[i - 1];
  return IsSpace(c) || c == '(' || c == '[' || c == '{' || c == '"' || c == '\'';
}

bool IsCloser(char c) { return IsSpace(c) || c == ')' || c == ']' || c == '}' || c == '"' || c == '\''; }

// A site ends before a space, a closing bracket or quote, the end of the text, or a punctuation
// mark that is itself followed by one of those (so "color.txt" and "4pm-6pm" are not sites).
bool RightOk(std::string_view t, size_t e) {
  if (e >= t.size() || IsCloser(t[e])) return true;
  const char c = t[e];
  if (c == '.' || c == ',' || c == ';' || c == ':' || c == '!' || c == '?') {
    return e + 1 >= t.size() || IsCloser(t[e + 1]);
  }
  return false;
}

bool EqualsLower(std::string_view t, size_t i, std::string_view lowercase) {
  if (i + lowercase.size() > t.size()) return false;
  for (size_t k = 0; k < lowercase.size(); ++k) {
    if (absl::ascii_tolower(t[i + k]) != lowercase[k]) return false;
  }
  return true;
}

// Reads 1 or 2 digits at i (no leading zero unless `allow_zero`); returns the count of digits.
int ReadSmallNumber(std::string_view t, size_t i, int* value, bool allow_zero) {
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
std::string_view PreviousToken(std::string_view t, size_t i) {
  if (i < 2 || t[i - 1] != ' ') return {};
  size_t b = i - 1;
  while (b > 0 && (IsWordChar(t[b - 1]) || t[b - 1] == ':')) --b;
  return t.substr(b, i - 1 - b);
}

bool IsRangeWord(std::string_view w) {
  std::string lower(w);
  for (char& c : lower) c = absl::ascii_tolower(c);
  return lower == "to" || lower == "and" || lower == "or" || lower == "until" || lower == "till" ||
         lower == "through" || lower == "thru";
}

bool EndsWithDigit(std::string_view w) { return !w.empty() && absl::ascii_isdigit(w.back()); }

constexpr std::array<std::string_view, 23> kMonthNames = {
    "January",   "February", "March",    "April",    "May", "June", "July", "August",
    "September", "October",  "November", "December", "Jan", "Feb",  "Mar",  "Apr",
    "Jun",       "Jul",      "Aug",      "Sep",      "Oct", "Nov",  "Dec"};

bool IsMonthName(std::string_view w) { return InList(kMonthNames, w); }

// "3 to 4pm", "3-4pm", "between 1 and 3 June": the second end of a range.
bool EndsRange(std::string_view t, size_t i) {
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
bool StartsRange(std::string_view t, size_t e) {
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

bool FollowedByYear(std::string_view t, size_t e) {
  size_t j = e;
  if (j < t.size() && t[j] == ',') ++j;
  if (j >= t.size() || t[j] != ' ') return false;
  ++j;
  for (int k = 0; k < 4; ++k, ++j) {
    if (j >= t.size() || !absl::ascii_isdigit(t[j])) return false;
  }
  return j >= t.size() || !IsWordChar(t[j]);
}

uint64_t Fnv1a(std::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}

uint64_t GroupKey(VariantKind kind, uint64_t value) {
  return (static_cast<uint64_t>(kind) << 56) | (value & 0x00FFFFFFFFFFFFFFull);
}

// ---------------------------------------------------------------------------------------------
// Times of day.
//
// Variants of a time with minute 0: 4pm, 4 pm, 4:00pm, 4:00 pm, 16:00; with another minute:
// 4:30pm, 4:30 pm, 16:30 (am, pm in any case). Only times from 13:00 to 23:59 and from 00:00 to
// 09:59 (written 09:30) have the 24-hour form: a bare "10:30" or "12:30" may be either. The
// dotted "4 p.m." is not a site: its period may also end the sentence, and removing it would
// change what the other sites read.

// The 24-hour form only where it cannot be read as 12-hour: 13:00-23:59 and 00:00-09:59.
bool Has24HourForm(int minutes) { return minutes / 60 >= 13 || minutes / 60 <= 9; }

int TimeVariants(int minutes) { return (minutes % 60 == 0 ? 4 : 2) + (Has24HourForm(minutes) ? 1 : 0); }

bool MatchTime(std::string_view t, size_t i, VariantSite* site) {
  int hour = 0;
  const int hour_digits = ReadSmallNumber(t, i, &hour, /*allow_zero=*/true);
  if (hour_digits == 0) return false;
  size_t j = i + static_cast<size_t>(hour_digits);
  int minute = -1;
  if (j + 2 < t.size() && t[j] == ':' && absl::ascii_isdigit(t[j + 1]) && absl::ascii_isdigit(t[j + 2]) &&
      (j + 3 >= t.size() || !absl::ascii_isdigit(t[j + 3]))) {
    minute = (t[j + 1] - '0') * 10 + (t[j + 2] - '0');
    if (minute > 59) return false;
    j += 3;
  }
  // 12-hour forms: an am/pm suffix, with or without a space.
  const bool space = j < t.size() && t[j] == ' ';
  const size_t s = space ? j + 1 : j;
  int pm = -1;
  size_t end = 0;
  if ((EqualsLower(t, s, "am") || EqualsLower(t, s, "pm")) && (s + 2 >= t.size() || !IsWordChar(t[s + 2]))) {
    pm = absl::ascii_tolower(t[s]) == 'p';
    end = s + 2;
  }
  int minutes, variant;
  if (pm >= 0) {
    if (hour < 1 || hour > 12 || t[i] == '0' || !RightOk(t, end)) return false;
    minutes = (hour % 12 + (pm ? 12 : 0)) * 60 + std::max(minute, 0);
    const int style = space ? 1 : 0;
    variant = minute == 0 ? 2 + style : style;  // 4:00pm, 4:00 pm | 4pm, 4 pm (or 4:30pm, 4:30 pm)
  } else {
    // 24-hour form: two-digit hour 13-23, or 00-09 with its leading zero.
    if (hour_digits != 2 || minute < 0 || (!(hour >= 13 && hour <= 23) && t[i] != '0')) return false;
    if (!RightOk(t, j)) return false;
    end = j;
    minutes = hour * 60 + minute;
    variant = TimeVariants(minutes) - 1;
  }
  if (EndsRange(t, i) || StartsRange(t, end)) return false;
  site->begin = i;
  site->end = end;
  site->group.kind = VariantKind::kTime;
  site->group.value = static_cast<uint32_t>(minutes);
  site->group.size = static_cast<uint8_t>(TimeVariants(minutes));
  site->group.preference = 1;
  site->group.key = GroupKey(VariantKind::kTime, static_cast<uint64_t>(minutes));
  site->variant = static_cast<uint8_t>(variant);
  return true;
}

std::string RenderTime(int minutes, int variant) {
  const int h24 = minutes / 60, minute = minutes % 60;
  const int h12 = h24 % 12 == 0 ? 12 : h24 % 12;
  const char* suffix = h24 >= 12 ? "pm" : "am";
  const bool whole_hour = minute == 0;
  const int twelve_hour = whole_hour ? 4 : 2;
  char buf[32];
  if (variant >= twelve_hour) {
    std::snprintf(buf, sizeof buf, "%02d:%02d", h24, minute);
  } else if (whole_hour && variant < 2) {
    std::snprintf(buf, sizeof buf, "%d%s%s", h12, variant == 1 ? " " : "", suffix);
  } else {
    std::snprintf(buf, sizeof buf, "%d:%02d%s%s", h12, minute, variant % 2 == 1 ? " " : "", suffix);
  }
  return buf;
}

// ---------------------------------------------------------------------------------------------
// Dates: June 1, June 1st, 1 June, 1st June, Jun 1, 1 Jun (May has no abbreviation). Only with a
// capitalized month name, without a year, and not as part of a range.

constexpr std::array<std::string_view, 12> kMonths = {"January",   "February", "March",    "April",
                                                      "May",       "June",     "July",     "August",
                                                      "September", "October",  "November", "December"};
constexpr std::array<std::string_view, 12> kMonthAbbreviations = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                                  "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
constexpr std::array<int, 12> kMonthDays = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

std::string_view Ordinal(int day) {
  if (day % 100 >= 11 && day % 100 <= 13) return "th";
  switch (day % 10) {
    case 1:
      return "st";
    case 2:
      return "nd";
    case 3:
      return "rd";
    default:
      return "th";
  }
}

// The month whose name (or abbreviation, setting *abbreviated) is exactly t[i, e); -1 if none.
int MonthAt(std::string_view t, size_t i, size_t e, bool* abbreviated) {
  if (e - i < 3 || e - i > 9 || !OneOf(t[i], "JFMASOND")) return -1;
  const std::string_view word = t.substr(i, e - i);
  for (int m = 0; m < 12; ++m) {
    if (Same(word, kMonths[m])) {
      *abbreviated = false;
      return m;
    }
    if (Same(word, kMonthAbbreviations[m])) {
      *abbreviated = m != 4;  // "May" is both
      return m;
    }
  }
  return -1;
}

int DateVariants(int month) { return month == 4 ? 4 : 6; }

// The day (and its optional ordinal suffix) at i; returns the end, or 0.
size_t ReadDay(std::string_view t, size_t i, int month, int* day, bool* ordinal) {
  const int digits = ReadSmallNumber(t, i, day, /*allow_zero=*/false);
  if (digits == 0 || *day > kMonthDays[static_cast<size_t>(month)]) return 0;
  size_t j = i + static_cast<size_t>(digits);
  *ordinal = t.substr(j, 2) == Ordinal(*day);
  if (*ordinal) j += 2;
  if (j < t.size() && IsWordChar(t[j])) return 0;
  return j;
}

void SetDate(VariantSite* site, size_t begin, size_t end, int month, int day, int variant) {
  site->begin = begin;
  site->end = end;
  site->group.kind = VariantKind::kDate;
  site->group.value = static_cast<uint32_t>(month * 32 + day);
  site->group.size = static_cast<uint8_t>(DateVariants(month));
  site->group.preference = 1;
  site->group.key = GroupKey(VariantKind::kDate, site->group.value);
  site->variant = static_cast<uint8_t>(variant);
}

// "June 1", "June 1st", "Jun 1" at a capitalized token [i, e).
bool MatchMonthDay(std::string_view t, size_t i, size_t e, VariantSite* site) {
  bool abbreviated = false;
  const int month = MonthAt(t, i, e, &abbreviated);
  if (month < 0 || e + 1 >= t.size() || t[e] != ' ') return false;
  int day;
  bool ordinal;
  const size_t end = ReadDay(t, e + 1, month, &day, &ordinal);
  if (end == 0 || (abbreviated && ordinal) || !RightOk(t, end) || FollowedByYear(t, end) ||
      StartsRange(t, end) || EndsRange(t, i)) {
    return false;
  }
  SetDate(site, i, end, month, day, abbreviated ? 4 : (ordinal ? 1 : 0));
  return true;
}

// "1 June", "1st June", "1 Jun" at a digit.
bool MatchDayMonth(std::string_view t, size_t i, VariantSite* site) {
  int day = 0;
  const int digits = ReadSmallNumber(t, i, &day, /*allow_zero=*/false);
  if (digits == 0) return false;
  size_t j = i + static_cast<size_t>(digits);
  const bool ordinal = t.substr(j, 2) == Ordinal(day);
  if (ordinal) j += 2;
  if (j + 1 >= t.size() || t[j] != ' ' || !absl::ascii_isupper(t[j + 1])) return false;
  const size_t e = TokenEnd(t, j + 1);
  bool abbreviated = false;
  const int month = MonthAt(t, j + 1, e, &abbreviated);
  if (month < 0 || day > kMonthDays[static_cast<size_t>(month)] || (abbreviated && ordinal)) return false;
  if (!RightOk(t, e) || FollowedByYear(t, e) || EndsRange(t, i) || StartsRange(t, e)) return false;
  SetDate(site, i, e, month, day, abbreviated ? 5 : (ordinal ? 3 : 2));
  return true;
}

std::string RenderDate(int month, int day, int variant) {
  const std::string name(kMonths[static_cast<size_t>(month)]);
  const std::string abbreviation(kMonthAbbreviations[static_cast<size_t>(month)]);
  const std::string number = std::to_string(day), ordinal = number + std::string(Ordinal(day));
  switch (variant) {
    case 0:
      return name + " " + number;
    case 1:
      return name + " " + ordinal;
    case 2:
      return number + " " + name;
    case 3:
      return ordinal + " " + name;
    case 4:
      return abbreviation + " " + number;
    default:
      return number + " " + abbreviation;
  }
}

// ---------------------------------------------------------------------------------------------
// Percentages: 5%, 5 percent, 5 per cent.

bool MatchPercent(std::string_view t, size_t i, VariantSite* site) {
  size_t j = i;
  while (j < t.size() && j - i < 9 && absl::ascii_isdigit(t[j])) ++j;
  if (j < t.size() && t[j] == '.' && j + 1 < t.size() && absl::ascii_isdigit(t[j + 1])) {
    ++j;
    while (j < t.size() && absl::ascii_isdigit(t[j])) ++j;
  }
  const size_t number_end = j;
  int variant;
  size_t end;
  if (j < t.size() && t[j] == '%') {
    variant = 0;
    end = j + 1;
  } else if (EqualsLower(t, j, " percent") && (j + 8 >= t.size() || !IsWordChar(t[j + 8]))) {
    variant = 1;
    end = j + 8;
  } else if (EqualsLower(t, j, " per cent") && (j + 9 >= t.size() || !IsWordChar(t[j + 9]))) {
    variant = 2;
    end = j + 9;
  } else {
    return false;
  }
  if (!RightOk(t, end)) return false;
  site->begin = i;
  site->end = end;
  site->group.kind = VariantKind::kPercent;
  site->group.size = 3;
  site->group.preference = 1;
  site->group.key = GroupKey(VariantKind::kPercent, Fnv1a(t.substr(i, number_end - i)));
  site->variant = static_cast<uint8_t>(variant);
  return true;
}

// ---------------------------------------------------------------------------------------------
// Counts of 2 to 99 before a plural noun: "3 days" | "three days", "21 pages" | "twenty-one
// pages". Not 1 ("one day" also means "some day"), not labels ("Version 3 adds", "iOS 17
// features", "room 3 needs"), not ranges.

constexpr std::array<std::string_view, 20> kSmallNumbers = {
    "",         "one",     "two",     "three",     "four",     "five",    "six",
    "seven",    "eight",   "nine",    "ten",       "eleven",   "twelve",  "thirteen",
    "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"};
constexpr std::array<std::string_view, 10> kTens = {"",      "",      "twenty",  "thirty", "forty",
                                                    "fifty", "sixty", "seventy", "eighty", "ninety"};

std::string NumberWord(int n) {
  if (n < 20) return std::string(kSmallNumbers[static_cast<size_t>(n)]);
  std::string word(kTens[static_cast<size_t>(n / 10)]);
  if (n % 10 != 0) word += "-" + std::string(kSmallNumbers[static_cast<size_t>(n % 10)]);
  return word;
}

// The number written in words as t[i, e) (any case): "seven", "twenty", "forty-two"; or 0.
int ParseNumberWord(std::string_view t, size_t i, size_t e) {
  if (e - i < 3 || e - i > 13) return 0;
  // Every number word from two to ninety-nine starts with one of these.
  const char p[3] = {absl::ascii_tolower(t[i]), absl::ascii_tolower(t[i + 1]), absl::ascii_tolower(t[i + 2])};
  const std::string_view prefix(p, 3);
  bool known = false;
  for (std::string_view start :
       {"two", "thr", "thi", "twe", "ten", "fou", "for", "fiv", "fif", "six", "sev", "eig", "ele", "nin"}) {
    known = known || prefix == start;
  }
  if (!known) return 0;
  char buf[16];
  for (size_t k = i; k < e; ++k) buf[k - i] = absl::ascii_tolower(t[k]);
  const std::string_view word(buf, e - i);
  const size_t hyphen = word.find('-');
  const std::string_view tens = word.substr(0, hyphen);
  for (int n = 2; n < 20; ++n) {
    if (hyphen == std::string_view::npos && Same(word, kSmallNumbers[static_cast<size_t>(n)])) return n;
  }
  for (int n = 2; n < 10; ++n) {
    if (!Same(tens, kTens[static_cast<size_t>(n)])) continue;
    if (hyphen == std::string_view::npos) return n * 10;
    const std::string_view unit = word.substr(hyphen + 1);
    for (int u = 1; u < 10; ++u) {
      if (Same(unit, kSmallNumbers[static_cast<size_t>(u)])) return n * 10 + u;
    }
  }
  return 0;
}

constexpr std::array<std::string_view, 12> kIrregularPlurals = {"people", "children", "men",   "women",
                                                                "feet",   "teeth",    "mice",  "geese",
                                                                "data",   "media",    "staff", "sheep"};
// Words ending in "s" that are not plural nouns after a number.
constexpr std::array<std::string_view, 44> kNotPlural = {
    "is",         "was",     "has",    "does",    "goes",   "this",      "its",      "his",     "hers",
    "ours",       "yours",   "theirs", "us",      "yes",    "plus",      "less",     "unless",  "as",
    "thus",       "whereas", "across", "perhaps", "always", "sometimes", "towards",  "besides", "news",
    "afterwards", "series",  "bus",    "gas",     "class",  "process",   "business", "address", "access",
    "success",    "status",  "bonus",  "versus",  "minus",  "says",      "means",    "needs"};

bool IsPluralNoun(std::string_view word) {
  if (word.size() < 3) return false;
  for (char c : word) {
    if (!(c >= 'a' && c <= 'z')) return false;
  }
  for (std::string_view w : kIrregularPlurals) {
    if (Same(word, w)) return true;
  }
  if (word.back() != 's' || word.size() < 4) return false;
  for (std::string_view w : kNotPlural) {
    if (Same(word, w)) return false;
  }
  return word.substr(word.size() - 2) != "ss" && word.substr(word.size() - 2) != "us";
}

constexpr std::array<std::string_view, 34> kLabelWords = {
    "version",  "step",    "room",     "page",  "level",   "chapter", "section", "floor", "gate",
    "platform", "line",    "bus",      "route", "number",  "no",      "phase",   "stage", "part",
    "season",   "episode", "week",     "day",   "year",    "grade",   "size",    "table", "seat",
    "row",      "zone",    "terminal", "exit",  "channel", "track",   "act"};

bool MatchCount(std::string_view t, size_t i, size_t e, VariantSite* site) {
  int value = 0, variant = 0;
  if (absl::ascii_isdigit(t[i])) {
    if (e - i > 2 || t[i] == '0') return false;
    for (size_t k = i; k < e; ++k) {
      if (!absl::ascii_isdigit(t[k])) return false;
      value = value * 10 + (t[k] - '0');
    }
  } else {
    if (e + 1 >= t.size() || t[e] != ' ' || !OneOf(t[i], "tfsenTFSEN")) {
      return false;
    }
    value = ParseNumberWord(t, i, e);
    variant = 1;
  }
  if (value < 2 || value > 99) return false;
  if (e + 1 >= t.size() || t[e] != ' ') return false;
  const size_t unit_end = TokenEnd(t, e + 1);
  if (!IsPluralNoun(t.substr(e + 1, unit_end - e - 1)) || EndsRange(t, i)) return false;
  // Not a label: the previous word is not a label word and has no capital letter (unless it
  // starts the sentence).
  if (const std::string_view before = PreviousToken(t, i); !before.empty()) {
    std::string lower(before);
    for (char& c : lower) c = absl::ascii_tolower(c);
    const bool capital = std::any_of(before.begin(), before.end(), absl::ascii_isupper) &&
                         !(absl::ascii_isupper(before[0]) && AtSentenceStart(t, i - 1 - before.size()));
    if (capital || InList(kLabelWords, lower)) return false;
  }
  site->begin = i;
  site->end = e;
  site->group.kind = VariantKind::kCount;
  site->group.value = static_cast<uint32_t>(value);
  site->group.size = 2;
  site->group.preference = 1;
  site->group.key = GroupKey(VariantKind::kCount, static_cast<uint64_t>(value));
  site->variant = static_cast<uint8_t>(variant);
  return true;
}

// ---------------------------------------------------------------------------------------------
// Optional commas. Three kinds of places where a comma may stand or not without changing what a
// sentence says (the span is the comma, if any, and the space):
//   * the serial (Oxford) comma: an "and" / "or" that closes a list, i.e. with an earlier ", " in
//     the same sentence at most 50 bytes back and no other conjunction in between
//     ("A, B, and C" | "A, B and C");
//   * before a conjunction that starts a clause with a pronoun subject ("..., and we agreed" |
//     "... and we agreed"; and, but, so, or);
//   * after a short opening phrase, before a subject ("Last year, we" | "Last year we";
//     "Yesterday, the client" | "Yesterday the client").

// The spans of the sites found so far (the last 32), so that a rule looking back over the text
// can skip them: what a site's variant looks like must not change what other rules see.
class RecentSites {
 public:
  void Add(size_t begin, size_t end) { spans_[next_++ % spans_.size()] = {begin, end}; }
  bool Covers(size_t pos) const {
    for (size_t k = 0; k < std::min(next_, spans_.size()); ++k) {
      if (pos >= spans_[k].first && pos < spans_[k].second) return true;
    }
    return false;
  }

 private:
  std::array<std::pair<size_t, size_t>, 32> spans_{};
  size_t next_ = 0;
};

// The token at [i, e) up to its apostrophe: "we" for "we're", "It" for "It's".
std::string_view BeforeApostrophe(std::string_view t, size_t i, size_t e) {
  size_t k = i;
  while (k < e && t[k] != '\'') ++k;
  return t.substr(i, k - i);
}

bool IsConjunctionAt(std::string_view t, size_t i) {
  for (std::string_view w : {std::string_view("and"), std::string_view("or"), std::string_view("but")}) {
    if (t.substr(i, w.size()) == w && (i == 0 || t[i - 1] == ' ') &&
        (i + w.size() >= t.size() || !IsWordChar(t[i + w.size()]))) {
      return true;
    }
  }
  return false;
}

constexpr std::array<std::string_view, 6> kPronounSubjects = {"I", "we", "he", "she", "they", "you"};

bool IsPronounSubject(std::string_view word) { return InList(kPronounSubjects, word); }

void SetComma(VariantSite* site, size_t begin, size_t end, uint32_t which, bool comma) {
  site->begin = begin;
  site->end = end;
  site->group.kind = VariantKind::kComma;
  site->group.value = which;
  site->group.size = 2;
  site->group.preference = 0;
  site->group.key = GroupKey(VariantKind::kComma, which);
  site->variant = comma ? 0 : 1;
}

constexpr std::array<std::string_view, 4> kConjunctions = {"and", "or", "but", "so"};

// At the conjunction t[i, e).
bool MatchConjunctionComma(std::string_view t, size_t i, size_t e, const RecentSites& recent,
                           VariantSite* site) {
  if (e - i > 3 || e - i < 2 || !OneOf(t[i], "aobs")) return false;
  const std::string_view word = t.substr(i, e - i);
  const auto which = std::find(kConjunctions.begin(), kConjunctions.end(), word);
  if (which == kConjunctions.end()) return false;
  if (i < 2 || t[i - 1] != ' ' || e + 1 >= t.size() || t[e] != ' ' || !IsWordChar(t[e + 1])) return false;
  const bool comma = t[i - 2] == ',';
  const size_t begin = comma ? i - 2 : i - 1;
  if (begin == 0 || !(IsWordChar(t[begin - 1]) || t[begin - 1] == ')' || t[begin - 1] == '"' ||
                      t[begin - 1] == '\'' || t[begin - 1] == '%')) {
    return false;
  }
  const auto value = static_cast<uint32_t>(which - kConjunctions.begin());
  // A clause with a pronoun subject.
  if (IsPronounSubject(BeforeApostrophe(t, e + 1, TokenEnd(t, e + 1)))) {
    SetComma(site, begin, i, value, comma);
    return true;
  }
  // The end of a list: the list's previous comma, back from the last item, within the sentence,
  // at most 8 words back, no other conjunction in between (sites count as one word, whatever
  // their variant looks like).
  if (value > 1) return false;
  constexpr int kMaxWords = 8;
  int words = 0;
  size_t j = begin;
  while (j > 0) {
    if (recent.Covers(j - 1)) {
      --j;
      continue;
    }
    const char c = t[j - 1];
    if (c == '.' || c == ';' || c == ':' || c == '!' || c == '?' || c == '\n' || c == '(' || c == ')' ||
        c == '"') {
      return false;
    }
    if (c == ',' && j < t.size() && t[j] == ' ') break;
    if (c == ' ') {
      if (IsConjunctionAt(t, j) || ++words > kMaxWords) return false;
    }
    --j;
  }
  if (j == 0 || j + 1 >= begin) return false;
  SetComma(site, begin, i, value, comma);
  return true;
}

constexpr std::array<std::string_view, 18> kOpeners = {
    "Yesterday", "Today",      "Tomorrow",  "Tonight",  "Later",         "Afterwards",
    "Afterward", "Then",       "Meanwhile", "Recently", "Usually",       "Sometimes",
    "Normally",  "Eventually", "Finally",   "Luckily",  "Unfortunately", "Apparently"};
constexpr std::array<std::string_view, 4> kOpenerDeterminers = {"Last", "This", "Next", "Every"};
constexpr std::array<std::string_view, 19> kOpenerNouns = {
    "year",      "time",     "week",   "month",    "night",  "morning", "evening",
    "weekend",   "summer",   "winter", "spring",   "autumn", "Monday",  "Tuesday",
    "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"};
constexpr std::array<std::string_view, 12> kSubjects = {"I",   "we", "he",  "she", "they", "you",
                                                        "the", "my", "our", "his", "her",  "their"};

// At a subject t[i, e) that follows a sentence's opening phrase: the comma (or not) before it.
bool MatchOpenerComma(std::string_view t, size_t i, size_t e, VariantSite* site) {
  if (i < 3 || t[i - 1] != ' ' || !(absl::ascii_isalpha(t[i - 2]) || t[i - 2] == ',')) return false;
  const bool comma = t[i - 2] == ',';
  const size_t opener_end = comma ? i - 2 : i - 1;
  if (opener_end == 0 || !absl::ascii_isalpha(t[opener_end - 1])) return false;
  if (!OneOf(t[i], "Iwhstymo")) return false;
  const std::string_view subject = BeforeApostrophe(t, i, e);
  if (subject.size() > 5 || !InList(kSubjects, subject)) {
    return false;
  }
  // The word before: a one-word opener, or "Last year", "In June", "On Monday", "In the morning";
  // first the cheap test that a sentence starts at most three words back.
  size_t b = opener_end;
  while (b > 0 && absl::ascii_isalpha(t[b - 1])) --b;
  {
    size_t w = b;
    bool near_start = AtSentenceStart(t, w);
    for (int words = 1; words < 3 && !near_start && w >= 2 && t[w - 1] == ' '; ++words) {
      w -= 1;
      while (w > 0 && absl::ascii_isalpha(t[w - 1])) --w;
      near_start = AtSentenceStart(t, w);
    }
    if (!near_start) return false;
  }
  const std::string_view last = t.substr(b, opener_end - b);
  size_t start = b;
  bool opener = InList(kOpeners, last);
  if (!opener && b >= 2 && t[b - 1] == ' ') {
    const std::string_view first = PreviousToken(t, b);
    start = b - 1 - first.size();
    const bool month = InList(kMonths, last);
    const bool weekday = InList(kOpenerNouns, last, 12);
    opener = (InList(kOpenerDeterminers, first) && InList(kOpenerNouns, last)) || (first == "In" && month) ||
             (first == "On" && weekday);
    if (!opener && first == "the" && (last == "morning" || last == "afternoon" || last == "evening") &&
        start >= 2 && t[start - 1] == ' ' && PreviousToken(t, start) == "In") {
      start -= 3;
      opener = true;
    }
  }
  if (!opener || !AtSentenceStart(t, start)) return false;
  SetComma(site, opener_end, i, 4, comma);
  return true;
}

// ---------------------------------------------------------------------------------------------
// Sentences joined or not: ". The" | "; the" (the span is the punctuation and the space; the
// marker re-cases the next word). Only before a pronoun or determiner that can start either
// (the, a, it, this, he, they, we, I, ...), after a word that is not an abbreviation.

constexpr std::array<std::string_view, 21> kSentenceStarters = {
    "the",  "a",  "an",  "it", "this", "that", "these", "those", "there", "he", "she",
    "they", "we", "you", "my", "our",  "his",  "her",   "their", "its",   "i"};
constexpr std::array<std::string_view, 24> kAbbreviations = {
    "etc", "vs",   "approx", "incl", "misc", "dept", "est", "fig", "jr",  "sr",  "st",  "ave",
    "co",  "corp", "inc",    "ltd",  "no",   "nos",  "vol", "pp",  "min", "max", "ref", "tel"};

bool MatchSentenceJoin(std::string_view t, size_t i, size_t e, VariantSite* site) {
  if (i < 4 || t[i - 1] != ' ' || (t[i - 2] != '.' && t[i - 2] != ';')) return false;
  std::string starter(BeforeApostrophe(t, i, e));
  for (char& c : starter) c = absl::ascii_tolower(c);
  if (!InList(kSentenceStarters, starter)) return false;
  if (e + 1 >= t.size() || t[e] != ' ' || !IsWordChar(t[e + 1])) return false;
  // The word before the punctuation (letters, digits, ', -, %: every variant of a site that may
  // end there) is not an abbreviation, a title or an initial, nor part of one ("e.g.", "U.S.").
  const size_t word_end = i - 2;
  size_t b = word_end;
  while (b > 0 && (IsWordChar(t[b - 1]) || t[b - 1] == '\'' || t[b - 1] == '-' || t[b - 1] == '%')) --b;
  if (b == word_end || (b > 0 && t[b - 1] == '.')) return false;
  const std::string_view before_word = t.substr(b, word_end - b);
  std::string before(before_word);
  for (char& c : before) c = absl::ascii_tolower(c);
  if (before.size() < 2 && !absl::ascii_isdigit(before[0])) return false;
  if (InList(kAbbreviations, before)) return false;
  if (InList(kTitles, before_word)) return false;
  site->begin = i - 2;
  site->end = i;
  site->group.kind = VariantKind::kSentence;
  site->group.size = 2;
  site->group.preference = 2;
  site->group.key = GroupKey(VariantKind::kSentence, 0);
  site->variant = t[i - 2] == '.' ? 0 : 1;
  return true;
}

// ---------------------------------------------------------------------------------------------
// Titles before a capitalized name: "Dr. Lee" | "Dr Lee".

bool MatchTitle(std::string_view t, size_t i, size_t e, VariantSite* site) {
  if (e - i < 2 || e - i > 4 || (t[i] != 'D' && t[i] != 'M' && t[i] != 'P')) return false;
  const std::string_view token = t.substr(i, e - i);
  int title = -1;
  for (size_t k = 0; k < kTitles.size(); ++k) {
    if (Same(token, kTitles[k])) title = static_cast<int>(k);
  }
  if (title < 0) return false;
  const bool period = e < t.size() && t[e] == '.';
  const size_t end = period ? e + 1 : e;
  if (end + 1 >= t.size() || t[end] != ' ' || !absl::ascii_isupper(t[end + 1])) return false;
  site->begin = i;
  site->end = end;
  site->group.kind = VariantKind::kTitle;
  site->group.value = static_cast<uint32_t>(title);
  site->group.size = 2;
  site->group.preference = 0;
  site->group.key = GroupKey(VariantKind::kTitle, Fnv1a(token));
  site->variant = period ? 0 : 1;
  return true;
}

}  // namespace

bool AtSentenceStart(std::string_view t, size_t i) {
  size_t j = i;
  while (j > 0 && (t[j - 1] == ' ' || t[j - 1] == '"' || t[j - 1] == '\'' || t[j - 1] == '(')) --j;
  if (j == 0 || t[j - 1] == '\n' || t[j - 1] == '\r') return true;
  const char c = t[j - 1];
  if (c == '!' || c == '?' || c == ':') return true;
  if (c != '.') return false;
  // Not after a title's period ("Dr. Grey").
  size_t b = j - 1;
  while (b > 0 && absl::ascii_isalpha(t[b - 1])) --b;
  const std::string_view word = t.substr(b, j - 1 - b);
  return !InList(kTitles, word);
}

// ---------------------------------------------------------------------------------------------

WatermarkLexicon::WatermarkLexicon() {
  // The built-in word groups (data/watermark/word_groups.tsv, compiled in). A table that does not
  // parse is a bug of the build, caught by watermark_word_table_test.
  absl::StatusOr<std::vector<WordGroupSpec>> specs = ParseWordGroupTable(DefaultWordGroupTable());
  if (!specs.ok()) std::abort();
  for (auto& spec : *specs) {
    const auto group = static_cast<uint32_t>(words_.size());
    for (size_t v = 0; v < spec.forms.size(); ++v) {
      std::string lower = spec.forms[v];
      for (char& c : lower) c = absl::ascii_tolower(c);
      const bool inserted = forms_.emplace(lower, Form{group, static_cast<uint8_t>(v)}).second;
      if (!inserted) std::abort();  // a form in two groups: a bug in the table (see the test)
      auto index = [&](std::vector<std::array<bool, kMaxIndexedLength + 1>>& starts, std::string_view word) {
        starts[static_cast<unsigned char>(word[0])][std::min<size_t>(word.size(), kMaxIndexedLength)] = true;
      };
      if (const size_t space = lower.find(' '); space != std::string::npos) {
        pair_first_words_.emplace(lower.substr(0, space), true);
        index(pair_starts_, std::string_view(lower).substr(0, space));
      } else {
        index(single_starts_, lower);
      }
    }
    word_preference_.push_back(spec.preference);
    word_before_word_.push_back(spec.before_word);
    word_keys_.push_back(GroupKey(VariantKind::kWord, Fnv1a(spec.forms.front())));
    words_.push_back(std::move(spec.forms));
  }
}

const WatermarkLexicon& WatermarkLexicon::Default() {
  static const WatermarkLexicon* lexicon = new WatermarkLexicon();
  return *lexicon;
}

bool WatermarkLexicon::MayStart(std::string_view lowercase, bool pair) const {
  const auto c = static_cast<unsigned char>(lowercase[0]);
  const size_t length = std::min<size_t>(lowercase.size(), kMaxIndexedLength);
  return (pair ? pair_starts_ : single_starts_)[c][length];
}

const WatermarkLexicon::Form* WatermarkLexicon::FindForm(std::string_view lowercase) const {
  auto it = forms_.find(lowercase);
  return it == forms_.end() ? nullptr : &it->second;
}

VariantSite WatermarkLexicon::WordSite(size_t begin, size_t end, const Form& form) const {
  VariantSite site;
  site.begin = begin;
  site.end = end;
  site.group.kind = VariantKind::kWord;
  site.group.value = form.group;
  site.group.size = static_cast<uint8_t>(words_[form.group].size());
  site.group.preference = word_preference_[form.group];
  site.group.key = word_keys_[form.group];
  site.variant = form.variant;
  return site;
}

bool WatermarkLexicon::MatchWord(std::string_view t, size_t begin, size_t e1, VariantSite* site) const {
  constexpr size_t kMaxForm = 40;
  if (e1 - begin > kMaxForm) return false;
  char buf[2 * kMaxForm + 2];
  for (size_t k = begin; k < e1; ++k) buf[k - begin] = absl::ascii_tolower(t[k]);
  const std::string_view first(buf, e1 - begin);
  // The two-word form starting with the word t[b1, e1_), whose lowercase is already in out[0,
  // e1_ - b1); nullptr if none.
  auto pair_at = [&](size_t b1, size_t e1_, char* out, size_t* e2_out) -> const Form* {
    const std::string_view word(out, e1_ - b1);
    if (!MayStart(word, /*pair=*/true) || e1_ + 1 >= t.size() || t[e1_] != ' ' || !IsTokenStart(t, e1_ + 1) ||
        !pair_first_words_.contains(word)) {
      return nullptr;
    }
    const size_t e2 = TokenEnd(t, e1_ + 1);
    if (e2 - b1 > 2 * kMaxForm) return nullptr;
    for (size_t k = e1_; k < e2; ++k) out[k - b1] = absl::ascii_tolower(t[k]);
    const Form* form = FindForm(std::string_view(out, e2 - b1));
    if (form == nullptr || !RightOk(t, e2)) return nullptr;
    *e2_out = e2;
    return form;
  };
  // A two-word form, unless the next two words also form one ("we will not" is "we won't").
  size_t e2 = 0;
  if (const Form* pair = pair_at(begin, e1, buf, &e2);
      pair != nullptr && ContextAllowed(t, begin, e2, *pair)) {
    const size_t b2 = e1 + 1, b2_end = TokenEnd(t, b2);
    char next[2 * kMaxForm + 2];
    size_t e3 = 0;
    if (b2_end - b2 > kMaxForm) return false;
    for (size_t k = b2; k < b2_end; ++k) next[k - b2] = absl::ascii_tolower(t[k]);
    if (pair_at(b2, b2_end, next, &e3) == nullptr) {
      *site = WordSite(begin, e2, *pair);
      return true;
    }
  }
  if (!RightOk(t, e1)) return false;
  size_t end = e1;
  const bool possessive = first.size() > 2 && first.substr(first.size() - 2) == "'s";
  const Form* single = MayStart(first, /*pair=*/false) ? FindForm(first) : nullptr;
  // A possessive: "Mum's" is a site at "Mum".
  if (single == nullptr && possessive) {
    end = e1 - 2;
    single = FindForm(first.substr(0, first.size() - 2));
  }
  if (single == nullptr || !ContextAllowed(t, begin, end, *single)) return false;
  *site = WordSite(begin, end, *single);
  return true;
}

bool WatermarkLexicon::ContextAllowed(std::string_view t, size_t begin, size_t end, const Form& form) const {
  if (word_before_word_[form.group]) {
    if (end + 1 >= t.size() || t[end] != ' ' || !IsTokenStart(t, end + 1)) return false;
    const size_t next_end = TokenEnd(t, end + 1);
    std::string next(t.substr(end + 1, next_end - end - 1));
    for (char& c : next) c = absl::ascii_tolower(c);
    if (next == "been" || next == "got" || next == "gotten" || next == "had") return false;
  }
  return CaseAllowed(t, begin, form);
}

bool WatermarkLexicon::CaseAllowed(std::string_view t, size_t begin, const Form& form) const {
  // A capitalized word inside a sentence is probably a name ("Harbour Street", "Mr Grey"): not a
  // site, unless the form is capitalized itself ("OK", "I'm", "TV").
  if (!absl::ascii_isupper(t[begin])) return true;
  const std::string& display = words_[form.group][form.variant];
  return absl::ascii_isupper(display[0]) || AtSentenceStart(t, begin);
}

void WatermarkLexicon::Scan(std::string_view t, absl::FunctionRef<void(const VariantSite&)> fn) const {
  RecentSites recent;
  size_t i = 0;
  while (i < t.size()) {
    if (!IsTokenStart(t, i)) {
      ++i;
      continue;
    }
    const size_t e = TokenEnd(t, i);
    // Commas before the token (their span ends where it starts).
    if (VariantSite comma; absl::ascii_isalpha(t[i]) && (MatchOpenerComma(t, i, e, &comma) ||
                                                         MatchConjunctionComma(t, i, e, recent, &comma) ||
                                                         MatchSentenceJoin(t, i, e, &comma))) {
      recent.Add(comma.begin, comma.end);
      fn(comma);
    }
    if (LeftOk(t, i)) {
      VariantSite site;
      bool found = false;
      if (absl::ascii_isdigit(t[i])) {
        found = MatchTime(t, i, &site) || MatchDayMonth(t, i, &site) || MatchPercent(t, i, &site) ||
                MatchCount(t, i, e, &site);
      } else if (absl::ascii_isupper(t[i])) {
        found = MatchMonthDay(t, i, e, &site) || MatchTitle(t, i, e, &site) || MatchCount(t, i, e, &site);
      } else if (absl::ascii_isalpha(t[i])) {
        found = MatchCount(t, i, e, &site);
      }
      found = found || (absl::ascii_isalpha(t[i]) && MatchWord(t, i, e, &site));
      if (found) {
        recent.Add(site.begin, site.end);
        fn(site);
        i = site.end;
        continue;
      }
    }
    i = std::max(e, i + 1);
  }
}

std::vector<VariantSite> WatermarkLexicon::Sites(std::string_view text) const {
  std::vector<VariantSite> sites;
  Scan(text, [&](const VariantSite& s) { sites.push_back(s); });
  return sites;
}

std::string WatermarkLexicon::Render(const VariantSite& site, std::string_view text, int variant) const {
  const VariantGroup& g = site.group;
  switch (g.kind) {
    case VariantKind::kWord:
      return words_[g.value][static_cast<size_t>(variant)];
    case VariantKind::kTitle:
      return std::string(kTitles[g.value]) + (variant == 0 ? "." : "");
    case VariantKind::kTime:
      return RenderTime(static_cast<int>(g.value), variant);
    case VariantKind::kDate:
      return RenderDate(static_cast<int>(g.value / 32), static_cast<int>(g.value % 32), variant);
    case VariantKind::kCount:
      return variant == 0 ? std::to_string(g.value) : NumberWord(static_cast<int>(g.value));
    case VariantKind::kComma:
      return variant == 0 ? ", " : " ";
    case VariantKind::kSentence:
      return variant == 0 ? ". " : "; ";
    case VariantKind::kPercent: {
      const std::string_view span = text.substr(site.begin, site.end - site.begin);
      size_t n = 0;
      while (n < span.size() && (absl::ascii_isdigit(span[n]) || span[n] == '.')) ++n;
      const std::string_view number = span.substr(0, n);
      const char* forms[] = {"%", " percent", " per cent"};
      return std::string(number) + forms[variant];
    }
  }
  return {};
}

}  // namespace bulwark
