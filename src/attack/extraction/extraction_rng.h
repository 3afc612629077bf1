// Randomness of the extraction attacks and the benign-session simulator: every session draws from
// its own SeededCsprng (ChaCha20, src/core/seeded_csprng.h) whose seed is derived from the run's
// seed, the generator's name and the session's index, so a run replays exactly from its seed and
// two sessions (or two attacks) of one run draw independent streams.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "core/seeded_csprng.h"

namespace bulwark::extraction {

// SHA-256("bulwark.extraction.v1" | seed as 8 little-endian bytes | 4-byte length of name | name |
// index as 8 little-endian bytes) as a SeededCsprng seed.
SeededCsprng::Seed SessionSeed(uint64_t seed, std::string_view name, uint64_t index);

// A generator for session `index` of `name` in a run seeded with `seed`.
SeededCsprng SessionRng(uint64_t seed, std::string_view name, uint64_t index);

// Uniform in [0, 1) with 53 random bits.
double UniformDouble(SeededCsprng& rng);

// True with probability p (p <= 0: never; p >= 1: always).
bool Bernoulli(SeededCsprng& rng, double p);

// Uniform index in [0, n). Precondition: n >= 1.
inline size_t UniformIndex(SeededCsprng& rng, size_t n) { return static_cast<size_t>(rng.Uniform(n)); }

// Fisher-Yates shuffle.
template <typename T>
void Shuffle(std::vector<T>& items, SeededCsprng& rng) {
  for (size_t i = items.size(); i > 1; --i) std::swap(items[i - 1], items[UniformIndex(rng, i)]);
}

// Index drawn with probability proportional to exp(logits[i]) (a softmax at temperature 1).
// Precondition: logits non-empty.
size_t SampleSoftmax(std::span<const double> logits, SeededCsprng& rng);

}  // namespace bulwark::extraction
