// FlatIndex: storage maintenance (add, set-state, swap-remove) and the exact top-k scan.
//
// The scan walks the rows in blocks of kBlockRows: it collects pointers to the rows of the block
// that pass the filter (reading one state and one kind byte per row, branch-free), scores them with
// the SIMD kernel four rows per pass, and offers each score to a bounded heap of the k best hits.
// Once the heap is full a score enters only if it beats the current k-th best, so for k << n the
// selection is one comparison per row.
#include "index/flat_index.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include <absl/strings/str_cat.h>

namespace bulwark {
namespace {

// Rows whose pointers and scores are gathered per kernel call; 128 rows of scratch fit in 2 KiB.
constexpr size_t kBlockRows = 128;

// Floats per 64-byte cache line: row strides are multiples of this.
constexpr size_t kFloatsPerLine = 64 / sizeof(float);

bool IsKnown(State state) { return static_cast<unsigned>(state) <= static_cast<unsigned>(State::kPurged); }
bool IsKnown(Kind kind) { return static_cast<unsigned>(kind) <= static_cast<unsigned>(Kind::kHoneypot); }

// The ranking order of the interface: higher score first, then lower row id.
bool RanksBefore(const IndexHit& a, const IndexHit& b) {
  return a.score > b.score || (a.score == b.score && a.row_id < b.row_id);
}

// The k best hits seen so far, as a heap whose front is the worst of them.
class TopK {
 public:
  explicit TopK(size_t k, size_t expected) : k_(k) { heap_.reserve(std::min(k, expected)); }

  void Offer(float score, int64_t row_id) {
    if (std::isnan(score)) score = -std::numeric_limits<float>::infinity();
    if (heap_.size() < k_) {
      heap_.push_back({row_id, score});
      std::push_heap(heap_.begin(), heap_.end(), RanksBefore);
      return;
    }
    const IndexHit& worst = heap_.front();
    if (score < worst.score || (score == worst.score && row_id > worst.row_id)) return;
    std::pop_heap(heap_.begin(), heap_.end(), RanksBefore);
    heap_.back() = {row_id, score};
    std::push_heap(heap_.begin(), heap_.end(), RanksBefore);
  }

  // The hits, best first.
  std::vector<IndexHit> TakeSorted() && {
    std::sort_heap(heap_.begin(), heap_.end(), RanksBefore);
    return std::move(heap_);
  }

