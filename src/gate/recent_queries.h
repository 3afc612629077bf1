// RecentQueries: the embeddings of a namespace's recent queries, the "own recent history" a query
// gate can be fitted on (`bulwark gate fit --from-history`). Only queries the gate let through are
// recorded (all of them while a namespace has no gate), newest `capacity` per namespace.
//
// Kept in their own database file, <store>/gate_history.db (doc/gate_format.md), with
// synchronous=NORMAL: recording sits on the search path and must neither wait for the store's
// write lock nor fsync; losing the last few recorded queries in a power cut is harmless. Query
// text is never stored, only the embedding. Thread-safe.
//
// Caution: whoever can send many queries shapes this history. Fit from a curated file when the
// query stream itself may be adversarial.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <span>
#include <string_view>
#include <vector>

#include <absl/status/statusor.h>

struct sqlite3;

namespace bulwark {

class RecentQueries {
 public:
  static constexpr char kFileName[] = "gate_history.db";

  // Opens (creating if needed) <store_dir>/gate_history.db. `capacity` queries per namespace are
  // kept, 1 .. 1,000,000. Unavailable if the file cannot be opened; DataLoss if it is not SQLite.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<RecentQueries>> Open(
      const std::filesystem::path& store_dir, int capacity);
  ~RecentQueries();

  // Appends one query embedding of `name_space`, dropping the oldest beyond capacity.
  [[nodiscard]] absl::Status Record(std::string_view name_space, int64_t at_us,
                                    std::span<const float> embedding);
  // The newest `limit` embeddings of `name_space`, oldest first.
  [[nodiscard]] absl::StatusOr<std::vector<std::vector<float>>> Recent(std::string_view name_space,
                                                                       int limit);

 private:
  RecentQueries(sqlite3* db, int capacity) : db_(db), capacity_(capacity) {}
  std::mutex mu_;  // serializes use of db_
  sqlite3* db_;
  int capacity_;
};

}  // namespace bulwark
