// FlatIndex: storage maintenance (add, set-state, swap-remove) and the exact top-k scans.
//
// The exact scan walks the rows in blocks of kBlockRows: it collects pointers to the rows of the
// block that pass the filter (reading one state and one kind byte per row, branch-free), scores them
// with the SIMD kernel four rows per pass, and offers each score to a bounded heap of the k best
// hits. Once the heap is full a score enters only if it beats the current k-th best, so for k << n
// the selection is one comparison per row.
//
// The bounded scan (ScanMode::kInt8Bounded) first walks Int8Rows blocks: each passing row gets a
// lower and an upper bound on its float32 score. A heap of the k largest lower bounds gives tau,
// a score that at least k rows provably reach; a row whose upper bound is below tau cannot be in
// the top k, however ties are broken. The rows left (their upper bound >= the final tau) are scored
// with the same float32 kernel as the exact scan, in order of decreasing upper bound, stopping
// once the next upper bound is below the k-th best exact score. Rows, scores and order are
// therefore exactly those of the exact scan.
#include "index/flat_index.h"

#include <absl/strings/str_cat.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <string>

namespace bulwark {
namespace {

// Rows whose pointers and scores are gathered per kernel call; 128 rows of scratch fit in 2 KiB.
constexpr size_t kBlockRows = 128;

// The bounded scan pays off only when it can discard most rows: below this many rows, or when k is
// more than this fraction of the rows, Search scores every row in float32.
constexpr size_t kMinRowsForBoundedScan = 4 * Int8Rows::kBlockRows;
constexpr size_t kMaxKFractionForBoundedScan = 16;  // k * 16 <= n
// A dense query (over half its coordinates nonzero) costs the int8 pass about as much arithmetic
// as the float scan, so it pays off only once the float rows outgrow the caches: measured on
// AVX-512 at d = 384, the two break even near 1,000 rows.
constexpr size_t kMinRowsForDenseBoundedScan = 16 * Int8Rows::kBlockRows;

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

  // True when a hit scoring `score` could still enter (ties with the current k-th best may).
  bool MayEnter(float score) const { return heap_.size() < k_ || !(score < heap_.front().score); }

  // The hits, best first.
  std::vector<IndexHit> TakeSorted() && {
    std::sort_heap(heap_.begin(), heap_.end(), RanksBefore);
    return std::move(heap_);
  }

 private:
  const size_t k_;
  std::vector<IndexHit> heap_;
};

// Scores the rows at positions[0 .. count) (count <= kBlockRows) of a row-major array with the
// float32 kernel and offers them to `top` under their row ids.
void ScoreInto(const InnerProductKernels& kernels, std::span<const float> query, const float* data,
               size_t stride, const std::vector<int64_t>& row_ids, const size_t* positions, size_t count,
               TopK& top) {
  const float* rows[kBlockRows] = {};  // initialized: GCC 12 cannot see that count entries are set
  float scores[kBlockRows];
  for (size_t j = 0; j < count; ++j) rows[j] = data + positions[j] * stride;
  kernels.dot_rows(query.data(), rows, count, query.size(), scores);
  for (size_t j = 0; j < count; ++j) top.Offer(scores[j], row_ids[positions[j]]);
}

// One top-k of the bounded scan: a min-heap of the k largest lower bounds offered (tau, its least,
// is a score at least k rows provably reach; -inf until there are k) and the rows whose upper
// bound reached tau when they were offered.
class BoundSelection {
 public:
  struct Candidate {
    float upper;
    size_t position;
  };

  explicit BoundSelection(size_t k) : k_(k) { lows_.reserve(k); }

  float tau() const { return tau_; }

  // A NaN bound is unknown: the row stays a candidate (NaN < tau is false) and its lower bound
  // never raises tau (NaN > tau is false).
  void Offer(float lower, float upper, size_t position) {
    if (upper < tau_) return;
    candidates_.push_back({upper, position});
    if (!(lower > tau_)) return;
    if (lows_.size() < k_) {
      lows_.push_back(lower);
      std::push_heap(lows_.begin(), lows_.end(), std::greater<>());
      if (lows_.size() < k_) return;
    } else {
      std::pop_heap(lows_.begin(), lows_.end(), std::greater<>());
      lows_.back() = lower;
      std::push_heap(lows_.begin(), lows_.end(), std::greater<>());
    }
    tau_ = lows_.front();
  }

