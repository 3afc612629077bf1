// Keyed character-level watermark (MemSAD paper Sec. 5 and Appendix C; Kirchenbauer et al. 2023,
// Zhao et al. 2024): the `watermark.scheme: "character"` alternative to the lexical scheme
// (detect/watermark.h). Legitimate writers mark their text with MarkText, through the same
// substitutions as the lexical scheme; the detector flags text whose z-score is below z_threshold.
//
// Green lists: over the 95 printable ASCII characters (0x20-0x7E). The green list at a position
// depends on the key and on the previous character (one of the 95, or "start/other" after any
// other byte), so unmarked text scores z ~ 0 whatever the key, instead of inheriting the key's
// luck with frequent characters such as space and 'e'. Each list holds G = round(gamma 95)
// characters: the first G of a Fisher-Yates permutation driven by HMAC-SHA256 under the key, one
// per context. The effective green fraction is gamma_eff = G / 95.
//
//   z = (g - gamma_eff n) / sqrt(gamma_eff (1 - gamma_eff) n)       (one-proportion z-test)
// n: distinct (previous, character) pairs among the text's printable ASCII characters; g: those
// that are green. Counting each pair once (as Kirchenbauer et al. do for repeated n-grams) keeps
// z ~ N(0, 1) on unmarked text: counted with repeats, the frequent pairs ("e ", "th") make z swing
// with the key. Other bytes (newlines, UTF-8 sequences) are not counted and reset the context.
// The p-value reported is the normal approximation 1 - Phi(z), so a text verifies iff z >=
// z_threshold (WatermarkScheme::Verifies) and at least one pair is green.
#pragma once

#include <absl/status/statusor.h>

#include <array>
#include <bitset>
#include <cstdint>
#include <span>
#include <string_view>

#include "detect/watermark.h"

namespace bulwark {

class CharWatermarkScheme final : public WatermarkScheme {
 public:
  static constexpr int kAlphabet = 95;             // printable ASCII, 0x20-0x7E
  static constexpr int kContexts = kAlphabet + 1;  // the previous character, or start/other

  // InvalidArgument unless 0 < gamma < 1 and G = round(gamma 95) is in [1, 94] (so gamma in
  // about [0.0053, 0.9947)); an error of HMAC-SHA256 otherwise.
  static absl::StatusOr<CharWatermarkScheme> Create(std::span<const uint8_t> key, double gamma);

  WatermarkKind kind() const override { return WatermarkKind::kCharacter; }
  std::string_view unit() const override { return "distinct character pairs"; }
  double gamma() const override { return gamma_eff_; }  // G / 95

  // Scores `text` (see above). Thread-safe, allocation-free. For n == 0: z 0, p_value 1.
  WatermarkScore Score(std::string_view text) const override;

  // True iff byte `c` is printable ASCII and green after byte `prev` (any byte; 0 at the start).
  bool IsGreen(unsigned char prev, unsigned char c) const;
  int green_count() const { return green_count_; }  // G, per context

 private:
  CharWatermarkScheme() = default;
  static int Context(unsigned char prev) { return (prev >= 0x20 && prev <= 0x7E) ? prev - 0x20 : kAlphabet; }

  // green_[context][i]: character 0x20 + i is green in that context.
  std::array<std::bitset<kAlphabet>, kContexts> green_{};
  int green_count_ = 0;
  double gamma_eff_ = 0;
};

}  // namespace bulwark
