// AbbreviationModel: how likely a short letter run is as an abbreviation of an English word (issue
// #14 point 7: odd-token triggers, the short runs of code-like tokens).
//
// Users abbreviate by keeping letters of a word in order, usually its first letter and consonants:
// "db" (database), "stg" (staging), "cust" (customer), "cfg", "pkg", "msg". Such a run need not be
// spelled like a word ("db" ends in a pair no English word ends in; the trigram model gives it 6.4
// bits per character), but each letter is one that follows the one before it inside English
// words, at once or one letter later. A made-up trigger's run ("vx", "jxw", "qrz") is not: its
// letters rarely follow one another in any word. So a short run is scored under a skip-bigram
// model of English spelling, estimated from the same WordNet trigram counts as CharTrigramModel
// (data/odd_token/char_trigrams.tsv):
//
//   P(first letter a)  = lambda C(^^a) / C(^^.) + (1 - lambda) / 26
//   P(next b | prev a) = lambda (C(ab) + C(a?b)) / (C(a.) + C(a?.)) + (1 - lambda) / 26
//
// with C(ab) the count of "ab" inside words, C(a?b) of "a", any letter, "b" (both sums of
// trigram counts) and lambda = 0.9. The score is the run's cross-entropy in bits per letter,
// -(1/n) sum log2 P over its n letters, on the same scale as CharTrigramModel::BitsPerChar.
#pragma once

#include <array>
#include <string_view>

namespace bulwark {

class AbbreviationModel {
 public:
  // The model of a trigram table in CharTrigramModel::Parse's format. A table that parser rejects
  // gives the uniform model (every run log2(26) = 4.70 bits per letter).
  static AbbreviationModel FromTrigramTable(std::string_view tsv);
  // The model of the compiled-in table.
  static const AbbreviationModel& Default();

  // Bits per letter of `run`, which must be lower-case a-z (other bytes are skipped); 0 for a
  // run without letters.
  double BitsPerLetter(std::string_view run) const;

 private:
  AbbreviationModel();
  std::array<float, 26> first_{};                 // -log2 P(first letter)
  std::array<std::array<float, 26>, 26> next_{};  // -log2 P(next | prev), [prev][next]
};

}  // namespace bulwark
