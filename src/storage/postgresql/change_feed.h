// ChangeFeed: the change feed that followers apply (issue #17 point 2; doc/scale-out.md, "Replication").
// It reads the store's history events after a version, in version order, in bounded batches,
// with the entry rows they changed, from one snapshot per batch.
//
// Versions. A version is a history seq. PostgresBackend assigns seqs under the history counter's
// row lock, so they are gap-free and in commit order store-wide (postgres_backend.h): a snapshot
// that holds seq n + 1 holds every seq up to n. The events of one namespace are therefore a
// commit-ordered subsequence, and "namespace ns is at version v" means "every event of ns with
// seq <= v is applied". A reader that takes the events after its cursor, in seq order, from one
// snapshot, and moves its cursor to the batch's `through`, never skips or reorders an event.
// (Per-namespace counters, which would let namespaces commit in parallel, would keep this
// contract per namespace; today the backend serializes writers store-wide.)
//
// Rows. A batch's row of an entry is its row in the batch's snapshot: the state after the
// batch's newest event of it (or later, never earlier). Rows are never verified here: this is
// storage; the follower checks every row's signature before indexing it.
//
// Thread-compatible: one connection, serialized by a mutex.
#pragma once

#include <absl/status/status.h>
#include <absl/status/statusor.h>
#include <absl/synchronization/mutex.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "storage/postgresql/pg_connection.h"
#include "storage/storage_backend.h"

namespace bulwark {

// The most events one ReadAfter call returns.
inline constexpr int kMaxFeedBatch = 10000;

struct FeedEvent {
  int64_t seq = 0;
  std::string name_space;
  std::string entry_id;
  std::string event;             // "add", "update", "delete", "purge", ...
  std::optional<StoredRow> row;  // the entry's row in the batch's snapshot, when asked for and present
};

struct FeedBatch {
  std::vector<FeedEvent> events;  // seq order
  // Every event with seq <= through that the call could return is in `events`: the batch's last
  // seq when the batch is full, else the snapshot's newest seq. Never below the call's `after`.
  int64_t through = 0;
};

class ChangeFeed {
 public:
  // Connects to an existing store and creates the index history_by_namespace(namespace, seq)
  // if missing. Unavailable if the server cannot be reached; NotFound if the database holds no
  // store (open it with PostgresBackend first).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<ChangeFeed>> Open(std::string_view conninfo);

  // The events of every namespace with seq > after, oldest first, at most `limit`, with the rows
  // of the entries whose namespace `want_rows` accepts (nullptr: no rows), from one snapshot.
  // InvalidArgument for after < 0 or a limit outside 1..kMaxFeedBatch.
  [[nodiscard]] absl::StatusOr<FeedBatch> ReadAfter(int64_t after, int limit,
                                                    const std::function<bool(std::string_view)>& want_rows);
  // The events of `name_space` with seq > after, oldest first, at most `limit`, with their rows
  // if `with_rows` (a takeover's or a cold start's read of one namespace; the index makes it
  // cost the namespace's events only). Errors as ReadAfter.
  [[nodiscard]] absl::StatusOr<FeedBatch> ReadNamespaceAfter(std::string_view name_space, int64_t after,
                                                             int limit, bool with_rows);
  // The newest seq (0 for an empty history).
  [[nodiscard]] absl::StatusOr<int64_t> LastSeq();

 private:
  explicit ChangeFeed(std::unique_ptr<pg::PgConnection> conn) : conn_(std::move(conn)) {}
  // Runs `sql` ($1 after, $2 limit, then `extra`) in a read-only snapshot and fills the batch;
  // reads the rows of the events `want_rows` accepts in the same snapshot. Requires mu_.
  absl::StatusOr<FeedBatch> ReadLocked(const std::string& sql, int64_t after, int limit,
                                       std::vector<pg::PgParam> extra,
                                       const std::function<bool(std::string_view)>& want_rows)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Reads the row of every event of `batch` that `want` accepts (each entry once), in one
  // pipeline. Requires mu_ and the snapshot's transaction.
  absl::Status ReadRowsLocked(const std::function<bool(std::string_view)>& want, FeedBatch* batch)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  absl::Mutex mu_;  // serializes all use of conn_
  std::unique_ptr<pg::PgConnection> conn_ ABSL_GUARDED_BY(mu_);
};

}  // namespace bulwark
