// The punctuation sites of the watermark's channel (see watermark_punctuation_sites.h).
#include "detect/watermark_punctuation_sites.h"

#include <absl/strings/ascii.h>

#include <array>

#include "detect/watermark_scan.h"

namespace bulwark::watermark_scan {

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

namespace {

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

}  // namespace

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

namespace {

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

}  // namespace

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

namespace {

constexpr std::array<std::string_view, 21> kSentenceStarters = {
    "the",  "a",  "an",  "it", "this", "that", "these", "those", "there", "he", "she",
    "they", "we", "you", "my", "our",  "his",  "her",   "their", "its",   "i"};
constexpr std::array<std::string_view, 24> kAbbreviations = {
    "etc", "vs",   "approx", "incl", "misc", "dept", "est", "fig", "jr",  "sr",  "st",  "ave",
    "co",  "corp", "inc",    "ltd",  "no",   "nos",  "vol", "pp",  "min", "max", "ref", "tel"};

}  // namespace

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

}  // namespace bulwark::watermark_scan
