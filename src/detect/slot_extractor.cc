#include "detect/slot_extractor.h"

#include <absl/container/flat_hash_set.h>
#include <absl/strings/ascii.h>
#include <absl/strings/numbers.h>
#include <absl/strings/str_cat.h>
#include <absl/strings/str_split.h>
#include <re2/re2.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <span>

#include "core/strings.h"

namespace bulwark {
namespace {

// One pattern, one capture group per kind, tried left to right at each position (RE2's
// leftmost-first alternation): the more specific shapes come first so that "9:30am" is a time, not
// a number, and "$1,200" an amount. Group order: email, url, phone, time, date, amount, number
// with unit, account code, number.
constexpr char kMonth[] =
    "jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|"
    "oct(?:ober)?|nov(?:ember)?|dec(?:ember)?";
constexpr char kMonthWord[] =
    "january|february|march|april|june|july|august|september|october|november|december";
constexpr char kUnit[] =
    "kg|g|lbs?|oz|c|f|km|mi|m|cm|mm|l|ml|h|hrs?|hours?|mins?|minutes?|days?|weeks?|months?|years?|"
    "nights?|k|x|degrees?|people|persons?|seats?|sacks?|boxes|items?|units?|credits?|times";
constexpr char kNumberWords[] =
    "two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|fifty|"
    "hundred|thousand";

const RE2& SlotPattern() {
  static const RE2* re = [] {
    const std::string p = absl::StrCat(
        "(?i)",
        // 1 email
        "([a-z0-9._%+\\-]+@[a-z0-9\\-]+(?:\\.[a-z0-9\\-]+)+)|",
        // 2 url: with a scheme or www., or a bare domain of a common top-level domain
        "((?:https?://|www\\.)[^\\s<>\"'()]+|\\b[a-z0-9\\-]+(?:\\.[a-z0-9\\-]+)*\\.",
        "(?:com|org|net|io|edu|gov|example|co|app|dev|info)\\b(?:/[^\\s<>\"'()]*)?)|",
        // 3 phone
        "((?:\\+\\d{1,3}[ .\\-]?)?(?:\\(\\d{3}\\)\\s?|\\b\\d{3}[ .\\-])\\d{3}[ "
        ".\\-]\\d{4}\\b|\\b\\d{3}-\\d{4}\\b)|",
        // 4 time
        "(\\b\\d{1,2}(?::[0-5]\\d)?\\s?(?:(?:am|pm)\\b|[ap]\\.m\\.)|\\b(?:[01]?\\d|2[0-3])[:h][0-5]\\d\\b|",
        "\\bnoon\\b|\\bmidnight\\b)|",
        // 5 date
        "(\\b(?:", kMonth,
        ")\\.?\\s+\\d{1,2}(?:st|nd|rd|th)?\\b(?:,?\\s+\\d{4}\\b)?|\\b\\d{1,2}(?:st|nd|rd|th)?",
        "\\s+(?:of\\s+)?(?:", kMonth, ")\\b(?:,?\\s+\\d{4}\\b)?|\\b\\d{4}-\\d{2}-\\d{2}\\b|",
        "\\b\\d{1,2}/\\d{1,2}(?:/\\d{2,4})?\\b|\\b(?:mon|tues|wednes|thurs|fri|satur|sun)days?\\b|\\b(?:",
        kMonthWord, ")\\b)|",
        // 6 amount
        "([$\xE2\x82\xAC\xC2\xA3]\\s?\\d(?:[\\d,]*\\d)?(?:\\.\\d+)?(?:\\s?(?:k|m|million|billion|bn)\\b)?|",
        "\\b\\d(?:[\\d,]*\\d)?(?:\\.\\d+)?\\s?(?:%|percent\\b|per "
        "cent\\b|dollars?\\b|usd\\b|eur\\b|euros?\\b|",
        "pounds?\\b|cents?\\b))|",
        // 7 number with a unit
        "(\\b\\d(?:[\\d,]*\\d)?(?:\\.\\d+)?(?:\\s?-?\\s?|\\xC2\\xB0)(?:", kUnit, ")\\b)|",
        // 8 account code: a token with letters and digits, or #digits
        "(#\\d{2,}\\b|\\b[a-z0-9]*(?:[a-z][\\-_]?[0-9]|[0-9][\\-_]?[a-z])[a-z0-9]*(?:[\\-_/][a-z0-9]+)*\\b)|",
        // 9 number
        "(\\b\\d(?:[\\d,]*\\d)?(?:\\.\\d+)?\\b|\\b(?:", kNumberWords, ")\\b)");
    return new RE2(p);
  }();
  return *re;
}

constexpr std::array<SlotKind, 9> kGroupKinds = {SlotKind::kEmail,  SlotKind::kUrl,     SlotKind::kPhone,
                                                 SlotKind::kTime,   SlotKind::kDate,    SlotKind::kAmount,
                                                 SlotKind::kNumber, SlotKind::kAccount, SlotKind::kNumber};

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = absl::ascii_tolower(static_cast<unsigned char>(c));
  return out;
}

std::string DigitsOnly(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (absl::ascii_isdigit(static_cast<unsigned char>(c))) out.push_back(c);
  }
  return out;
}