 private:
  const size_t k_;
  std::vector<IndexHit> heap_;
};

}  // namespace

FlatIndex::FlatIndex(int dimension, SimdLevel level)
    : dimension_(dimension),
      stride_((static_cast<size_t>(dimension) + kFloatsPerLine - 1) / kFloatsPerLine * kFloatsPerLine),
      kernels_(&KernelsFor(level)) {}

absl::StatusOr<std::unique_ptr<FlatIndex>> FlatIndex::Create(int dimension) {
  return Create(dimension, BestSimdLevel());
}

absl::StatusOr<std::unique_ptr<FlatIndex>> FlatIndex::Create(int dimension, SimdLevel level) {
  if (dimension < 1 || dimension > kMaxDimension) {
    return absl::InvalidArgumentError(
        absl::StrCat("index dimension must be in [1, ", kMaxDimension, "], got ", dimension));
  }
  if (!CpuSupports(level)) {
    return absl::FailedPreconditionError(
        absl::StrCat("this CPU does not support the ", std::string(ToString(level)), " kernels"));
  }
  return std::unique_ptr<FlatIndex>(new FlatIndex(dimension, level));
}

absl::Status FlatIndex::Reserve(size_t rows) {
  if (rows > data_.max_size() / stride_) {
    return absl::ResourceExhaustedError(absl::StrCat("cannot reserve ", rows, " index rows"));
  }
  try {
    data_.reserve(rows * stride_);
    row_ids_.reserve(rows);
    states_.reserve(rows);
    kinds_.reserve(rows);
    positions_.reserve(rows);
  } catch (const std::bad_alloc&) {
    // Capacity may have grown for some arrays; contents and size are untouched.
    return absl::ResourceExhaustedError(absl::StrCat("out of memory reserving ", rows, " index rows"));
  }
  return absl::OkStatus();
}

absl::Status FlatIndex::Add(int64_t row_id, std::span<const float> vector, State state, Kind kind) {
  if (vector.size() != static_cast<size_t>(dimension_)) {
    return absl::InvalidArgumentError(
        absl::StrCat("vector has ", vector.size(), " dimensions, the index ", dimension_));
  }
  if (!IsKnown(state) || !IsKnown(kind)) {
    return absl::InvalidArgumentError("unknown state or kind");
  }
  const auto [it, inserted] = positions_.try_emplace(row_id, row_ids_.size());
  if (!inserted) return absl::AlreadyExistsError(absl::StrCat("row ", row_id, " is already indexed"));

  const size_t position = row_ids_.size();
  data_.resize(data_.size() + stride_);  // value-initializes, so the padding is zero
  std::copy(vector.begin(), vector.end(), RowData(position));
  row_ids_.push_back(row_id);
  states_.push_back(static_cast<uint8_t>(state));
  kinds_.push_back(static_cast<uint8_t>(kind));
  return absl::OkStatus();
}

absl::Status FlatIndex::SetState(int64_t row_id, State state) {
  if (!IsKnown(state)) return absl::InvalidArgumentError("unknown state");
  const auto it = positions_.find(row_id);
  if (it == positions_.end()) return absl::NotFoundError(absl::StrCat("row ", row_id, " is not indexed"));
  states_[it->second] = static_cast<uint8_t>(state);
  return absl::OkStatus();
}

absl::Status FlatIndex::Remove(int64_t row_id) {
  const auto it = positions_.find(row_id);
  if (it == positions_.end()) return absl::NotFoundError(absl::StrCat("row ", row_id, " is not indexed"));
  const size_t hole = it->second;
  const size_t last = row_ids_.size() - 1;
  positions_.erase(it);
  if (hole != last) {
    std::copy(RowData(last), RowData(last) + stride_, RowData(hole));
    row_ids_[hole] = row_ids_[last];
    states_[hole] = states_[last];
    kinds_[hole] = kinds_[last];
    positions_[row_ids_[hole]] = hole;
  }
  data_.resize(data_.size() - stride_);
  row_ids_.pop_back();
  states_.pop_back();
  kinds_.pop_back();
  return absl::OkStatus();
}

absl::StatusOr<std::vector<IndexHit>> FlatIndex::Search(std::span<const float> query, int k,
                                                        const IndexFilter& filter) const {
  if (query.size() != static_cast<size_t>(dimension_)) {
    return absl::InvalidArgumentError(
        absl::StrCat("query has ", query.size(), " dimensions, the index ", dimension_));
  }
  if (k < 0) return absl::InvalidArgumentError(absl::StrCat("k must be >= 0, got ", k));
  const size_t n = size();
  if (k == 0 || n == 0) return std::vector<IndexHit>();

  TopK top(static_cast<size_t>(k), n);
  const float* rows[kBlockRows];
  size_t positions[kBlockRows];
  float scores[kBlockRows];
  // Bits 0..31 of each word; State and Kind values are < 32 (checked on Add and SetState).
  const uint32_t accepted_states = filter.states;
  const uint32_t accepted_kinds = filter.kinds;

  for (size_t begin = 0; begin < n; begin += kBlockRows) {
    const size_t end = std::min(n, begin + kBlockRows);
    size_t passing = 0;
    for (size_t p = begin; p < end; ++p) {
      // Branch-free compaction: always write, advance only when the row passes.
      rows[passing] = RowData(p);
      positions[passing] = p;
      passing += (accepted_states >> states_[p]) & (accepted_kinds >> kinds_[p]) & 1u;
    }
    kernels_->dot_rows(query.data(), rows, passing, static_cast<size_t>(dimension_), scores);
    for (size_t j = 0; j < passing; ++j) top.Offer(scores[j], row_ids_[positions[j]]);
  }
  return std::move(top).TakeSorted();
}

}  // namespace bulwark
