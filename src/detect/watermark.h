// Keyed lexical watermark (MemSAD paper Sec. 5 and Appendix C; the green-list idea of
// Kirchenbauer et al. 2023 and Zhao et al. 2024, applied to the choices a writer can make without
// changing meaning). Legitimate writers mark their text at write time (`bulwark watermark mark`);
// the detector flags entries that do not verify, i.e. text that did not pass through the marking
// pipeline (e.g. records an agent auto-stored from an attacker's conversation).
//
// The channel is WatermarkLexicon: groups of equivalent spellings ("do not" | "don't", "colour" |
// "color", "4pm" | "4 pm" | ... | "16:00", "A, B, and C" | "A, B and C"). A site is one
// occurrence of a group in the text; the r-th occurrence of group c (r = 0, 1, ...) has its own
// green list: of its k variants, the G = max(1, floor(gamma k)) with the smallest
// SipHash-2-4(key, c, r, variant). So whatever an unmarked text says, it uses a green variant at
// site i with probability p_i = G_i / k_i, independently across sites (distinct hash inputs).
// Occurrences are numbered in text order, which marking does not change.
//
// The statistic is the number g of green sites among the n sites of the text. For unmarked text
// g is a sum of independent Bernoulli(p_i) (a Poisson binomial), and the test is exact:
//   p_value = P(G >= g)   (computed by dynamic programming, O(n^2))
//   z       = Phi^-1(1 - p_value), clamped to [0, 8]
// A text verifies iff z >= z_threshold (1.5), i.e. p_value <= 1 - Phi(1.5) = 0.0668: the false
// acceptance rate of unmarked text is at most that, for every text length, and lower for short
// texts whose few sites cannot reach it. Every site can be turned green by the marker, so a text
// can be marked iff p_value with all its sites green is <= that level (4 two-way sites, or
// fewer with times and dates); see watermark_marker.h.
//
// Why not characters: the scheme first used a character-level green list over (previous
// character, character) pairs (the paper's App. C). Only a small fraction of a text's characters
// can change without changing its meaning, so marking moved z by about +1.5 to +2 on a
// 400-character paragraph and reached z >= 1.5 for about 60% of keys (measured). Scoring only the
// places where a choice exists removes that dilution.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include <absl/status/statusor.h>

#include "detect/siphash.h"
#include "detect/watermark_lexicon.h"

namespace bulwark {

struct WatermarkScore {
  size_t n = 0;         // substitution sites in the text
  size_t green = 0;     // green among them
  double expected = 0;  // sum of p_i: the mean green count of unmarked text
  double p_value = 1;   // P(G >= green) for unmarked text
  double z = 0;         // Phi^-1(1 - p_value), in [0, 8]
};

// The score of n sites with null probabilities `p` of which `green` are green.
WatermarkScore ScoreGreenSites(std::span<const double> p, size_t green);

class WatermarkScheme {
 public:
  // InvalidArgument unless 0 < gamma < 1.
  static absl::StatusOr<WatermarkScheme> Create(std::span<const uint8_t> key, double gamma);

  // Scores `text`. Thread-safe; allocation-free once its per-thread buffers have grown.
  WatermarkScore Score(std::string_view text) const;
  // True iff `score` verifies at `z_threshold`: p_value <= 1 - Phi(z_threshold).
  static bool Verifies(const WatermarkScore& score, double z_threshold);

  // The green variants of the `occurrence`-th site of `group` in a text (bit v: variant v).
  uint32_t GreenMask(const VariantGroup& group, uint32_t occurrence) const;
  // G / k: the probability that unmarked text uses a green variant at a site of `group`.
  double GreenFraction(const VariantGroup& group) const;
  // The sites of `text` with their occurrence numbers and whether each is green.
  struct ScoredSite {
    VariantSite site;
    uint32_t occurrence = 0;
    uint32_t green_mask = 0;
    bool green() const { return (green_mask >> site.variant) & 1; }
  };
  std::vector<ScoredSite> ScoredSites(std::string_view text) const;

  double gamma() const { return gamma_; }
  const WatermarkLexicon& lexicon() const { return *lexicon_; }

 private:
  WatermarkScheme() = default;
  int GreenCount(int size) const;

  SipHashKey key_{};
  double gamma_ = 0;
  const WatermarkLexicon* lexicon_ = nullptr;
};

}  // namespace bulwark
