// The watermark detector's schemes (MemSAD paper Sec. 5 and Appendix C). A WatermarkScheme
// scores a text under a writer's key; the gate's configuration (`watermark.scheme`) picks one:
//   * "lexical" (LexicalWatermarkScheme, below, the default): keyed green variants at the
//     text's substitution sites, with an exact test;
//   * "character" (CharWatermarkScheme, detect/char_watermark.h): keyed green characters after
//     each previous character, with the one-proportion z-test.
// Both are marked by MarkText (detect/watermark_marker.h) through the same substitutions.
//
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
// Why lexical is the default, not characters: the character-level green list over (previous
// character, character) pairs (the paper's App. C; CharWatermarkScheme) counts every character,
// but only a small fraction of a text's characters can change without changing its meaning, so
// marking moves z by only a little and many texts cannot be marked under a given key
// (doc/write_gate.md has the measurements). Scoring only the places where a choice exists removes
// that dilution.
#pragma once

#include <absl/status/statusor.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "detect/siphash.h"
#include "detect/watermark_lexicon.h"

namespace bulwark {

struct WatermarkScore {
  size_t n = 0;         // counted units: substitution sites (lexical), distinct pairs (character)
  size_t green = 0;     // green among them
  double expected = 0;  // the mean green count of unmarked text
  double p_value = 1;   // P(G >= green) for unmarked text (lexical: exact; character: 1 - Phi(z))
  double z = 0;         // lexical: Phi^-1(1 - p_value), in [0, 8]; character: the z-score
};

// The score of n sites with null probabilities `p` of which `green` are green.
WatermarkScore ScoreGreenSites(std::span<const double> p, size_t green);

enum class WatermarkKind { kLexical, kCharacter };
std::string_view ToString(WatermarkKind kind);  // "lexical", "character"
// InvalidArgument for any other name.
absl::StatusOr<WatermarkKind> ParseWatermarkKind(std::string_view name);

// A keyed watermark: how green a text is under the writer's key. Implementations are immutable
// after creation and thread-safe.
class WatermarkScheme {
 public:
  virtual ~WatermarkScheme() = default;

  virtual WatermarkKind kind() const = 0;
  std::string_view name() const { return ToString(kind()); }
  // What WatermarkScore::n counts, for messages: "substitution sites", "distinct character pairs".
  virtual std::string_view unit() const = 0;
  // The green share the null hypothesis uses (character: round(gamma 95) / 95).
  virtual double gamma() const = 0;

  // Scores `text`. Thread-safe.
  virtual WatermarkScore Score(std::string_view text) const = 0;
  // True iff `score` verifies at `z_threshold`: some unit is green and p_value <= 1 -
  // Phi(z_threshold). For the lexical scheme the p-value is exact; for the character scheme it
  // is 1 - Phi(z), so this is z >= z_threshold.
  static bool Verifies(const WatermarkScore& score, double z_threshold);

 protected:
  WatermarkScheme() = default;
  WatermarkScheme(const WatermarkScheme&) = default;
  WatermarkScheme& operator=(const WatermarkScheme&) = default;
};

// The scheme of `kind` under `key`: LexicalWatermarkScheme::Create or CharWatermarkScheme::Create.
absl::StatusOr<std::unique_ptr<WatermarkScheme>> CreateWatermarkScheme(WatermarkKind kind,
                                                                       std::span<const uint8_t> key,
                                                                       double gamma);

class LexicalWatermarkScheme final : public WatermarkScheme {
 public:
  // InvalidArgument unless 0 < gamma < 1.
  static absl::StatusOr<LexicalWatermarkScheme> Create(std::span<const uint8_t> key, double gamma);

  WatermarkKind kind() const override { return WatermarkKind::kLexical; }
  std::string_view unit() const override { return "substitution sites"; }
  // Scores `text`. Thread-safe; allocation-free once its per-thread buffers have grown.
  WatermarkScore Score(std::string_view text) const override;

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

  double gamma() const override { return gamma_; }
  const WatermarkLexicon& lexicon() const { return *lexicon_; }

 private:
  LexicalWatermarkScheme() = default;
  int GreenCount(int size) const;

  SipHashKey key_{};
  double gamma_ = 0;
  const WatermarkLexicon* lexicon_ = nullptr;
};

}  // namespace bulwark
