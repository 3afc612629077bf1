// Keyed character-level watermark (MemSAD paper Sec. 5 and Appendix C; Kirchenbauer et al. 2023,
// Zhao et al. 2024). Legitimate writers mark their text at write time; the detector flags entries
// whose green-character z-score is below z_thr (1.5), i.e. text that did not pass through the
// marking pipeline (e.g. records an agent auto-stored from an attacker's conversation).
//
// Green lists: over the 95 printable ASCII characters (0x20-0x7E). The green list at a position
// depends on the key and on the previous character (its class: one of the 95, or "start/other"
// after any other byte), so unmarked text scores z ~ 0 whatever the key, instead of inheriting
// the key's luck with frequent characters such as space and 'e'. Each list holds
// G = round(gamma * 95) characters (the first G of a keyed Fisher-Yates permutation driven by
// HMAC-SHA256 of the key), so the effective green fraction is gamma_eff = G / 95.
//
//   z = (g - gamma_eff n) / sqrt(gamma_eff (1 - gamma_eff) n)
// n: distinct (previous, character) pairs among the text's printable ASCII characters; g: those
// that are green. Counting each pair once (as Kirchenbauer et al. do for repeated n-grams) keeps
// z ~ N(0, 1) on unmarked text: counted with repeats, the frequent pairs ("e ", "th") make z
// swing with the key (we measured a standard deviation of 1.8 across keys on one paragraph).
// Other bytes (newlines, UTF-8 sequences) are not counted and reset the context.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include <absl/status/statusor.h>

namespace bulwark {

struct WatermarkScore {
  size_t n = 0;      // distinct (previous, character) pairs counted
  size_t green = 0;  // green among them
  double z = 0;      // 0 when n == 0
};

class WatermarkScheme {
 public:
  static constexpr int kAlphabet = 95;  // printable ASCII
  static constexpr int kContexts = kAlphabet + 1;

  // InvalidArgument unless 0 < gamma < 1 and round(gamma * 95) is in [1, 94].
  static absl::StatusOr<WatermarkScheme> Create(std::span<const uint8_t> key, double gamma);

  WatermarkScore Score(std::string_view text) const;
  double gamma() const { return gamma_eff_; }

  // True if byte `c` (printable ASCII) is green after byte `prev` (any byte; 0 for the start).
  bool IsGreen(unsigned char prev, unsigned char c) const;

 private:
  WatermarkScheme() = default;
  static int Context(unsigned char prev) {
    return (prev >= 0x20 && prev <= 0x7E) ? prev - 0x20 : kAlphabet;
  }
  // green_[context] bit i set: character 0x20 + i is green in that context.
  std::array<std::array<bool, kAlphabet>, kContexts> green_{};
  double gamma_eff_ = 0;
};

}  // namespace bulwark
