#include "core/ids.h"

#include <absl/synchronization/mutex.h>

#include <cstring>

namespace bulwark {
namespace {
constexpr char kCrockford[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
}  // namespace

std::string IdGenerator::Next() {
  absl::MutexLock lock(&mu_);
  int64_t ms = env_->NowMicros() / 1000;
  if (ms <= last_ms_) {
    ms = last_ms_;  // clock went back or same millisecond: keep order by incrementing
    for (int i = 9; i >= 0; --i) {
      if (++last_random_[i] != 0) break;
    }
  } else {
    if (drawn_used_ == drawn_.size()) {
      env_->RandomBytes(drawn_);
      drawn_used_ = 0;
    }
    std::memcpy(last_random_.data(), drawn_.data() + drawn_used_, kRandomBytes);
    drawn_used_ += kRandomBytes;
    last_random_[0] &= 0x7f;  // leave room to increment without wrapping
    last_ms_ = ms;
  }
  // 128 bits: 48 timestamp + 80 random, encoded as 26 base32 digits (the top digit holds 3 bits).
  __uint128_t value = static_cast<__uint128_t>(static_cast<uint64_t>(ms) & 0xFFFFFFFFFFFFull) << 80;
  for (int i = 0; i < 10; ++i) {
    value |= static_cast<__uint128_t>(last_random_[i]) << (8 * (9 - i));
  }
  std::string id(26, '0');
  for (int i = 25; i >= 0; --i) {
    id[i] = kCrockford[static_cast<int>(value & 31)];
    value >>= 5;
  }
  return id;
}

bool IsValidEntryId(std::string_view id) {
  if (id.size() != 26 || id[0] > '7') return false;
  for (char c : id) {
    bool ok = false;
    for (const char* p = kCrockford; *p; ++p) ok |= (*p == c);
    if (!ok) return false;
  }
  return true;
}

}  // namespace bulwark
