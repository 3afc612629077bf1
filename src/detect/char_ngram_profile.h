// Character n-gram distributions and their Jensen-Shannon divergence: the MemSAD+ feature
// (MemSAD paper Appendix R, Proposition 27): D_char(c) = JSD(p_c || p_0), where p_c is the
// character trigram distribution of the entry and p_0 that of the benign baseline corpus.
// Unlike embedding similarity it is not synonym-invariant: every substituted word changes the
// trigrams it spans.
//
// Trigrams are taken over the text lowercased (ASCII) with runs of whitespace collapsed to one
// space and one space of padding at each end, and hashed into kBuckets buckets (so the baseline
// has a fixed size; collisions merge a few rare trigrams, identically for every text).
// JSD uses log base 2, so it lies in [0, 1].
#pragma once

#include <absl/status/statusor.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bulwark {

class CharNgramProfile {
 public:
  static constexpr size_t kN = 3;
  static constexpr uint32_t kBuckets = 1u << 14;

  // A text's distribution: (bucket, probability) pairs, buckets ascending, probabilities sum
  // to 1. Empty for a text with no trigram.
  using Sparse = std::vector<std::pair<uint32_t, double>>;
  static Sparse Distribution(std::string_view text);
  // The same into `out`, reusing its capacity and that of `scratch` (no allocation once they
  // have grown to the text's size).
  static void Distribution(std::string_view text, std::vector<uint32_t>* scratch, Sparse* out);
  // The number of trigrams of `text` (with repeats): the sample size behind its distribution.
  static size_t TrigramCount(std::string_view text);

  // The baseline: accumulate texts, then read probabilities (pooled trigram counts).
  void Add(std::string_view text);
  size_t texts() const { return texts_; }
  bool empty() const { return total_ == 0; }

  // JSD(p || p_0) in bits; 1 (maximal) for an empty p or an empty baseline.
  double JensenShannon(const Sparse& p) const;
  // JensenShannon(Distribution(text)) (equal up to rounding), without allocating (per-thread
  // scratch buffers). `trigrams`, if given, receives TrigramCount(text).
  double JensenShannon(std::string_view text, size_t* trigrams = nullptr) const;
  // JSD(p_text || p_0 without the text's own trigrams): the out-of-sample divergence of a text
  // that was Add()ed to this baseline (calibration's leave-one-out); meaningless for one that
  // was not.
  double JensenShannonLeavingOut(std::string_view text) const;

  // Serialized as base64 of kBuckets little-endian uint32 counts.
  std::string Serialize() const;
  static absl::StatusOr<CharNgramProfile> Deserialize(std::string_view text, size_t texts);

 private:
  // JSD of p against q_b = (counts_[b] - removed(b)) / (total_ - removed_total).
  template <typename Removed>
  double Divergence(const Sparse& p, Removed&& removed, uint64_t removed_total) const;

  std::vector<uint32_t> counts_ = std::vector<uint32_t>(kBuckets, 0);
  uint64_t total_ = 0;
  size_t texts_ = 0;
};

}  // namespace bulwark
