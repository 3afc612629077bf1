// The number sites of the watermark's channel (see watermark_number_sites.h).
#include "detect/watermark_number_sites.h"

#include <absl/strings/ascii.h>

#include <algorithm>
#include <array>
#include <cstdio>

#include "detect/watermark_scan.h"

namespace bulwark::watermark_scan {

// ---------------------------------------------------------------------------------------------
// Times of day.
//
// Variants of a time with minute 0: 4pm, 4 pm, 4:00pm, 4:00 pm, 16:00; with another minute:
// 4:30pm, 4:30 pm, 16:30 (am, pm in any case). Only times from 13:00 to 23:59 and from 00:00 to
// 09:59 (written 09:30) have the 24-hour form: a bare "10:30" or "12:30" may be either. The
// dotted "4 p.m." is not a site: its period may also end the sentence, and removing it would
// change what the other sites read.

namespace {

// The 24-hour form only where it cannot be read as 12-hour: 13:00-23:59 and 00:00-09:59.
bool Has24HourForm(int minutes) { return minutes / 60 >= 13 || minutes / 60 <= 9; }

int TimeVariants(int minutes) { return (minutes % 60 == 0 ? 4 : 2) + (Has24HourForm(minutes) ? 1 : 0); }

}  // namespace

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

namespace {

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

}  // namespace

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

namespace {

constexpr std::array<std::string_view, 20> kSmallNumbers = {
    "",         "one",     "two",     "three",     "four",     "five",    "six",
    "seven",    "eight",   "nine",    "ten",       "eleven",   "twelve",  "thirteen",
    "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"};
constexpr std::array<std::string_view, 10> kTens = {"",      "",      "twenty",  "thirty", "forty",
                                                    "fifty", "sixty", "seventy", "eighty", "ninety"};

}  // namespace

std::string NumberWord(int n) {
  if (n < 20) return std::string(kSmallNumbers[static_cast<size_t>(n)]);
  std::string word(kTens[static_cast<size_t>(n / 10)]);
  if (n % 10 != 0) word += "-" + std::string(kSmallNumbers[static_cast<size_t>(n % 10)]);
  return word;
}

namespace {

// The number written in words as t[i, e) (any case): "seven", "twenty", "forty-two"; or 0.
int ParseNumberWord(std::string_view t, size_t i, size_t e) {
  if (e - i < 3 || e - i > 13) return 0;
  // Every number word from two to ninety-nine starts with one of these.
  const char p[3] = {absl::ascii_tolower(t[i]), absl::ascii_tolower(t[i + 1]), absl::ascii_tolower(t[i + 2])};
  // A constant table (an initializer list of literals here took a strlen of each on every call),
  // compared byte by byte (no memcmp call for three bytes).
  static constexpr char kStarts[][3] = {{'t', 'w', 'o'}, {'t', 'h', 'r'}, {'t', 'h', 'i'}, {'t', 'w', 'e'},
                                        {'t', 'e', 'n'}, {'f', 'o', 'u'}, {'f', 'o', 'r'}, {'f', 'i', 'v'},
                                        {'f', 'i', 'f'}, {'s', 'i', 'x'}, {'s', 'e', 'v'}, {'e', 'i', 'g'},
                                        {'e', 'l', 'e'}, {'n', 'i', 'n'}};
  bool known = false;
  for (const char* start : kStarts)
    known = known || (p[0] == start[0] && p[1] == start[1] && p[2] == start[2]);
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

}  // namespace

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

}  // namespace bulwark::watermark_scan