// "1,200.50" -> "1200.5", "31.00" -> "31"; number words -> digits.
std::string CanonicalNumber(std::string_view s) {
  static const std::array<std::pair<const char*, const char*>, 18> kWords = {{{"two", "2"},
                                                                              {"three", "3"},
                                                                              {"four", "4"},
                                                                              {"five", "5"},
                                                                              {"six", "6"},
                                                                              {"seven", "7"},
                                                                              {"eight", "8"},
                                                                              {"nine", "9"},
                                                                              {"ten", "10"},
                                                                              {"eleven", "11"},
                                                                              {"twelve", "12"},
                                                                              {"fifteen", "15"},
                                                                              {"twenty", "20"},
                                                                              {"thirty", "30"},
                                                                              {"forty", "40"},
                                                                              {"fifty", "50"},
                                                                              {"hundred", "100"},
                                                                              {"thousand", "1000"}}};
  const std::string lower = Lower(s);
  for (const auto& [word, digits] : kWords) {
    if (lower == word) return digits;
  }
  std::string out;
  for (char c : s) {
    if (absl::ascii_isdigit(static_cast<unsigned char>(c)) || c == '.') out.push_back(c);
  }
  if (const size_t dot = out.find('.'); dot != std::string::npos) {
    while (!out.empty() && out.back() == '0') out.pop_back();
    if (!out.empty() && out.back() == '.') out.pop_back();
  }
  return out;
}

// The leading number of `s` and the letters after it, lower case, plural s dropped: "12-hour" ->
// "12 hour", "25 kg" -> "25 kg".
std::string NumberWithUnit(std::string_view s) {
  size_t i = 0;
  while (i < s.size() &&
         (absl::ascii_isdigit(static_cast<unsigned char>(s[i])) || s[i] == ',' || s[i] == '.'))
    ++i;
  std::string unit;
  for (size_t j = i; j < s.size(); ++j) {
    if (absl::ascii_isalpha(static_cast<unsigned char>(s[j]))) unit.push_back(absl::ascii_tolower(s[j]));
  }
  if (unit.size() > 2 && unit.back() == 's') unit.pop_back();
  return absl::StrCat(CanonicalNumber(s.substr(0, i)), " ", unit);
}

// "9am", "9:30 p.m.", "21:30", "21h30", "noon" -> "HH:MM" (24-hour).
std::string CanonicalTime(std::string_view s) {
  const std::string lower = Lower(s);
  if (lower == "noon") return "12:00";
  if (lower == "midnight") return "00:00";
  int hour = 0, minute = 0;
  size_t i = 0;
  while (i < lower.size() && absl::ascii_isdigit(static_cast<unsigned char>(lower[i]))) {
    hour = hour * 10 + (lower[i++] - '0');
  }
  if (i < lower.size() && (lower[i] == ':' || lower[i] == 'h')) {
    ++i;
    while (i < lower.size() && absl::ascii_isdigit(static_cast<unsigned char>(lower[i]))) {
      minute = minute * 10 + (lower[i++] - '0');
    }
  }
  const bool pm = lower.find('p') != std::string::npos;
  const bool am = lower.find('a') != std::string::npos;
  if (pm && hour < 12) hour += 12;
  if (am && hour == 12) hour = 0;
  char buf[8];
  std::snprintf(buf, sizeof buf, "%02d:%02d", hour % 24, minute % 60);
  return buf;
}

// Month and weekday names to their first three letters, ordinals and "of" and commas dropped,
// day before month: "1st of June" and "June 1" -> "jun 1"; "Tuesdays" -> "tue".
std::string CanonicalDate(std::string_view s) {
  std::string month, day, year, other;
  for (absl::string_view word : absl::StrSplit(ToAbsl(s), absl::ByAnyChar(" ,./-"), absl::SkipEmpty())) {
    std::string w = Lower(std::string_view(word.data(), word.size()));
    if (absl::ascii_isdigit(static_cast<unsigned char>(w[0]))) {
      std::string digits = DigitsOnly(w);
      if (digits.size() == 4) {
        year = digits;
      } else if (day.empty()) {
        day = std::to_string(std::atoi(digits.c_str()));
      } else {
        other = absl::StrCat(other, "/", std::atoi(digits.c_str()));
      }
    } else if (w != "of") {
      month = w.substr(0, 3);
    }
  }
  std::string out = month;
  for (const std::string& part : {absl::StrCat(day, other), year}) {
    if (part.empty()) continue;
    if (!out.empty()) out.push_back(' ');
    out += part;
  }
  return out;
}

