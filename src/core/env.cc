// The default Env: system clock and OpenSSL's CSPRNG.
#include "bulwark/env.h"

#include <openssl/rand.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace bulwark {
namespace {

class SystemEnv final : public Env {
 public:
  int64_t NowMicros() override {
    return std::chrono::duration_cast<std::chrono::microseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }

  void RandomBytes(std::span<uint8_t> out) override {
    if (out.empty()) return;
    if (RAND_bytes(out.data(), static_cast<int>(out.size())) != 1) {
      std::fputs("bulwark: OpenSSL RAND_bytes failed; refusing to continue without a CSPRNG\n", stderr);
      std::abort();
    }
  }
};

}  // namespace

Env* Env::Default() {
  static SystemEnv* env = new SystemEnv();
  return env;
}

}  // namespace bulwark
