// The environment Bulwark reads time and randomness from. Everything that would make a run
// non-deterministic comes through an Env, so tests can fake the clock and the random source
// (LevelDB's Env pattern).
#pragma once

#include <cstdint>
#include <span>

namespace bulwark {

class Env {
 public:
  virtual ~Env() = default;

  // Wall-clock time in microseconds since the Unix epoch.
  virtual int64_t NowMicros() = 0;

  // Fills `out` with cryptographically secure random bytes (OpenSSL RAND_bytes in the default
  // Env). Aborts the process if the system CSPRNG fails: continuing with weak keys is worse.
  virtual void RandomBytes(std::span<uint8_t> out) = 0;

  // The process-wide default: system clock and OpenSSL's CSPRNG. Never null; not owned.
  static Env* Default();
};

}  // namespace bulwark
