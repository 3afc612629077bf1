// Test helper: a deterministic Env. The clock advances one microsecond per reading; the "random"
// bytes count up from a seed, so two envs with the same seed produce the same keys and ids.
#pragma once

#include <cstdint>
#include <span>

#include "bulwark/env.h"

namespace bulwark::testing {

class CountingEnv final : public Env {
 public:
  explicit CountingEnv(uint8_t seed = 0) : next_byte_(seed) {}
  int64_t NowMicros() override { return now_us_++; }
  void RandomBytes(std::span<uint8_t> out) override {
    for (uint8_t& b : out) b = next_byte_++;
  }

 private:
  uint8_t next_byte_;
  int64_t now_us_ = 1700000000000000;
};

}  // namespace bulwark::testing
