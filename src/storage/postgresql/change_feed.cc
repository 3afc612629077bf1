// ChangeFeed: bounded, snapshot-consistent reads of the history after a version (see the header).
#include "storage/postgresql/change_feed.h"

#include <absl/container/flat_hash_map.h>
#include <absl/strings/str_cat.h>

#include <utility>

#include "core/status_macros.h"
#include "storage/postgresql/postgres_rows.h"

namespace bulwark {
namespace {

using pg::PgParam;
using pg::PgTransaction;

// The index a namespace's read (and a follower's takeover) walks. CREATE INDEX IF NOT EXISTS
// waits for writers in flight; ExecSchema skips it once the index exists.
constexpr char kFeedSchema[] = "CREATE INDEX IF NOT EXISTS history_by_namespace ON history(namespace, seq);";

constexpr char kAllAfter[] =
    "SELECT seq, namespace, entry_id, event FROM history WHERE seq > $1 ORDER BY seq LIMIT $2";
constexpr char kNamespaceAfter[] =
    "SELECT seq, namespace, entry_id, event FROM history WHERE namespace = $3 AND seq > $1 "
    "ORDER BY namespace, seq LIMIT $2";

absl::Status CheckBounds(int64_t after, int limit) {
  if (after < 0) return absl::InvalidArgumentError(absl::StrCat("feed: negative version ", after));
  if (limit < 1 || limit > kMaxFeedBatch) {
    return absl::InvalidArgumentError(
        absl::StrCat("feed: batch size ", limit, " is outside 1..", kMaxFeedBatch));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<ChangeFeed>> ChangeFeed::Open(std::string_view conninfo) {
  BULWARK_ASSIGN_OR_RETURN(auto conn, pg::PgConnection::Open(conninfo));
  BULWARK_RETURN_IF_ERROR(pg::RequireStore(*conn));
  BULWARK_RETURN_IF_ERROR(pg::ExecSchema(*conn, kFeedSchema, "history_by_namespace"));
  return std::unique_ptr<ChangeFeed>(new ChangeFeed(std::move(conn)));
}

absl::StatusOr<FeedBatch> ChangeFeed::ReadAfter(int64_t after, int limit,
                                                const std::function<bool(std::string_view)>& want_rows) {
  BULWARK_RETURN_IF_ERROR(CheckBounds(after, limit));
  absl::MutexLock lock(&mu_);
  return ReadLocked(kAllAfter, after, limit, {}, want_rows);
}

absl::StatusOr<FeedBatch> ChangeFeed::ReadNamespaceAfter(std::string_view name_space, int64_t after,
                                                         int limit, bool with_rows) {
  BULWARK_RETURN_IF_ERROR(CheckBounds(after, limit));
  absl::MutexLock lock(&mu_);
  std::function<bool(std::string_view)> all;
  if (with_rows) all = [](std::string_view) { return true; };
  return ReadLocked(kNamespaceAfter, after, limit, {PgParam::Text(name_space)}, all);
}

absl::StatusOr<int64_t> ChangeFeed::LastSeq() {
  absl::MutexLock lock(&mu_);
  BULWARK_ASSIGN_OR_RETURN(auto result, conn_->Query("SELECT COALESCE(MAX(seq), 0) FROM history"));
  return result.Int(0, 0);
}

absl::StatusOr<FeedBatch> ChangeFeed::ReadLocked(const std::string& sql, int64_t after, int limit,
                                                 std::vector<PgParam> extra,
                                                 const std::function<bool(std::string_view)>& want_rows) {
  // One snapshot for the events, the newest seq and the rows: the batch is a prefix of the
  // commit order (postgres_backend.h), and `through` is true of that same prefix.
  PgTransaction txn(*conn_, PgTransaction::Mode::kRepeatableReadOnly);
  BULWARK_RETURN_IF_ERROR(txn.status());
  std::vector<PgParam> params = {PgParam::Int(after), PgParam::Int(limit)};
  for (PgParam& p : extra) params.push_back(std::move(p));
  BULWARK_ASSIGN_OR_RETURN(auto rows, conn_->Query(sql, params));
  FeedBatch batch;
  batch.events.reserve(rows.rows());
  for (int r = 0; r < rows.rows(); ++r) {
    batch.events.push_back({rows.Int(r, 0), rows.Bytes(r, 1), rows.Bytes(r, 2), rows.Bytes(r, 3), {}});
  }
  if (static_cast<int>(batch.events.size()) == limit) {
    batch.through = batch.events.back().seq;
  } else {
    BULWARK_ASSIGN_OR_RETURN(auto newest, conn_->Query("SELECT COALESCE(MAX(seq), 0) FROM history"));
    batch.through = std::max(after, newest.Int(0, 0));
  }
  if (want_rows) BULWARK_RETURN_IF_ERROR(ReadRowsLocked(want_rows, &batch));
  BULWARK_RETURN_IF_ERROR(txn.Commit());
  return batch;
}

absl::Status ChangeFeed::ReadRowsLocked(const std::function<bool(std::string_view)>& want, FeedBatch* batch) {
  static const std::string sql = absl::StrCat("SELECT ", pg::kSignedEntryColumns,
                                              ", report FROM entries WHERE namespace = $1 AND id = $2");
  // Each entry once: (namespace, id) -> its index in `keys`.
  absl::flat_hash_map<std::pair<std::string, std::string>, size_t> slot;
  std::vector<std::vector<PgParam>> keys;
  for (const FeedEvent& e : batch->events) {
    if (!want(e.name_space)) continue;
    auto [it, inserted] = slot.try_emplace(std::make_pair(e.name_space, e.entry_id), keys.size());
    if (inserted) keys.push_back({PgParam::Text(e.name_space), PgParam::Text(e.entry_id)});
  }
  if (keys.empty()) return absl::OkStatus();
  BULWARK_ASSIGN_OR_RETURN(auto results, conn_->ExecBatch("feed_entry_row", sql, keys));
  for (FeedEvent& e : batch->events) {
    auto it = slot.find(std::make_pair(e.name_space, e.entry_id));
    if (it == slot.end() || results[it->second].rows() == 0) continue;
    e.row = pg::DecodeEntryRow(results[it->second], 0);
  }
  return absl::OkStatus();
}

}  // namespace bulwark
