#include "detect/watermark.h"

#include <bitset>
#include <cmath>
#include <string>

#include <absl/strings/str_cat.h>

#include "provenance/signer.h"

namespace bulwark {
namespace {

// A deterministic byte stream: HMAC-SHA256(key, "bulwark.watermark.v1" | context | counter).
class KeyedStream {
 public:
  KeyedStream(std::span<const uint8_t> key, int context) : key_(key), context_(context) {}
  absl::StatusOr<uint8_t> Next() {
    if (pos_ == block_.size()) {
      auto block = HmacSha256(key_, absl::StrCat("bulwark.watermark.v1|", context_, "|", counter_++));
      if (!block.ok()) return block.status();
      block_ = *std::move(block);
      pos_ = 0;
    }
    return static_cast<uint8_t>(block_[pos_++]);
  }
  // Uniform in [0, bound) for bound <= 256, by rejection.
  absl::StatusOr<int> Uniform(int bound) {
    const int limit = 256 - 256 % bound;
    while (true) {
      auto b = Next();
      if (!b.ok()) return b.status();
      if (*b < limit) return *b % bound;
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

absl::StatusOr<WatermarkScheme> WatermarkScheme::Create(std::span<const uint8_t> key, double gamma) {
  if (!(gamma > 0 && gamma < 1)) return absl::InvalidArgumentError("watermark gamma must be in (0, 1)");
  const int green_count = static_cast<int>(std::lround(gamma * kAlphabet));
  if (green_count < 1 || green_count > kAlphabet - 1) {
    return absl::InvalidArgumentError("watermark gamma leaves no green or no red character");
  }
  WatermarkScheme scheme;
  scheme.gamma_eff_ = static_cast<double>(green_count) / kAlphabet;
  for (int context = 0; context < kContexts; ++context) {
    std::array<int, kAlphabet> perm;
    for (int i = 0; i < kAlphabet; ++i) perm[i] = i;
    KeyedStream stream(key, context);
    for (int i = kAlphabet - 1; i > 0; --i) {  // Fisher-Yates
      auto j = stream.Uniform(i + 1);
      if (!j.ok()) return j.status();
      std::swap(perm[i], perm[*j]);
    }
    for (int i = 0; i < green_count; ++i) scheme.green_[context][perm[i]] = true;
  }
  return scheme;
}

bool WatermarkScheme::IsGreen(unsigned char prev, unsigned char c) const {
  if (c < 0x20 || c > 0x7E) return false;
  return green_[Context(prev)][c - 0x20];
}

WatermarkScore WatermarkScheme::Score(std::string_view text) const {
  WatermarkScore score;
  std::bitset<kContexts * kAlphabet> seen;
  unsigned char prev = 0;
  for (char ch : text) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c <= 0x7E) {
      const size_t pair = static_cast<size_t>(Context(prev)) * kAlphabet + (c - 0x20);
      if (!seen[pair]) {
        seen[pair] = true;
        ++score.n;
        if (green_[Context(prev)][c - 0x20]) ++score.green;
      }
    }
    prev = c;
  }
  if (score.n > 0) {
    const double n = static_cast<double>(score.n);
    score.z = (static_cast<double>(score.green) - gamma_eff_ * n) / std::sqrt(gamma_eff_ * (1 - gamma_eff_) * n);
  }
  return score;
}

}  // namespace bulwark
