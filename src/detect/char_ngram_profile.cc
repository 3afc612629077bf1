#include "detect/char_ngram_profile.h"

#include <absl/strings/escaping.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "core/strings.h"

namespace bulwark {
namespace {

// Calls fn(bucket) for each trigram of `text` lowercased (ASCII), with runs of whitespace
// collapsed to one space and one space of padding at each end, streaming (no copy of the text).
template <typename Fn>
void ForEachBucket(std::string_view text, Fn&& fn) {
  uint64_t window = 0;  // the last bytes emitted, newest in the low byte
  size_t emitted = 0;
  unsigned char last = 0;
  auto emit = [&](unsigned char c) {
    window = ((window << 8) | c) & 0xFFFFFF;
    last = c;
    // Fibonacci hashing: the top 14 bits of v * 2^64/phi.
    if (++emitted >= CharNgramProfile::kN)
      fn(static_cast<uint32_t>((window * 0x9E3779B97F4A7C15ull) >> (64 - 14)));
  };
  emit(' ');
  for (char ch : text) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      if (last != ' ') emit(' ');
    } else {
      emit(static_cast<unsigned char>(c >= 'A' && c <= 'Z' ? c + 32 : c));
    }
  }
  if (last != ' ') emit(' ');
}
static_assert(CharNgramProfile::kN == 3);  // the 24-bit window
static_assert(CharNgramProfile::kBuckets == (1u << 14));

}  // namespace

CharNgramProfile::Sparse CharNgramProfile::Distribution(std::string_view text) {
  std::vector<uint32_t> buckets;
  Sparse out;
  Distribution(text, &buckets, &out);
  return out;
}

void CharNgramProfile::Distribution(std::string_view text, std::vector<uint32_t>* scratch, Sparse* out) {
  std::vector<uint32_t>& buckets = *scratch;
  buckets.clear();
  out->clear();
  ForEachBucket(text, [&](uint32_t b) { buckets.push_back(b); });
  if (buckets.empty()) return;
  std::sort(buckets.begin(), buckets.end());
  const double n = static_cast<double>(buckets.size());
  for (size_t i = 0; i < buckets.size();) {
    size_t j = i;
    while (j < buckets.size() && buckets[j] == buckets[i]) ++j;
    out->emplace_back(buckets[i], static_cast<double>(j - i) / n);
    i = j;
  }
}

size_t CharNgramProfile::TrigramCount(std::string_view text) {
  size_t n = 0;
  ForEachBucket(text, [&](uint32_t) { ++n; });
  return n;
}

void CharNgramProfile::Add(std::string_view text) {
  ForEachBucket(text, [&](uint32_t b) {
    ++counts_[b];
    ++total_;
  });
  ++texts_;
}

namespace {

// log2 of a trigram count: a table for the small counts that nearly all buckets have.
double Log2Count(uint64_t count) {
  static const std::array<double, 4096> kTable = [] {
    std::array<double, 4096> t{};
    for (size_t i = 1; i < t.size(); ++i) t[i] = std::log2(static_cast<double>(i));
    return t;
  }();
  return count < kTable.size() ? kTable[count] : std::log2(static_cast<double>(count));
}

// x log2 x for x = count / total, given log2(total).
double XLog2X(uint64_t count, double total, double log2_total) {
  return count == 0 ? 0.0 : static_cast<double>(count) / total * (Log2Count(count) - log2_total);
}

// One bucket's share of 2 JSD: pi log2(pi / mi) + qi log2(qi / mi) with mi = (pi + qi) / 2,
//   = pi log2 pi + qi log2 qi + (pi + qi)(1 - log2(pi + qi)),
// which takes one logarithm per bucket (the x log2 x terms come from counts); pi when qi = 0.
inline double JsdTerm(double pi, double pi_log_pi, double qi, double qi_log_qi) {
  if (qi <= 0) return pi;  // pi log2(pi / (pi / 2))
  const double m = pi + qi;
  return pi_log_pi + qi_log_qi + m * (1.0 - std::log2(m));
}

}  // namespace