  // The top k: the candidates the final tau (or `floor`, if higher) leaves scored in float32, best
  // bound first, stopping once the next upper bound is below the k-th best exact score. A caller
  // passes a floor only when it drops every row scoring below it afterwards anyway.
  std::vector<IndexHit> Rescore(const InnerProductKernels& kernels, std::span<const float> query,
                                const float* data, size_t stride, const std::vector<int64_t>& row_ids,
                                float floor = -std::numeric_limits<float>::infinity()) && {
    const float cut = std::max(tau_, floor);
    std::erase_if(candidates_, [cut](const Candidate& c) { return c.upper < cut; });
    std::sort(candidates_.begin(), candidates_.end(), [](const Candidate& a, const Candidate& b) {
      // NaN (unknown) bounds first: they are never skipped below.
      return std::isnan(a.upper) ? !std::isnan(b.upper) : a.upper > b.upper;
    });
    TopK top(k_, candidates_.size());
    size_t positions[kBlockRows];
    for (size_t begin = 0; begin < candidates_.size(); begin += kBlockRows) {
      // Every later candidate has a smaller upper bound: none of them can enter.
      if (!top.MayEnter(candidates_[begin].upper)) break;
      const size_t count = std::min(kBlockRows, candidates_.size() - begin);
      for (size_t j = 0; j < count; ++j) positions[j] = candidates_[begin + j].position;
      ScoreInto(kernels, query, data, stride, row_ids, positions, count, top);
    }
    return std::move(top).TakeSorted();
  }

 private:
  const size_t k_;
  std::vector<float> lows_;
  float tau_ = -std::numeric_limits<float>::infinity();
  std::vector<Candidate> candidates_;
};

// SearchWithSide's cut: with k hits, the side rows scoring below the k-th are dropped.
void KeepReaching(const std::vector<IndexHit>& hits, size_t k, std::vector<IndexHit>* side) {
  if (hits.size() < k || hits.empty()) return;
  const float last = hits.back().score;
  std::erase_if(*side, [last](const IndexHit& h) { return h.score < last; });
}

}  // namespace

FlatIndex::FlatIndex(int dimension, SimdLevel level, ScanMode mode)
    : dimension_(dimension),
      stride_((static_cast<size_t>(dimension) + kFloatsPerLine - 1) / kFloatsPerLine * kFloatsPerLine),
      kernels_(&KernelsFor(level)) {
  if (mode == ScanMode::kInt8Bounded) {
    int8_ = std::make_unique<Int8Rows>(static_cast<size_t>(dimension), level == SimdLevel::kAvx512);
  }
}

absl::StatusOr<std::unique_ptr<FlatIndex>> FlatIndex::Create(int dimension) {
  return Create(dimension, BestSimdLevel());
}

absl::StatusOr<std::unique_ptr<FlatIndex>> FlatIndex::Create(int dimension, SimdLevel level) {
  const bool int8 = level == SimdLevel::kAvx512 && Int8Rows::CpuHasVnni();
  return Create(dimension, level, int8 ? ScanMode::kInt8Bounded : ScanMode::kExact);
}

absl::StatusOr<std::unique_ptr<FlatIndex>> FlatIndex::Create(int dimension, SimdLevel level, ScanMode mode) {
  if (dimension < 1 || dimension > kMaxDimension) {
    return absl::InvalidArgumentError(
        absl::StrCat("index dimension must be in [1, ", kMaxDimension, "], got ", dimension));
  }
  if (!CpuSupports(level)) {
    return absl::FailedPreconditionError(
        absl::StrCat("this CPU does not support the ", std::string(ToString(level)), " kernels"));
  }
  return std::unique_ptr<FlatIndex>(new FlatIndex(dimension, level, mode));
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
    if (int8_) int8_->Reserve(rows);
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
  if (int8_) int8_->Append(vector);
  return absl::OkStatus();
}

absl::Status FlatIndex::SetState(int64_t row_id, State state) {
  if (!IsKnown(state)) return absl::InvalidArgumentError("unknown state");
  const auto it = positions_.find(row_id);
  if (it == positions_.end()) return absl::NotFoundError(absl::StrCat("row ", row_id, " is not indexed"));
  states_[it->second] = static_cast<uint8_t>(state);
  return absl::OkStatus();
}

std::optional<std::pair<State, Kind>> FlatIndex::StateOf(int64_t row_id) const {
  const auto it = positions_.find(row_id);
  if (it == positions_.end()) return std::nullopt;
  return std::pair{static_cast<State>(states_[it->second]), static_cast<Kind>(kinds_[it->second])};
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
  if (int8_) int8_->RemoveBySwap(hole);
  data_.resize(data_.size() - stride_);
  row_ids_.pop_back();
  states_.pop_back();
  kinds_.pop_back();
  return absl::OkStatus();
}

FlatIndex::ConstParts FlatIndex::Parts() const {
  return {std::span<const float>(data_.data(), data_.size()), row_ids_, states_, kinds_, int8_.get()};
}

