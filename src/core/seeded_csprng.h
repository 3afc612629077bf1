// SeededCsprng: a cryptographically secure pseudo-random stream (ChaCha20 keystream, OpenSSL)
// from a 256-bit seed. The same seed gives the same stream on every machine, so a randomized
// decision (e.g. the k-subsets of smoothed retrieval) can be replayed from its recorded seed; a
// seed drawn from Env::RandomBytes makes the stream unpredictable to anyone who does not know it.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>

#include "bulwark/env.h"

namespace bulwark {

class SeededCsprng {
 public:
  using Seed = std::array<uint8_t, 32>;

  explicit SeededCsprng(const Seed& seed);
  // A fresh seed from env->RandomBytes (the system CSPRNG in the default Env).
  static Seed NewSeed(Env* env);

  const Seed& seed() const { return seed_; }
  std::string seed_hex() const;

  // The next bytes of the keystream.
  void Fill(std::span<uint8_t> out);
  uint64_t NextU64();
  // Uniform in [0, bound), without modulo bias (rejection sampling). Precondition: bound >= 1.
  uint64_t Uniform(uint64_t bound);

 private:
  void Refill();

  Seed seed_;
  uint64_t block_counter_ = 0;
  std::array<uint8_t, 256> buffer_{};
  size_t used_ = sizeof(buffer_);
};

}  // namespace bulwark