std::string CanonicalUrl(std::string_view s) {
  std::string u = Lower(s);
  for (std::string_view prefix : {"https://", "http://"}) {
    if (u.starts_with(prefix)) u.erase(0, prefix.size());
  }
  if (u.starts_with("www.")) u.erase(0, 4);
  while (!u.empty() && (u.back() == '/' || u.back() == '.' || u.back() == ',' || u.back() == ';' ||
                        u.back() == ':' || u.back() == '!' || u.back() == '?')) {
    u.pop_back();
  }
  return u;
}

std::string Normalise(SlotKind kind, int group, std::string_view text) {
  switch (kind) {
    case SlotKind::kTime:
      return CanonicalTime(text);
    case SlotKind::kDate:
      return CanonicalDate(text);
    case SlotKind::kAmount: {
      std::string currency;
      for (char c : text) {
        if (c == '$' || c == '%') currency.push_back(c);
      }
      if (text.find('\xE2') != std::string_view::npos) currency += "eur";
      if (text.find('\xC2') != std::string_view::npos) currency += "gbp";
      const std::string lower = Lower(text);
      if (lower.find("per") != std::string::npos) currency += "%";
      const char mult = lower.ends_with("k")                                 ? 'k'
                        : lower.ends_with("m") || lower.ends_with("million") ? 'm'
                                                                             : ' ';
      return absl::StrCat(currency, CanonicalNumber(text), mult == ' ' ? "" : std::string(1, mult));
    }
    case SlotKind::kNumber:
      return group == 7 ? NumberWithUnit(text) : CanonicalNumber(text);
    case SlotKind::kPhone:
      return DigitsOnly(text);
    case SlotKind::kUrl:
      return CanonicalUrl(text);
    default:
      return Lower(text);
  }
}

bool IsNegation(std::string_view lower_word) {
  static const auto* words = new absl::flat_hash_set<std::string_view>{
      "not", "no", "never", "cannot", "without", "none", "nobody", "nothing", "neither", "nor", "nowhere"};
  return words->contains(lower_word) || lower_word.ends_with("n't") || lower_word.ends_with("n\xE2\x80\x99t");
}

// Capitalised words that are not names: sentence openers, pronouns, titles of notes.
bool IsCommonCapitalised(std::string_view lower_word) {
  static const auto* words = new absl::flat_hash_set<std::string_view>{
      "a",       "an",        "the",      "i",         "i'm",      "i'll",       "my",        "our",
      "we",      "you",       "your",     "he",        "she",      "they",       "it",        "its",
      "this",    "that",      "these",    "those",     "please",   "note",       "notes",     "update",
      "updated", "reminder",  "remember", "always",    "never",    "do",         "don't",     "if",
      "when",    "on",        "in",       "at",        "for",      "from",       "to",        "and",
      "but",     "or",        "so",       "new",       "old",      "every",      "each",      "all",
      "no",      "yes",       "also",     "then",      "there",    "here",       "today",     "tomorrow",
      "tonight", "yesterday", "next",     "last",      "after",    "before",     "with",      "by",
      "as",      "is",        "are",      "was",       "be",       "not",        "what",      "who",
      "where",   "why",       "how",      "ok",        "okay",     "fyi",        "re",        "fwd",
      "hi",      "hello",     "dear",     "thanks",    "thank",    "mon",        "tue",       "wed",
      "thu",     "fri",       "sat",      "sun",       "monday",   "tuesday",    "wednesday", "thursday",
      "friday",  "saturday",  "sunday",   "january",   "february", "march",      "april",     "may",
      "june",    "july",      "august",   "september", "october",  "november",   "december",  "order",
      "invoice", "meeting",   "call",     "email",     "e-mail",   "subject",    "from",      "sent",
      "draft",   "todo",      "task",     "important", "urgent",   "correction", "change",    "changed",
      "moved",   "now",       "still",    "just",      "keep",     "make",       "send",      "ask",
      "tell",    "use",       "get",      "pick",      "book",     "check",      "call",      "buy",
      "am",      "pm",        "mr",       "mrs",       "ms",       "dr",         "prof",      "st"};
  if (words->contains(lower_word)) return true;
  // Plurals of the above ("Tuesdays", "Notes").
  return lower_word.size() > 3 && lower_word.back() == 's' &&
         words->contains(lower_word.substr(0, lower_word.size() - 1));
}