absl::StatusOr<FlatIndex::MutableParts> FlatIndex::StartRestore(size_t rows, size_t capacity) {
  capacity = std::max(rows, capacity);
  data_.clear();
  row_ids_.clear();
  states_.clear();
  kinds_.clear();
  positions_.clear();
  if (int8_) int8_->Clear();
  if (capacity > data_.max_size() / stride_) {
    return absl::ResourceExhaustedError(absl::StrCat("cannot restore ", rows, " index rows"));
  }
  MutableParts parts;
  try {
    data_.reserve(capacity * stride_);
    row_ids_.reserve(capacity);
    states_.reserve(capacity);
    kinds_.reserve(capacity);
    data_.resize(rows * stride_);
    row_ids_.resize(rows);
    states_.resize(rows);
    kinds_.resize(rows);
    if (int8_) parts.int8 = int8_->ResizeForRestore(rows, capacity);
  } catch (const std::bad_alloc&) {
    data_.clear();
    row_ids_.clear();
    states_.clear();
    kinds_.clear();
    if (int8_) int8_->Clear();
    return absl::ResourceExhaustedError(absl::StrCat("out of memory restoring ", rows, " index rows"));
  }
  parts.rows = std::span<float>(data_.data(), data_.size());
  parts.row_ids = row_ids_;
  parts.states = states_;
  parts.kinds = kinds_;
  return parts;
}

absl::Status FlatIndex::FinishRestore(bool int8_filled) {
  absl::Status status;
  positions_.reserve(row_ids_.capacity());
  for (size_t p = 0; p < row_ids_.size() && status.ok(); ++p) {
    if (!IsKnown(static_cast<State>(states_[p])) || !IsKnown(static_cast<Kind>(kinds_[p]))) {
      status = absl::InvalidArgumentError(absl::StrCat("row ", row_ids_[p], ": unknown state or kind"));
    } else if (!positions_.try_emplace(row_ids_[p], p).second) {
      status = absl::InvalidArgumentError(absl::StrCat("row ", row_ids_[p], " appears twice"));
    }
  }
  if (!status.ok()) {
    StartRestore(0, 0).IgnoreError();  // empty again
    return status;
  }
  if (int8_ && !int8_filled) {
    int8_->Clear();
    for (size_t p = 0; p < row_ids_.size(); ++p) {
      int8_->Append(std::span<const float>(RowData(p), static_cast<size_t>(dimension_)));
    }
  }
  return absl::OkStatus();
}

