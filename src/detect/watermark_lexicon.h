// The watermark's substitution channel: the places in a text where a writer can choose between
// spellings that mean the same thing, and the choices at each place.
//
// A *group* is one such choice: "do not" | "don't"; "colour" | "color"; for one time of day
// "4pm" | "4 pm" | "4 p.m." | "4:00pm" | "4:00 pm" | "4:00 p.m." | "16:00". A *site* is an
// occurrence of one of a group's variants in a text. The detector scores which variants a text
// uses and the marker changes them; both find sites with this one scanner, so a marked text reads
// back exactly as it was marked.
//
// What the channel may change (doc/write_gate.md lists it for users):
//   * contractions that have a single expansion ("do not" | "don't"; not "it's", which may be
//     "it has", nor "let's", since "let us know" is not "let's know"),
//   * British and American spellings ("colour" | "color", "organise" | "organize", ...),
//   * spelling and hyphenation variants ("e-mail" | "email", "okay" | "OK", "toward" | "towards"),
//   * a few interchangeable words and phrases ("someone" | "somebody", "for example" |
//     "for instance", "often" | "frequently", ...),
//   * titles with or without the period ("Dr." | "Dr" before a capitalized name),
//   * times of day, dates without a year, percentages, and counts of 2 to 99 before a plural
//     noun ("3 days" | "three days"),
//   * optional commas: the serial comma ("A, B, and C" | "A, B and C"), before a conjunction
//     that starts a clause with a pronoun subject (", and we" | " and we"), and after a short
//     opening phrase ("Last year, we" | "Last year we"),
//   * two sentences joined by a semicolon or not (". The" | "; the"), where the second starts
//     with a pronoun or determiner.
// Words match case-insensitively on word boundaries (not inside e-mail addresses, URLs, file
// names or hyphenated compounds); multi-word variants need single spaces; dates need a
// capitalized month. Ranges ("3-4pm", "1 to 3 June") and dates with a year are not sites.
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/functional/function_ref.h>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "embed/string_view_hash.h"

namespace bulwark {

enum class VariantKind : uint8_t { kWord = 1, kTitle, kTime, kDate, kPercent, kCount, kComma, kSentence };

struct VariantGroup {
  VariantKind kind = VariantKind::kWord;
  // kWord/kTitle: the index in the built-in table; kTime: minutes since midnight; kDate:
  // month * 32 + day; kCount: the number; kComma: which comma (before "and", "or", "but", "so",
  // or after an opening phrase); kPercent: unused (the number is in the text).
  uint32_t value = 0;
  uint8_t size = 0;  // number of variants, 2 to 7
  // How safe an edit here is, for the marker's order: 0 (contractions, spellings, formatting,
  // optional commas), 1 (times, dates, percentages, counts), 2 (sentences joined by a
  // semicolon or not), 3 (interchangeable words).
  uint8_t preference = 0;
  // The group's identity for the keyed hash: the kind in the top byte, then a value that does
  // not change when groups are added to the table (for words, a hash of the first variant).
  uint64_t key = 0;
};

struct VariantSite {
  size_t begin = 0, end = 0;  // byte span in the text
  VariantGroup group;
  uint8_t variant = 0;  // which of the group's variants the text uses
};

// True if position i of `text` starts a sentence: the start of the text or of a line, or after
// ".", "!", "?" or ":" (not a title's period), skipping spaces, quotes and "(".
bool AtSentenceStart(std::string_view text, size_t i);

class WatermarkLexicon {
 public:
  // The built-in channel (a process-wide constant).
  static const WatermarkLexicon& Default();

  // Calls fn(site) for every site of `text`, left to right, non-overlapping. Allocation-free.
  void Scan(std::string_view text, absl::FunctionRef<void(const VariantSite&)> fn) const;
  std::vector<VariantSite> Sites(std::string_view text) const;

  // Variant `variant` of the site's group as it is written (the site's own text supplies the
  // number of a percentage).
  std::string Render(const VariantSite& site, std::string_view text, int variant) const;

  // The built-in word groups (kWord), each a list of variants as displayed.
  const std::vector<std::vector<std::string>>& word_groups() const { return words_; }

 private:
  WatermarkLexicon();
  struct Form {
    uint32_t group;
    uint8_t variant;
  };
  const Form* FindForm(std::string_view lowercase) const;
  // Whether some single-word form (or the first word of a two-word form) has the first letter
  // and the length of `lowercase`: a filter before hashing, since most words are not forms.
  bool MayStart(std::string_view lowercase, bool pair) const;
  static constexpr size_t kMaxIndexedLength = 24;
  bool CaseAllowed(std::string_view text, size_t begin, const Form& form) const;
  bool ContextAllowed(std::string_view text, size_t begin, size_t end, const Form& form) const;
  // The word form at the token t[begin, end), or the two-word form it starts.
  bool MatchWord(std::string_view text, size_t begin, size_t end, VariantSite* site) const;
  VariantSite WordSite(size_t begin, size_t end, const Form& form) const;

  std::vector<std::vector<std::string>> words_;  // display forms by group
  std::vector<uint8_t> word_preference_;
  std::vector<bool> word_before_word_;
  std::vector<uint64_t> word_keys_;
  absl::flat_hash_map<std::string, Form, StringViewHash, StringViewEq> forms_;  // lowercase form
  absl::flat_hash_map<std::string, bool, StringViewHash, StringViewEq> pair_first_words_;
  std::vector<std::array<bool, kMaxIndexedLength + 1>> single_starts_ =
      std::vector<std::array<bool, kMaxIndexedLength + 1>>(256);  // [first byte][min(length, 24)]
  std::vector<std::array<bool, kMaxIndexedLength + 1>> pair_starts_ =
      std::vector<std::array<bool, kMaxIndexedLength + 1>>(256);
};

}  // namespace bulwark
