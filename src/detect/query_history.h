// QueryHistory: the rolling query history H of one namespace (MemSAD Definition 6): the
// embeddings of the most recent searches, FIFO, at most `capacity` of them, stored row-major in
// one contiguous ring so the detector's max/mean kernel streams it.
//
// With a reference set R attached (the calibration's benign reference embeddings), each row also
// carries its benign similarity ceiling max_{m in R} <m, q> (Lemma 8's s_bar when q is the
// victim query q*), computed once when the row is appended or R is attached, so certifying a
// write costs O(1) instead of a scan of R.
//
// For the detector's scan it also keeps, updated on every append: an int8 copy of the rows
// (index/int8_rows.h, position = ring slot), which bounds every row's float32 dot product with a
// candidate so the max needs exact dot products only for the rows that can still be the max; and
// the running sum of the rows (in double), so the mean is one dot product. See ScoreAgainstHistory.
//
// Searches append to it; detectors read it. Thread-safe (a reader-writer lock: appends are
// brief copies of one vector plus |R| dot products). Persistence is the store's business: it
// asks for the queries appended since the last save (Since) and records what it saved.
#pragma once

#include <absl/synchronization/mutex.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "index/int8_rows.h"

namespace bulwark {

class QueryHistory {
 public:
  using Reference = std::vector<std::vector<float>>;

  // `dim` > 0, `capacity` > 0.
  QueryHistory(size_t dim, size_t capacity);

  // Appends one query embedding (size dim(); ignored otherwise), evicting the oldest when full.
  void Append(std::span<const float> embedding);
  // Replaces the whole history with `embeddings` (oldest first; only the newest `capacity` kept).
  void Replace(std::span<const std::vector<float>> embeddings);
  // Loads a persisted history: `rows` oldest first, the newest having sequence number
  // next_sequence - 1.
  void Restore(std::span<const std::vector<float>> rows, uint64_t next_sequence);
  // Attaches the reference set whose ceilings the rows carry (nullptr detaches) and computes
  // them for the rows held: O(|H| |R| dim), once per calibration.
  void AttachReference(std::shared_ptr<const Reference> reference);

  // The history as a detector reads it, valid only inside Read's callback.
  class View {
   public:
    size_t size() const ABSL_NO_THREAD_SAFETY_ANALYSIS { return h_->count_; }
    size_t dim() const ABSL_NO_THREAD_SAFETY_ANALYSIS { return h_->dim_; }
    // Row i of H, oldest first (i < size()).
    const float* row(size_t i) const ABSL_NO_THREAD_SAFETY_ANALYSIS {
      return h_->ring_.data() + h_->Slot(i) * h_->dim_;
    }
    // Calls fn(rows, first, count) for the at most two contiguous row-major runs that make up
    // H: rows first..first+count-1 start at `rows`, dim() floats each.
    template <typename Fn>
    void ForEachRun(Fn&& fn) const ABSL_NO_THREAD_SAFETY_ANALYSIS {
      const size_t first_run = std::min(h_->count_, h_->capacity_ - h_->head_);
      if (first_run > 0) fn(h_->ring_.data() + h_->head_ * h_->dim_, size_t{0}, first_run);
      if (h_->count_ > first_run) fn(h_->ring_.data(), first_run, h_->count_ - first_run);
    }
    // max_{m in R} <m, row(i)> for the attached reference set R; NaN without one (or if R is
    // empty).
    float ceiling(size_t i) const ABSL_NO_THREAD_SAFETY_ANALYSIS { return h_->ceilings_[h_->Slot(i)]; }
    // The reference set the ceilings are for (nullptr: none).
    const Reference* reference() const ABSL_NO_THREAD_SAFETY_ANALYSIS { return h_->reference_.get(); }
    // The int8 copy of the rows, position = slot of the ring (all positions < size() are rows).
    const Int8Rows& int8() const ABSL_NO_THREAD_SAFETY_ANALYSIS { return h_->int8_; }
    // The ring slot of row i, and the row index i of a slot.
    size_t slot(size_t i) const ABSL_NO_THREAD_SAFETY_ANALYSIS { return h_->Slot(i); }
    size_t index_of_slot(size_t slot) const ABSL_NO_THREAD_SAFETY_ANALYSIS {
      return (slot + h_->capacity_ - h_->head_) % h_->capacity_;
    }
    const float* slot_row(size_t slot) const ABSL_NO_THREAD_SAFETY_ANALYSIS {
      return h_->ring_.data() + slot * h_->dim_;
    }
    // sum_i row(i), accumulated in double.
    std::span<const double> row_sum() const ABSL_NO_THREAD_SAFETY_ANALYSIS { return h_->sum_; }

   private:
    friend class QueryHistory;
    explicit View(const QueryHistory* h) : h_(h) {}
    const QueryHistory* h_;
  };

  // Calls fn(view) under a shared lock: fn must not call back into this object.
  template <typename Fn>
  void Read(Fn&& fn) const {
    absl::ReaderMutexLock lock(&mu_);
    fn(View(this));
  }
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
  size_t Slot(size_t i) const ABSL_SHARED_LOCKS_REQUIRED(mu_) { return (head_ + i) % capacity_; }
  float CeilingOf(const float* row) const ABSL_SHARED_LOCKS_REQUIRED(mu_);

  const size_t dim_;
  const size_t capacity_;
  mutable absl::Mutex mu_;
  std::vector<float> ring_ ABSL_GUARDED_BY(mu_);      // capacity_ * dim_
  std::vector<float> ceilings_ ABSL_GUARDED_BY(mu_);  // capacity_, by slot
  std::shared_ptr<const Reference> reference_ ABSL_GUARDED_BY(mu_);
  Int8Rows int8_ ABSL_GUARDED_BY(mu_);
  std::vector<double> sum_ ABSL_GUARDED_BY(mu_);  // dim_: the sum of the rows held
  size_t since_resum_ ABSL_GUARDED_BY(mu_) = 0;   // evictions since sum_ was last recomputed from the rows
  size_t head_ ABSL_GUARDED_BY(mu_) = 0;          // slot of the oldest row
  size_t count_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t appended_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace bulwark
