// Entry ids: 26 Crockford base32 characters, a 48-bit millisecond timestamp followed by 80 random
// bits (the ULID layout), so ids sort by creation time. Within one millisecond a generator
// increments the random part, so ids from one generator are strictly increasing. The random parts
// are drawn from the Env kIdsPerDraw at a time (one CSPRNG call per kIdsPerDraw milliseconds that
// see an id, not one per millisecond); each byte is used once.
#pragma once

#include <absl/synchronization/mutex.h>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "bulwark/env.h"

namespace bulwark {

class IdGenerator {
 public:
  explicit IdGenerator(Env* env) : env_(env) {}
  std::string Next();

 private:
  static constexpr size_t kRandomBytes = 10;  // 80 bits per millisecond
  static constexpr size_t kIdsPerDraw = 16;

  Env* env_;
  absl::Mutex mu_;
  int64_t last_ms_ ABSL_GUARDED_BY(mu_) = -1;
  std::array<uint8_t, kRandomBytes> last_random_ ABSL_GUARDED_BY(mu_){};
  std::array<uint8_t, kRandomBytes * kIdsPerDraw> drawn_ ABSL_GUARDED_BY(mu_){};
  size_t drawn_used_ ABSL_GUARDED_BY(mu_) = sizeof(drawn_);  // bytes of drawn_ handed out
};

// True for a well-formed id (26 chars of the Crockford alphabet, first char <= '7').
bool IsValidEntryId(std::string_view id);

}  // namespace bulwark
