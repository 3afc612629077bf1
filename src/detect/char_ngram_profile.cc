#include "detect/char_ngram_profile.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <absl/strings/escaping.h>

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
    if (++emitted >= CharNgramProfile::kN) fn(static_cast<uint32_t>((window * 0x9E3779B97F4A7C15ull) >> (64 - 14)));
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

// One bucket's share of 2 JSD: pi log2(pi / mi) + qi log2(qi / mi) with mi = (pi + qi) / 2;
// pi when qi = 0. Both Divergence() and the fused JensenShannon(text) use it, so they agree
// bit for bit.
inline double JsdTerm(double pi, double qi) {
  if (qi <= 0) return pi;  // pi log2(pi / (pi / 2))
  const double inverse_mean = 2.0 / (pi + qi);
  return pi * std::log2(pi * inverse_mean) + qi * std::log2(qi * inverse_mean);
}

}  // namespace

template <typename Removed>
double CharNgramProfile::Divergence(const Sparse& p, Removed&& removed, uint64_t removed_total) const {
  if (p.empty() || total_ <= removed_total) return 1.0;
  // JSD = 1/2 KL(p||m) + 1/2 KL(q||m), m = (p+q)/2. Buckets outside supp(p) contribute
  // 1/2 q log2(q / (q/2)) = q/2 each, i.e. (1 - sum_{supp p} q) / 2 in total, so only supp(p) is
  // visited: O(|supp p|) per text, whatever the baseline's size.
  const double total = static_cast<double>(total_ - removed_total);
  double inside = 0, q_inside = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    const auto& [bucket, pi] = p[i];
    const double qi = static_cast<double>(counts_[bucket] - removed(i)) / total;
    inside += JsdTerm(pi, qi);
    q_inside += qi;
  }
  return std::clamp(0.5 * inside + 0.5 * (1.0 - q_inside), 0.0, 1.0);
}

double CharNgramProfile::JensenShannon(const Sparse& p) const {
  return Divergence(p, [](size_t) { return uint32_t{0}; }, 0);
}

double CharNgramProfile::JensenShannon(std::string_view text) const {
  // Distribution() and Divergence() fused over the sorted buckets: the same arithmetic in the
  // same order, without building the sparse distribution.
  thread_local std::vector<uint32_t> buckets;
  buckets.clear();
  ForEachBucket(text, [&](uint32_t b) { buckets.push_back(b); });
  if (buckets.empty() || total_ == 0) return 1.0;
  std::sort(buckets.begin(), buckets.end());
  const double n = static_cast<double>(buckets.size());
  const double total = static_cast<double>(total_);
  double inside = 0, q_inside = 0;
  for (size_t i = 0; i < buckets.size();) {
    size_t j = i;
    while (j < buckets.size() && buckets[j] == buckets[i]) ++j;
    const double pi = static_cast<double>(j - i) / n;
    const double qi = static_cast<double>(counts_[buckets[i]]) / total;
    inside += JsdTerm(pi, qi);
    q_inside += qi;
    i = j;
  }
  return std::clamp(0.5 * inside + 0.5 * (1.0 - q_inside), 0.0, 1.0);
}

double CharNgramProfile::JensenShannonLeavingOut(std::string_view text) const {
  const Sparse p = Distribution(text);
  uint64_t n = 0;
  ForEachBucket(text, [&](uint32_t) { ++n; });
  // The text's own count in bucket i is p_i * n (exact: p_i = count / n).
  return Divergence(p, [&](size_t i) { return static_cast<uint32_t>(std::llround(p[i].second * static_cast<double>(n))); }, n);
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
    for (int b = 0; b < 4; ++b) v |= static_cast<uint32_t>(static_cast<unsigned char>(raw[i * 4 + b])) << (8 * b);
    profile.counts_[i] = v;
    profile.total_ += v;
  }
  profile.texts_ = texts;
  return profile;
}

}  // namespace bulwark
