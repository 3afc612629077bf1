#include "detect/query_history.h"

#include <absl/synchronization/mutex.h>

#include <algorithm>
#include <limits>

#include "detect/memsad.h"

namespace bulwark {

QueryHistory::QueryHistory(size_t dim, size_t capacity)
    : dim_(dim),
      capacity_(capacity),
      ring_(dim * capacity, 0.0f),
      ceilings_(capacity, std::numeric_limits<float>::quiet_NaN()),
      int8_(dim, Int8Rows::CpuHasVnni()),
      sum_(dim, 0.0) {}

float QueryHistory::CeilingOf(const float* row) const {
  if (reference_ == nullptr) return std::numeric_limits<float>::quiet_NaN();
  return static_cast<float>(BenignCeiling(std::span<const float>(row, dim_), *reference_));
}

void QueryHistory::Append(std::span<const float> embedding) {
  if (embedding.size() != dim_) return;
  absl::MutexLock lock(&mu_);
  const size_t slot = (head_ + count_) % capacity_;
  float* row = ring_.data() + slot * dim_;
  const bool evicting = count_ == capacity_;
  if (evicting) {
    for (size_t j = 0; j < dim_; ++j) sum_[j] -= row[j];
  }
  std::copy(embedding.begin(), embedding.end(), row);
  for (size_t j = 0; j < dim_; ++j) sum_[j] += row[j];
  ceilings_[slot] = CeilingOf(embedding.data());
  if (slot < int8_.size()) {
    int8_.Set(slot, embedding);
  } else {
    int8_.Append(embedding);  // filling: slot == int8_.size()
  }
  if (!evicting) {
    ++count_;
  } else {
    head_ = (head_ + 1) % capacity_;
    // Subtracting evicted rows accumulates rounding; recompute the sum once per capacity evictions.
    if (++since_resum_ >= capacity_) {
      since_resum_ = 0;
      std::fill(sum_.begin(), sum_.end(), 0.0);
      for (size_t s = 0; s < capacity_; ++s) {
        for (size_t j = 0; j < dim_; ++j) sum_[j] += ring_[s * dim_ + j];
      }
    }
  }
  ++appended_;
}

void QueryHistory::Replace(std::span<const std::vector<float>> embeddings) {
  {
    absl::MutexLock lock(&mu_);
    head_ = 0;
    count_ = 0;
    int8_.Clear();
    std::fill(sum_.begin(), sum_.end(), 0.0);
    since_resum_ = 0;
  }
  for (const auto& e : embeddings) Append(e);
}

void QueryHistory::Restore(std::span<const std::vector<float>> rows, uint64_t next_sequence) {
  Replace(rows);
  absl::MutexLock lock(&mu_);
  appended_ = std::max<uint64_t>(next_sequence, count_);
}

void QueryHistory::AttachReference(std::shared_ptr<const Reference> reference) {
  absl::MutexLock lock(&mu_);
  reference_ = std::move(reference);
  for (size_t i = 0; i < count_; ++i) ceilings_[Slot(i)] = CeilingOf(ring_.data() + Slot(i) * dim_);
}

std::vector<std::vector<float>> QueryHistory::Snapshot() const {
  std::vector<std::vector<float>> out;
  Read([&](const View& h) {
    for (size_t i = 0; i < h.size(); ++i) out.emplace_back(h.row(i), h.row(i) + dim_);
  });
  return out;
}

size_t QueryHistory::size() const {
  absl::ReaderMutexLock lock(&mu_);
  return count_;
}

uint64_t QueryHistory::appended() const {
  absl::ReaderMutexLock lock(&mu_);
  return appended_;
}

QueryHistory::Pending QueryHistory::Since(uint64_t saved_through) const {
  absl::ReaderMutexLock lock(&mu_);
  Pending pending;
  const uint64_t oldest_held = appended_ - count_;  // sequence number of the oldest row held
  const uint64_t first = std::max(saved_through, oldest_held);
  pending.first_sequence = first;
  for (uint64_t seq = first; seq < appended_; ++seq) {
    const size_t slot = Slot(static_cast<size_t>(seq - oldest_held));
    pending.rows.emplace_back(ring_.begin() + static_cast<ptrdiff_t>(slot * dim_),
                              ring_.begin() + static_cast<ptrdiff_t>((slot + 1) * dim_));
  }
  return pending;
}

}  // namespace bulwark