absl::Status FlatIndex::CheckSearch(std::span<const float> query, int k) const {
  if (query.size() != static_cast<size_t>(dimension_)) {
    return absl::InvalidArgumentError(
        absl::StrCat("query has ", query.size(), " dimensions, the index ", dimension_));
  }
  if (k < 0) return absl::InvalidArgumentError(absl::StrCat("k must be >= 0, got ", k));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<IndexHit>> FlatIndex::Search(std::span<const float> query, int k,
                                                        const IndexFilter& filter) const {
  if (auto s = CheckSearch(query, k); !s.ok()) return s;
  if (k == 0 || size() == 0) return std::vector<IndexHit>();
  return Scan(query, static_cast<size_t>(k), filter, /*mask=*/nullptr);
}

absl::StatusOr<std::vector<IndexHit>> FlatIndex::SearchRows(std::span<const float> query, int k,
                                                            const IndexFilter& filter,
                                                            std::span<const int64_t> row_ids) const {
  if (auto s = CheckSearch(query, k); !s.ok()) return s;
  if (k == 0 || size() == 0 || row_ids.empty()) return std::vector<IndexHit>();
  if (row_ids.size() * kMaxKFractionForBoundedScan >= size()) {
    std::vector<uint8_t> mask(size(), 0);
    for (int64_t id : row_ids) {
      if (auto it = positions_.find(id); it != positions_.end()) mask[it->second] = 1;
    }
    return Scan(query, static_cast<size_t>(k), filter, mask.data());
  }
  std::vector<size_t> positions;
  positions.reserve(row_ids.size());
  for (int64_t id : row_ids) {
    if (auto it = positions_.find(id); it != positions_.end() && Passes(it->second, filter, nullptr)) {
      positions.push_back(it->second);
    }
  }
  std::sort(positions.begin(), positions.end());
  positions.erase(std::unique(positions.begin(), positions.end()), positions.end());
  TopK top(static_cast<size_t>(k), positions.size());
  for (size_t begin = 0; begin < positions.size(); begin += kBlockRows) {
    ScoreInto(*kernels_, query, data_.data(), stride_, row_ids_, positions.data() + begin,
              std::min(kBlockRows, positions.size() - begin), top);
  }
  return std::move(top).TakeSorted();
}

absl::StatusOr<std::vector<IndexHit>> FlatIndex::SearchWithSide(std::span<const float> query, int k,
                                                                const IndexFilter& filter, int side_k,
                                                                const IndexFilter& side_filter,
                                                                std::vector<IndexHit>* side) const {
  side->clear();
  if (auto s = CheckSearch(query, k); !s.ok()) return s;
  if (auto s = CheckSearch(query, side_k); !s.ok()) return s;
  if (size() == 0) return std::vector<IndexHit>();
  if (k == 0) {
    if (side_k > 0) *side = Scan(query, static_cast<size_t>(side_k), side_filter, /*mask=*/nullptr);
    return std::vector<IndexHit>();
  }
  const Side extra{static_cast<size_t>(side_k), side_filter, side};
  return Scan(query, static_cast<size_t>(k), filter, /*mask=*/nullptr, side_k > 0 ? &extra : nullptr);
}

std::vector<IndexHit> FlatIndex::Scan(std::span<const float> query, size_t k, const IndexFilter& filter,
                                      const uint8_t* mask, const Side* side) const {
  const size_t n = size();
  const size_t most = side != nullptr ? std::max(k, side->k) : k;
  if (int8_ && n >= kMinRowsForBoundedScan && most * kMaxKFractionForBoundedScan <= n) {
    const size_t nonzero =
        static_cast<size_t>(std::count_if(query.begin(), query.end(), [](float x) { return x != 0; }));
    const bool dense = 2 * nonzero > static_cast<size_t>(dimension_);
    if (!dense || n >= kMinRowsForDenseBoundedScan) {
      const Int8Query prepared = int8_->PrepareQuery(query);
      if (prepared.usable) return BoundedScan(query, prepared, k, filter, mask, side);
    }
  }
  return ExactScan(query, k, filter, mask, side);
}

std::vector<IndexHit> FlatIndex::ExactScan(std::span<const float> query, size_t k, const IndexFilter& filter,
                                           const uint8_t* mask, const Side* side) const {
  const size_t n = size();
  TopK top(k, n);
  TopK side_top(side != nullptr ? side->k : 0, n);  // offered nothing without a side
  size_t positions[kBlockRows];
  size_t side_positions[kBlockRows];
  for (size_t begin = 0; begin < n; begin += kBlockRows) {
    const size_t end = std::min(n, begin + kBlockRows);
    size_t passing = 0, side_passing = 0;
    for (size_t p = begin; p < end; ++p) {
      // Branch-free compaction: always write, advance only when the row passes.
      positions[passing] = p;
      passing += Passes(p, filter, mask);
      if (side != nullptr) {
        side_positions[side_passing] = p;
        side_passing += Passes(p, side->filter, mask);
      }
    }
    ScoreInto(*kernels_, query, data_.data(), stride_, row_ids_, positions, passing, top);
    if (side_passing > 0) {
      ScoreInto(*kernels_, query, data_.data(), stride_, row_ids_, side_positions, side_passing, side_top);
    }
  }
  std::vector<IndexHit> hits = std::move(top).TakeSorted();
  if (side != nullptr) {
    *side->hits = std::move(side_top).TakeSorted();
    KeepReaching(hits, k, side->hits);
  }
  return hits;
}

std::vector<IndexHit> FlatIndex::BoundedScan(std::span<const float> query, const Int8Query& prepared,
                                             size_t k, const IndexFilter& filter, const uint8_t* mask,
                                             const Side* side) const {
  BoundSelection top(k);
  std::optional<BoundSelection> side_top;
  if (side != nullptr) side_top.emplace(side->k);
  float lower[Int8Rows::kBlockRows];
  float upper[Int8Rows::kBlockRows];
  for (size_t block = 0; block < int8_->blocks(); ++block) {
    // Only rows whose upper bound reaches tau (as of the block's start; it only grows) are visited;
    // side rows too: one that scores at least the k-th hit reaches it (SearchWithSide's contract).
    uint64_t reaching = int8_->Bounds(prepared, block, top.tau(), lower, upper);
    const size_t first = block * Int8Rows::kBlockRows;
    for (; reaching != 0; reaching &= reaching - 1) {
      const size_t r = static_cast<size_t>(std::countr_zero(reaching));
      if (Passes(first + r, filter, mask)) top.Offer(lower[r], upper[r], first + r);
      if (side_top && Passes(first + r, side->filter, mask)) side_top->Offer(lower[r], upper[r], first + r);
    }
  }
  // The main tau is at most the k-th hit's score (k offered rows have a lower bound at least tau),
  // so a side row whose upper bound is below it is cut by KeepReaching: it is not rescored.
  const float main_tau = top.tau();
  std::vector<IndexHit> hits = std::move(top).Rescore(*kernels_, query, data_.data(), stride_, row_ids_);
  if (side_top) {
    *side->hits = std::move(*side_top).Rescore(*kernels_, query, data_.data(), stride_, row_ids_, main_tau);
    KeepReaching(hits, k, side->hits);
  }
  return hits;
}

}  // namespace bulwark