// Names: runs of capitalised words (first letter upper case, one lower-case letter or all capitals
// of 2+ letters) that are not common openers; a run is one name ("Green Valley Dairy"). Negations
// are counted in the same word scan.
// Words inside a span the slot pattern matched (`covered`, sorted byte ranges) are not names.
void ScanWords(std::string_view text, std::span<const std::pair<size_t, size_t>> covered, TextSlots* out) {
  std::string run_text;
  auto flush = [&] {
    if (!run_text.empty()) out->slots.push_back({SlotKind::kName, Lower(run_text), run_text});
    run_text.clear();
  };
  size_t i = 0;
  while (i < text.size()) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (!absl::ascii_isalpha(c)) {
      // A run continues over single spaces and hyphens only.
      if (!(c == ' ' || c == '-') || run_text.empty()) flush();
      ++i;
      continue;
    }
    size_t j = i;
    while (j < text.size() && (absl::ascii_isalpha(static_cast<unsigned char>(text[j])) || text[j] == '\'' ||
                               (text.substr(j).starts_with("\xE2\x80\x99")))) {
      j += text[j] == '\xE2' ? 3 : 1;
    }
    const std::string_view word = text.substr(i, j - i);
    const bool inside = std::any_of(covered.begin(), covered.end(), [i](const std::pair<size_t, size_t>& r) {
      return i >= r.first && i < r.second;
    });
    const bool capitalised =
        !inside && absl::ascii_isupper(static_cast<unsigned char>(word[0])) && word.size() >= 2;
    // Only words that can be a negation or a name are lowered (the common case allocates nothing).
    const char first = absl::ascii_tolower(static_cast<unsigned char>(word[0]));
    const bool may_negate = first == 'n' || first == 'c' || first == 'w' || word.ends_with("t");
    std::string lower;
    if (may_negate || capitalised) lower = Lower(word);
    if (may_negate && IsNegation(lower)) ++out->negations;
    if (capitalised && !IsCommonCapitalised(lower)) {
      if (!run_text.empty()) run_text.push_back(' ');
      run_text.append(word);
    } else {
      flush();
    }
    i = j;
  }
  flush();
}

}  // namespace

std::string_view SlotKindName(SlotKind kind) {
  static constexpr std::array<std::string_view, 9> kNames = {"time", "date",  "amount",  "number", "email",
                                                             "url",  "phone", "account", "name"};
  return kNames[static_cast<size_t>(kind)];
}

TextSlots ExtractSlots(std::string_view text) {
  text = text.substr(0, std::min(text.size(), kMaxSlotTextBytes));
  TextSlots out;
  const RE2& re = SlotPattern();
  std::array<re2::StringPiece, 9> groups;
  std::array<RE2::Arg, 9> args;
  std::array<const RE2::Arg*, 9> arg_ptrs;
  for (size_t g = 0; g < groups.size(); ++g) {
    args[g] = &groups[g];
    arg_ptrs[g] = &args[g];
  }
  re2::StringPiece rest(text.data(), text.size());
  absl::InlinedVector<std::pair<size_t, size_t>, 8> covered;
  while (RE2::FindAndConsumeN(&rest, re, arg_ptrs.data(), static_cast<int>(arg_ptrs.size()))) {
    for (size_t g = 0; g < groups.size(); ++g) {
      if (groups[g].data() == nullptr || groups[g].empty()) continue;
      const std::string_view match(groups[g].data(), groups[g].size());
      const size_t begin = static_cast<size_t>(match.data() - text.data());
      covered.emplace_back(begin, begin + match.size());
      out.slots.push_back(
          {kGroupKinds[g], Normalise(kGroupKinds[g], static_cast<int>(g) + 1, match), std::string(match)});
      break;
    }
    for (auto& g : groups) g = {};
  }
  ScanWords(text, covered, &out);
  return out;
}

SlotDiff DiffSlots(const TextSlots& original, const TextSlots& updated) {
  SlotDiff diff;
  diff.polarity_changed = original.negated() != updated.negated();
  for (int k = 0; k < 9; ++k) {
    const SlotKind kind = static_cast<SlotKind>(k);
    absl::InlinedVector<const Slot*, 4> only_old, only_new;
    auto contains = [kind](const TextSlots& in, const std::string& value) {
      return std::any_of(in.slots.begin(), in.slots.end(),
                         [&](const Slot& s) { return s.kind == kind && s.value == value; });
    };
    for (const Slot& s : original.slots) {
      if (s.kind == kind && !contains(updated, s.value)) only_old.push_back(&s);
    }
    for (const Slot& s : updated.slots) {
      if (s.kind == kind && !contains(original, s.value)) only_new.push_back(&s);
    }
    for (size_t i = 0; i < std::min(only_old.size(), only_new.size()); ++i) {
      diff.changes.push_back({kind, only_old[i]->text, only_new[i]->text});
    }
  }
  return diff;
}

}  // namespace bulwark
