// Entry ids: 26 Crockford base32 characters, a 48-bit millisecond timestamp followed by 80 random
// bits (the ULID layout), so ids sort by creation time. Within one millisecond a generator
// increments the random part, so ids from one generator are strictly increasing.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

#include "bulwark/env.h"

namespace bulwark {

class IdGenerator {
 public:
  explicit IdGenerator(Env* env) : env_(env) {}
  std::string Next();

 private:
  Env* env_;
  std::mutex mu_;
  int64_t last_ms_ = -1;                   // guarded by mu_
  std::array<uint8_t, 10> last_random_{};  // guarded by mu_
};

// True for a well-formed id (26 chars of the Crockford alphabet, first char <= '7').
bool IsValidEntryId(std::string_view id);

}  // namespace bulwark
