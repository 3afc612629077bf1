// Entry ids: 26 Crockford base32 characters, a 48-bit millisecond timestamp followed by 80 random
// bits (the ULID layout), so ids sort by creation time. Within one millisecond a generator
// increments the random part, so ids from one generator are strictly increasing.
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
  Env* env_;
  absl::Mutex mu_;
  int64_t last_ms_ ABSL_GUARDED_BY(mu_) = -1;
  std::array<uint8_t, 10> last_random_ ABSL_GUARDED_BY(mu_){};
};

// True for a well-formed id (26 chars of the Crockford alphabet, first char <= '7').
bool IsValidEntryId(std::string_view id);

}  // namespace bulwark
