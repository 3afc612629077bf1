#include "detect/memory_table.h"

#include <absl/synchronization/mutex.h>

#include <algorithm>
#include <bit>
#include <limits>
#include <random>

#include "core/strings.h"
#include "index/inner_product.h"
#include "index/simd_target.h"

namespace bulwark {
namespace {

constexpr uint64_t kPlaneSeed = 0x62756c7761726b31;  // "bulwark1": fixed, so signatures are stable

using Histogram = std::array<uint32_t, MemoryTable::kSignatureWords * 64 + 1>;

// out[i] = Hamming distance of sigs[i] to q, and the histogram of the distances, in one pass.
#if BULWARK_X86
__attribute__((target("popcnt"))) void HammingPopcnt(const MemoryTable::Signature* sigs, size_t n,
                                                     const MemoryTable::Signature& q, uint8_t* out,
                                                     Histogram* histogram) {
  for (size_t i = 0; i < n; ++i) {
    const int d = __builtin_popcountll(sigs[i][0] ^ q[0]) + __builtin_popcountll(sigs[i][1] ^ q[1]);
    out[i] = static_cast<uint8_t>(d);
    ++(*histogram)[d];
  }
}
#endif

void HammingPortable(const MemoryTable::Signature* sigs, size_t n, const MemoryTable::Signature& q,
                     uint8_t* out, Histogram* histogram) {
  for (size_t i = 0; i < n; ++i) {
    const int d = std::popcount(sigs[i][0] ^ q[0]) + std::popcount(sigs[i][1] ^ q[1]);
    out[i] = static_cast<uint8_t>(d);
    ++(*histogram)[d];
  }
}

void Hamming(const MemoryTable::Signature* sigs, size_t n, const MemoryTable::Signature& q, uint8_t* out,
             Histogram* histogram) {
#if BULWARK_X86
  static const bool has_popcnt = __builtin_cpu_supports("popcnt");
  if (has_popcnt) return HammingPopcnt(sigs, n, q, out, histogram);
#endif
  HammingPortable(sigs, n, q, out, histogram);
}

}  // namespace

MemoryTable::MemoryTable(size_t dim) : dim_(dim), planes_(kSignatureWords * 64 * dim) {
  std::mt19937_64 rng(kPlaneSeed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (float& x : planes_) x = normal(rng);
  for (size_t b = 0; b < kSignatureWords * 64; ++b) plane_rows_.push_back(planes_.data() + b * dim_);
}

MemoryTable::~MemoryTable() = default;

MemoryTable::Signature MemoryTable::Sign(std::span<const float> embedding) const {
  Signature sig{};
  if (embedding.size() != dim_) return sig;
  std::array<float, kSignatureWords * 64> dots;
  BestKernels().dot_rows(embedding.data(), plane_rows_.data(), plane_rows_.size(), dim_, dots.data());
  for (size_t b = 0; b < dots.size(); ++b) {
    if (dots[b] > 0) sig[b / 64] |= uint64_t{1} << (b % 64);
  }
  return sig;
}

double MemoryTable::Cosine(std::span<const float> a, std::span<const float> b) const {
  return BestKernels().dot(a.data(), b.data(), dim_);  // both L2-normalised
}

void MemoryTable::Put(std::string_view name_space, const StoredMemory& memory) {
  if (memory.embedding.size() != dim_) return;
  const Signature sig = Sign(memory.embedding);
  SubjectIndex::Terms terms = SubjectIndex::TermsOf(memory.text);
  Row row{std::string(memory.id),
          std::string(memory.principal),
          memory.source,
          std::string(memory.text),
          ExtractSlots(memory.text),
          std::vector<float>(memory.embedding.begin(), memory.embedding.end())};
  absl::MutexLock lock(&mu_);
  Namespace& ns = namespaces_[ToAbsl(name_space)];
  auto [it, inserted] = ns.position.try_emplace(row.id, ns.rows.size());
  if (inserted) {
    row.key = ns.next_key++;
    ns.key_position[row.key] = ns.rows.size();
    ns.rows.push_back(std::move(row));
    ns.signatures.push_back(sig);
  } else {
    row.key = ns.rows[it->second].key;
    ns.rows[it->second] = std::move(row);
    ns.signatures[it->second] = sig;
  }
  ns.subjects.Put(ns.rows[it->second].key, std::move(terms));
}

void MemoryTable::Remove(std::string_view name_space, std::string_view id) {
  absl::MutexLock lock(&mu_);
  auto ns_it = namespaces_.find(ToAbsl(name_space));
  if (ns_it == namespaces_.end()) return;
  Namespace& ns = ns_it->second;
  auto it = ns.position.find(ToAbsl(id));
  if (it == ns.position.end()) return;
  const size_t pos = it->second;
  ns.position.erase(it);
  ns.subjects.Remove(ns.rows[pos].key);
  ns.key_position.erase(ns.rows[pos].key);
  if (pos + 1 != ns.rows.size()) {  // swap-remove
    ns.rows[pos] = std::move(ns.rows.back());
    ns.signatures[pos] = ns.signatures.back();
    ns.position[ns.rows[pos].id] = pos;
    ns.key_position[ns.rows[pos].key] = pos;
  }
  ns.rows.pop_back();
  ns.signatures.pop_back();
}

size_t MemoryTable::size(std::string_view name_space) const {
  absl::ReaderMutexLock lock(&mu_);
  auto it = namespaces_.find(ToAbsl(name_space));
  return it == namespaces_.end() ? 0 : it->second.rows.size();
}

void MemoryTable::Candidates(const Namespace& ns, const Signature& query, std::vector<uint32_t>* out) const {
  out->clear();
  const size_t n = ns.rows.size();
  if (n <= kCandidates) {
    for (uint32_t i = 0; i < n; ++i) out->push_back(i);
    return;
  }
  thread_local std::vector<uint8_t> distances;
  distances.resize(n);
  // Counting select: the smallest distance d such that at least kCandidates rows are within d.
  Histogram histogram{};
  Hamming(ns.signatures.data(), n, query, distances.data(), &histogram);
  size_t cutoff = 0, within = 0;
  for (; cutoff < histogram.size(); ++cutoff) {
    within += histogram[cutoff];
    if (within >= kCandidates) break;
  }
  // One pass: every row below the cutoff, then rows at it until kCandidates.
  const size_t below = within - histogram[cutoff];
  size_t at_cutoff_left = kCandidates - below;
  for (uint32_t i = 0; i < n; ++i) {
    if (distances[i] < cutoff) {
      out->push_back(i);
    } else if (distances[i] == cutoff && at_cutoff_left > 0) {
      out->push_back(i);
      --at_cutoff_left;
    }
  }
}

void MemoryTable::RankCandidates(const Namespace& ns, std::span<const float> embedding, double min_similarity,
                                 RankedCandidates* out) const {
  thread_local std::vector<uint32_t> candidates;
  Candidates(ns, Sign(embedding), &candidates);
  out->clear();
  for (uint32_t pos : candidates) {
    const double s = Cosine(embedding, ns.rows[pos].embedding);
    if (s >= min_similarity) out->push_back({s, pos});
  }
  std::sort(out->begin(), out->end(), [](const auto& a, const auto& b) { return a.first > b.first; });
}

std::vector<MemoryMatch> MemoryTable::Contradicted(std::string_view name_space,
                                                   std::span<const float> embedding, std::string_view text,
                                                   const TextSlots& slots, double min_similarity,
                                                   size_t limit) const {
  std::vector<MemoryMatch> out;
  if (embedding.size() != dim_ || limit == 0) return out;
  absl::ReaderMutexLock lock(&mu_);
  auto ns_it = namespaces_.find(ToAbsl(name_space));
  if (ns_it == namespaces_.end()) return out;
  thread_local RankedCandidates near;
  RankCandidates(ns_it->second, embedding, min_similarity, &near);
  for (size_t i = 0; i < near.size() && out.size() < limit; ++i) {
    const Row& row = ns_it->second.rows[near[i].second];
    if (row.text == text) continue;
    SlotDiff diff = DiffSlots(row.slots, slots);
    if (!diff.contradicts()) continue;
    out.push_back({row.id, row.principal, row.source, near[i].first, std::move(diff)});
  }
  return out;
}

std::vector<MemoryMatch> MemoryTable::SubjectContradicted(std::string_view name_space,
                                                          const SubjectIndex::Terms& terms,
                                                          std::string_view text, const TextSlots& slots,
                                                          double min_overlap, size_t limit) const {
  std::vector<MemoryMatch> out;
  if (limit == 0) return out;
  absl::ReaderMutexLock lock(&mu_);
  auto ns_it = namespaces_.find(ToAbsl(name_space));
  if (ns_it == namespaces_.end()) return out;
  const Namespace& ns = ns_it->second;
  for (const auto& [overlap, key] : ns.subjects.Overlapping(terms, min_overlap, 4 * limit)) {
    if (out.size() >= limit) break;
    auto pos = ns.key_position.find(key);
    if (pos == ns.key_position.end()) continue;
    const Row& row = ns.rows[pos->second];
    if (row.text == text) continue;
    std::optional<SlotDiff> diff = SubjectDiff(row.slots, slots);
    if (!diff.has_value()) continue;
    out.push_back({row.id, row.principal, row.source, overlap, std::move(*diff), /*by_subject=*/true});
  }
  return out;
}

std::vector<NearMemory> MemoryTable::Nearest(std::string_view name_space, std::span<const float> embedding,
                                             std::string_view text, size_t limit) const {
  std::vector<NearMemory> out;
  if (embedding.size() != dim_ || limit == 0) return out;
  absl::ReaderMutexLock lock(&mu_);
  auto ns_it = namespaces_.find(ToAbsl(name_space));
  if (ns_it == namespaces_.end()) return out;
  thread_local RankedCandidates near;
  RankCandidates(ns_it->second, embedding, -std::numeric_limits<double>::infinity(), &near);
  for (size_t i = 0; i < near.size() && out.size() < limit; ++i) {
    const Row& row = ns_it->second.rows[near[i].second];
    if (row.text == text) continue;
    out.push_back({row.id, row.text, near[i].first});
  }
  return out;
}

double MemoryTable::NearestSimilarity(std::string_view name_space, std::span<const float> embedding) const {
  if (embedding.size() != dim_) return 0;
  const Signature query = Sign(embedding);
  absl::ReaderMutexLock lock(&mu_);
  auto ns_it = namespaces_.find(ToAbsl(name_space));
  if (ns_it == namespaces_.end()) return 0;
  thread_local std::vector<uint32_t> candidates;
  Candidates(ns_it->second, query, &candidates);
  double best = 0;
  for (uint32_t pos : candidates) best = std::max(best, Cosine(embedding, ns_it->second.rows[pos].embedding));
  return best;
}

}  // namespace bulwark
