// QueryHistory: the rolling query history H of one namespace (MemSAD Definition 6): the
// embeddings of the most recent searches, FIFO, at most `capacity` of them, stored row-major in
// one contiguous ring so the detector's max/mean kernel streams it.
//
// Searches append to it; detectors read it. Thread-safe (a reader-writer lock: appends are
// brief copies of one vector). Persistence is the store's business: it asks for the queries
// appended since the last save (Unsaved) and marks them saved (MarkSaved).
#pragma once

#include <cstdint>
#include <functional>
#include <shared_mutex>
#include <span>
#include <vector>

namespace bulwark {

class QueryHistory {
 public:
  // `dim` > 0, `capacity` > 0.
  QueryHistory(size_t dim, size_t capacity);

  // Appends one query embedding (size dim(); ignored otherwise), evicting the oldest when full.
  void Append(std::span<const float> embedding);
  // Replaces the whole history with `embeddings` (oldest first; only the newest `capacity` kept).
  void Replace(std::span<const std::vector<float>> embeddings);
  // Loads a persisted history: `rows` oldest first, the newest having sequence number
  // next_sequence - 1.
  void Restore(std::span<const std::vector<float>> rows, uint64_t next_sequence);

  // Calls fn(rows, count) with the history as `count` row pointers, oldest first, under a shared
  // lock: fn must not call back into this object.
  void Read(const std::function<void(const float* const* rows, size_t count)>& fn) const;
  // A copy of the history, oldest first.
  std::vector<std::vector<float>> Snapshot() const;

  size_t size() const;
  size_t dim() const { return dim_; }
  size_t capacity() const { return capacity_; }

  // Total appends since construction (replace counts each row): a monotone sequence number.
  uint64_t appended() const;
  // Queries appended after sequence number `saved_through`, oldest first, with the sequence
  // number of the newest (== appended()). At most capacity() of them (older ones were evicted).
  struct Pending {
    uint64_t first_sequence = 0;  // sequence number of rows.front(); rows are consecutive
    std::vector<std::vector<float>> rows;
  };
  Pending Since(uint64_t saved_through) const;

 private:
  const size_t dim_;
  const size_t capacity_;
  mutable std::shared_mutex mu_;
  std::vector<float> ring_;  // capacity_ * dim_
  size_t head_ = 0;          // slot of the oldest row
  size_t count_ = 0;
  uint64_t appended_ = 0;
};

}  // namespace bulwark
