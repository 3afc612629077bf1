// CharTrigramModel: how English-like a word's spelling is, as a character trigram language model
// (issue #14 point 7: odd-token triggers). Counts of the trigrams of "^^word$" over WordNet 3.0's
// lemmas and gloss words (data/odd_token/char_trigrams.tsv, written by
// data/odd_token/make_char_trigrams.py; compiled in) are smoothed by Jelinek-Mercer interpolation
// of the trigram, bigram, unigram and uniform estimates (Jelinek and Mercer 1980; Chen and Goodman
// 1999, Sec. 2.3):
//
//   P(c | a b) = l3 C(abc)/C(ab.) + l2 C(bc)/C(b.) + l1 C(c)/C(.) + l0 / 27,
//
// with (l3, l2, l1, l0) = (0.6, 0.3, 0.09, 0.01) over the 27 outcomes a-z and the end '$'. The
// score of a word is its cross-entropy in bits per character: -(1/(n+1)) sum log2 P over its n
// letters and the end. English words score about 2-4 bits; strings no English word resembles
// ("xq", "zvk") 6-10.
#pragma once

#include <absl/status/statusor.h>

#include <array>
#include <string_view>

namespace bulwark {

class CharTrigramModel {
 public:
  // Parses "abc<TAB>count" lines (a, b in '^' or a-z; c in a-z or '$'; count a positive decimal
  // under 2^40). InvalidArgument for any other line or a table with no counts.
  [[nodiscard]] static absl::StatusOr<CharTrigramModel> Parse(std::string_view tsv);
  // The model of the compiled-in table (parsed once; the table is checked by the unit test).
  static const CharTrigramModel& Default();

  // Bits per character of `word`, which must be lower-case a-z (other bytes are skipped); 0 for
  // a word without letters.
  double BitsPerChar(std::string_view word) const;

 private:
  CharTrigramModel() = default;
  static constexpr int kContexts = 27;  // '^' and a-z
  static constexpr int kOutcomes = 27;  // a-z and '$'
  // -log2 P(c | a b), indexed [a * 27 + b] [c]: a, b = 0 for '^' and 1-26 for a-z; c = 0-25 for
  // a-z and 26 for '$'.
  std::array<std::array<float, kOutcomes>, kContexts * kContexts> bits_{};
};

}  // namespace bulwark
