#include "detect/char_watermark.h"

#include <absl/strings/str_cat.h>

#include <cmath>
#include <string>
#include <utility>

#include "core/status_macros.h"
#include "provenance/signer.h"

namespace bulwark {
namespace {

// A deterministic byte stream per context:
// HMAC-SHA256(key, "bulwark.watermark.character.v1|" context "|" counter), counter = 0, 1, ...
class ContextByteStream {
 public:
  ContextByteStream(std::span<const uint8_t> key, int context) : key_(key), context_(context) {}

  absl::StatusOr<uint8_t> Next() {
    if (pos_ == block_.size()) {
      BULWARK_ASSIGN_OR_RETURN(auto block, HmacSha256(key_, absl::StrCat("bulwark.watermark.character.v1|",
                                                                         context_, "|", counter_++)));
      block_ = std::move(block);
      pos_ = 0;
    }
    return static_cast<uint8_t>(block_[pos_++]);
  }

  // Uniform in [0, bound) for 1 <= bound <= 256, by rejection.
  absl::StatusOr<int> Uniform(int bound) {
    const int limit = 256 - 256 % bound;
    while (true) {
      BULWARK_ASSIGN_OR_RETURN(auto b, Next());
      if (b < limit) return b % bound;
    }
  }

 private:
  std::span<const uint8_t> key_;
  int context_;
  uint64_t counter_ = 0;
  std::string block_;
  size_t pos_ = 0;
};

}  // namespace

absl::StatusOr<CharWatermarkScheme> CharWatermarkScheme::Create(std::span<const uint8_t> key, double gamma) {
  if (!(gamma > 0 && gamma < 1)) return absl::InvalidArgumentError("watermark gamma must be in (0, 1)");
  const long green_count = std::lround(gamma * kAlphabet);
  if (green_count < 1 || green_count > kAlphabet - 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("character watermark gamma ", gamma,
                     " leaves no green or no red character: round(gamma * 95) must be "
                     "1 to 94"));
  }
  CharWatermarkScheme scheme;
  scheme.green_count_ = static_cast<int>(green_count);
  scheme.gamma_eff_ = static_cast<double>(green_count) / kAlphabet;
  for (int context = 0; context < kContexts; ++context) {
    std::array<int, kAlphabet> permutation;
    for (int i = 0; i < kAlphabet; ++i) permutation[static_cast<size_t>(i)] = i;
    ContextByteStream stream(key, context);
    for (int i = kAlphabet - 1; i > 0; --i) {  // Fisher-Yates
      BULWARK_ASSIGN_OR_RETURN(auto j, stream.Uniform(i + 1));
      std::swap(permutation[static_cast<size_t>(i)], permutation[static_cast<size_t>(j)]);
    }
    for (int i = 0; i < scheme.green_count_; ++i) {
      scheme.green_[static_cast<size_t>(context)].set(
          static_cast<size_t>(permutation[static_cast<size_t>(i)]));
    }
  }
  return scheme;
}

bool CharWatermarkScheme::IsGreen(unsigned char prev, unsigned char c) const {
  if (c < 0x20 || c > 0x7E) return false;
  return green_[static_cast<size_t>(Context(prev))][c - 0x20];
}

WatermarkScore CharWatermarkScheme::Score(std::string_view text) const {
  WatermarkScore score;
  std::bitset<kContexts * kAlphabet> seen;
  unsigned char prev = 0;
  for (char ch : text) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c <= 0x7E) {
      const size_t context = static_cast<size_t>(Context(prev));
      const size_t pair = context * kAlphabet + (c - 0x20);
      if (!seen[pair]) {
        seen.set(pair);
        ++score.n;
        score.green += green_[context][c - 0x20];
      }
    }
    prev = c;
  }
  if (score.n == 0) return score;  // z 0, p_value 1
  const double n = static_cast<double>(score.n);
  score.expected = gamma_eff_ * n;
  score.z =
      (static_cast<double>(score.green) - score.expected) / std::sqrt(gamma_eff_ * (1 - gamma_eff_) * n);
  score.p_value = 0.5 * std::erfc(score.z / std::sqrt(2.0));
  return score;
}

}  // namespace bulwark