template <typename Removed>
double CharNgramProfile::Divergence(const Sparse& p, Removed&& removed, uint64_t removed_total) const {
  if (p.empty() || total_ <= removed_total) return 1.0;
  // JSD = 1/2 KL(p||m) + 1/2 KL(q||m), m = (p+q)/2. Buckets outside supp(p) contribute
  // 1/2 q log2(q / (q/2)) = q/2 each, i.e. (1 - sum_{supp p} q) / 2 in total, so only supp(p) is
  // visited: O(|supp p|) per text, whatever the baseline's size.
  const double total = static_cast<double>(total_ - removed_total);
  const double log2_total = std::log2(total);
  double inside = 0, q_inside = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    const auto& [bucket, pi] = p[i];
    const uint64_t count = counts_[bucket] - removed(i);
    const double qi = static_cast<double>(count) / total;
    inside += JsdTerm(pi, pi * std::log2(pi), qi, XLog2X(count, total, log2_total));
    q_inside += qi;
  }
  return std::clamp(0.5 * inside + 0.5 * (1.0 - q_inside), 0.0, 1.0);
}

double CharNgramProfile::JensenShannon(const Sparse& p) const {
  return Divergence(
      p, [](size_t) { return uint32_t{0}; }, 0);
}

double CharNgramProfile::JensenShannon(std::string_view text, size_t* trigrams) const {
  // Distribution() and Divergence() fused, without building the sparse distribution: the text's
  // counts go into a per-thread dense table (kBuckets uint16, 32 KB, reset after use), so no sort;
  // p's x log2 x terms also come from counts here.
  thread_local std::vector<uint16_t> counts(kBuckets, 0);
  thread_local std::vector<uint32_t> touched;
  touched.clear();
  size_t n_trigrams = 0;
  ForEachBucket(text, [&](uint32_t b) {
    if (counts[b]++ == 0) touched.push_back(b);
    ++n_trigrams;
  });
  if (trigrams != nullptr) *trigrams = n_trigrams;
  // A text of 65,535+ trigrams would overflow a uint16 count: fall back to the sparse path.
  const bool overflow = n_trigrams >= 0xFFFF;
  double result = 1.0;
  if (overflow) {
    result = JensenShannon(Distribution(text));
  } else if (n_trigrams > 0 && total_ > 0) {
    const double n = static_cast<double>(n_trigrams);
    const double log2_n = std::log2(n);
    const double total = static_cast<double>(total_);
    const double log2_total = std::log2(total);
    double inside = 0, q_inside = 0;
    for (uint32_t b : touched) {
      const uint64_t count = counts_[b];
      const double pi = static_cast<double>(counts[b]) / n;
      const double qi = static_cast<double>(count) / total;
      inside += JsdTerm(pi, XLog2X(counts[b], n, log2_n), qi, XLog2X(count, total, log2_total));
      q_inside += qi;
    }
    result = std::clamp(0.5 * inside + 0.5 * (1.0 - q_inside), 0.0, 1.0);
  }
  for (uint32_t b : touched) counts[b] = 0;
  return result;
}

double CharNgramProfile::JensenShannonLeavingOut(std::string_view text) const {
  const Sparse p = Distribution(text);
  uint64_t n = 0;
  ForEachBucket(text, [&](uint32_t) { ++n; });
  // The text's own count in bucket i is p_i * n (exact: p_i = count / n).
  return Divergence(
      p, [&](size_t i) { return static_cast<uint32_t>(std::llround(p[i].second * static_cast<double>(n))); },
      n);
}

std::string CharNgramProfile::Serialize() const {
  std::string raw(counts_.size() * 4, '\0');
  for (size_t i = 0; i < counts_.size(); ++i) {
    for (int b = 0; b < 4; ++b) raw[i * 4 + b] = static_cast<char>((counts_[i] >> (8 * b)) & 0xff);
  }
  return absl::Base64Escape(ToAbsl(raw));
}

absl::StatusOr<CharNgramProfile> CharNgramProfile::Deserialize(std::string_view text, size_t texts) {
  std::string raw;
  if (!absl::Base64Unescape(ToAbsl(text), &raw) || raw.size() != size_t{kBuckets} * 4) {
    return absl::DataLossError("character n-gram baseline does not decode");
  }
  CharNgramProfile profile;
  for (size_t i = 0; i < kBuckets; ++i) {
    uint32_t v = 0;
    for (int b = 0; b < 4; ++b)
      v |= static_cast<uint32_t>(static_cast<unsigned char>(raw[i * 4 + b])) << (8 * b);
    profile.counts_[i] = v;
    profile.total_ += v;
  }
  profile.texts_ = texts;
  return profile;
}

}  // namespace bulwark
