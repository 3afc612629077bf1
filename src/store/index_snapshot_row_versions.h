// RowVersionTable: each row's newest version (updated_at_us) as EntryStore's rollback check knows
// it, and what an index snapshot saves of it (store/index_snapshot.h). Row ids are handed out
// densely by both backends (SQLite's rowid and PostgreSQL's identity column count 1, 2, ...), so
// the versions are kept in an array by row id: 8 bytes a row, where the hash map it replaces took
// 16 bytes a slot at a load factor between 7/16 and 7/8 (about 35 bytes a row at 1M rows, just
// past a capacity doubling; issue #12 point 3's resident memory). An id far beyond the array (more
// than twice the rows known, plus 4,096) goes to a hash map instead, so a sparse id cannot make the
// array large. Not synchronized (EntryStore guards it with its mutex).
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/functional/function_ref.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

namespace bulwark {

class RowVersionTable {
 public:
  // Makes room for row ids below `rows` (a hint; out of memory is not an error here).
  void Reserve(size_t rows) { dense_.reserve(std::min<size_t>(rows, kMaxDenseReserve)); }
  // Raises the known version of `row_id` to `version` (keeps the larger).
  void Note(int64_t row_id, int64_t version) {
    int64_t* known = Slot(row_id);
    if (*known == kUnknown) ++known_;
    *known = std::max(*known, version);
  }
  // The known version of `row_id`, if any.
  std::optional<int64_t> Find(int64_t row_id) const {
    if (row_id >= 0 && static_cast<uint64_t>(row_id) < dense_.size()) {
      const int64_t v = dense_[static_cast<size_t>(row_id)];
      return v == kUnknown ? std::nullopt : std::optional<int64_t>(v);
    }
    const auto it = sparse_.find(row_id);
    return it == sparse_.end() ? std::nullopt : std::optional<int64_t>(it->second);
  }
  size_t size() const { return known_; }  // rows with a known version
  // Calls `visit` for every row with a known version: the array's in ascending id, then the rest.
  void ForEach(absl::FunctionRef<void(int64_t row_id, int64_t version)> visit) const {
    for (size_t id = 0; id < dense_.size(); ++id) {
      if (dense_[id] != kUnknown) visit(static_cast<int64_t>(id), dense_[id]);
    }
    for (const auto& [row_id, version] : sparse_) visit(row_id, version);
  }

 private:
  static constexpr int64_t kUnknown = std::numeric_limits<int64_t>::min();
  static constexpr size_t kSlack = 4096;
  static constexpr size_t kMaxDenseReserve = size_t{1} << 28;

  int64_t* Slot(int64_t row_id) {
    if (row_id >= 0) {
      const uint64_t id = static_cast<uint64_t>(row_id);
      if (id < dense_.size()) return &dense_[static_cast<size_t>(id)];
      if (id < 2 * (known_ + kSlack)) {  // dense enough: grow the array (its capacity geometrically)
        const size_t old_size = dense_.size();
        dense_.resize(static_cast<size_t>(id) + 1, kUnknown);
        // Ids the array now covers leave the map (it is empty unless ids came out of order).
        for (auto it = sparse_.begin(); it != sparse_.end();) {
          const int64_t moved = it->first;
          if (moved < 0 || static_cast<uint64_t>(moved) < old_size || static_cast<uint64_t>(moved) > id) {
            ++it;
            continue;
          }
          dense_[static_cast<size_t>(moved)] = it->second;
          sparse_.erase(it++);
        }
        return &dense_[static_cast<size_t>(id)];
      }
    }
    return &sparse_.try_emplace(row_id, kUnknown).first->second;
  }

  std::vector<int64_t> dense_;  // by row id; kUnknown where none is known
  absl::flat_hash_map<int64_t, int64_t> sparse_;
  size_t known_ = 0;
};

}  // namespace bulwark
