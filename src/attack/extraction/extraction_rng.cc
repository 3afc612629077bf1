// Session seeds and draws (see extraction_rng.h).
#include "attack/extraction/extraction_rng.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/hex.h"

namespace bulwark::extraction {
namespace {

void AppendLe(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

}  // namespace

SeededCsprng::Seed SessionSeed(uint64_t seed, std::string_view name, uint64_t index) {
  std::string message = "bulwark.extraction.v1";
  AppendLe(&message, seed, 8);
  AppendLe(&message, name.size(), 4);
  message.append(name);
  AppendLe(&message, index, 8);
  const std::string digest = *HexDecode(Sha256Hex(message));
  SeededCsprng::Seed out{};
  std::copy(digest.begin(), digest.begin() + out.size(), out.begin());
  return out;
}

SeededCsprng SessionRng(uint64_t seed, std::string_view name, uint64_t index) {
  return SeededCsprng(SessionSeed(seed, name, index));
}

double UniformDouble(SeededCsprng& rng) { return static_cast<double>(rng.NextU64() >> 11) * 0x1.0p-53; }

bool Bernoulli(SeededCsprng& rng, double p) { return UniformDouble(rng) < p; }

size_t SampleSoftmax(std::span<const double> logits, SeededCsprng& rng) {
  const double top = *std::max_element(logits.begin(), logits.end());
  std::vector<double> weights(logits.size());
  double total = 0;
  for (size_t i = 0; i < logits.size(); ++i) total += weights[i] = std::exp(logits[i] - top);
  double u = UniformDouble(rng) * total;
  for (size_t i = 0; i < weights.size(); ++i) {
    if (u < weights[i]) return i;
    u -= weights[i];
  }
  return weights.size() - 1;
}

}  // namespace bulwark::extraction
