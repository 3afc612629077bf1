#include "detect/query_history.h"

#include <algorithm>
#include <mutex>

namespace bulwark {

QueryHistory::QueryHistory(size_t dim, size_t capacity)
    : dim_(dim), capacity_(capacity), ring_(dim * capacity, 0.0f) {}

void QueryHistory::Append(std::span<const float> embedding) {
  if (embedding.size() != dim_) return;
  std::unique_lock lock(mu_);
  const size_t slot = (head_ + count_) % capacity_;
  std::copy(embedding.begin(), embedding.end(), ring_.begin() + static_cast<ptrdiff_t>(slot * dim_));
  if (count_ < capacity_) {
    ++count_;
  } else {
    head_ = (head_ + 1) % capacity_;
  }
  ++appended_;
}

void QueryHistory::Replace(std::span<const std::vector<float>> embeddings) {
  {
    std::unique_lock lock(mu_);
    head_ = 0;
    count_ = 0;
  }
  for (const auto& e : embeddings) Append(e);
}

void QueryHistory::Restore(std::span<const std::vector<float>> rows, uint64_t next_sequence) {
  Replace(rows);
  std::unique_lock lock(mu_);
  appended_ = std::max<uint64_t>(next_sequence, count_);
}

void QueryHistory::Read(const std::function<void(const float* const* rows, size_t count)>& fn) const {
  std::shared_lock lock(mu_);
  thread_local std::vector<const float*> rows;  // reused: scoring a write allocates nothing
  rows.resize(count_);
  for (size_t i = 0; i < count_; ++i) rows[i] = ring_.data() + ((head_ + i) % capacity_) * dim_;
  fn(rows.data(), count_);
}

std::vector<std::vector<float>> QueryHistory::Snapshot() const {
  std::vector<std::vector<float>> out;
  Read([&](const float* const* rows, size_t count) {
    for (size_t i = 0; i < count; ++i) out.emplace_back(rows[i], rows[i] + dim_);
  });
  return out;
}

size_t QueryHistory::size() const {
  std::shared_lock lock(mu_);
  return count_;
}

uint64_t QueryHistory::appended() const {
  std::shared_lock lock(mu_);
  return appended_;
}

QueryHistory::Pending QueryHistory::Since(uint64_t saved_through) const {
  std::shared_lock lock(mu_);
  Pending pending;
  const uint64_t oldest_held = appended_ - count_;  // sequence number of the oldest row held
  const uint64_t first = std::max(saved_through, oldest_held);
  pending.first_sequence = first;
  for (uint64_t seq = first; seq < appended_; ++seq) {
    const size_t slot = (head_ + static_cast<size_t>(seq - oldest_held)) % capacity_;
    pending.rows.emplace_back(ring_.begin() + static_cast<ptrdiff_t>(slot * dim_),
                              ring_.begin() + static_cast<ptrdiff_t>((slot + 1) * dim_));
  }
  return pending;
}

}  // namespace bulwark
