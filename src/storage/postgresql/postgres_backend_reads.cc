// PostgresBackend: the reads, the scans, the upgrade signing and the defenses' state (see
// postgres_backend.h).
#include <absl/container/flat_hash_map.h>
#include <absl/strings/numbers.h>
#include <absl/strings/str_cat.h>
#include <absl/synchronization/mutex.h>

#include <cstring>
#include <optional>
#include <utility>

#include "core/status_macros.h"
#include "core/strings.h"
#include "storage/postgresql/postgres_backend.h"
#include "storage/postgresql/postgres_rows.h"

namespace bulwark {
namespace {

using pg::PgParam;
using pg::PgResult;
using pg::PgTransaction;

const std::string& EntrySelect() {
  static const std::string sql = absl::StrCat("SELECT ", pg::kSignedEntryColumns, ", report FROM entries");
  return sql;
}

}  // namespace

absl::Status PostgresBackend::ScanPagesLocked(
    const std::string& sql, std::vector<PgParam> params,
    const std::function<absl::Status(const PgResult&, int)>& visit) {
  PgTransaction txn(*conn_, PgTransaction::Mode::kRepeatableReadOnly);
  BULWARK_RETURN_IF_ERROR(txn.status());
  params.push_back(PgParam::Int(INT64_MIN));
  while (true) {
    BULWARK_ASSIGN_OR_RETURN(auto page, conn_->Query(sql, params));
    for (int r = 0; r < page.rows(); ++r) BULWARK_RETURN_IF_ERROR(visit(page, r));
    if (page.rows() < kScanPage) break;
    params.back() = PgParam::Int(page.Int(page.rows() - 1, 0));
  }
  return txn.Commit();
}

absl::StatusOr<std::optional<StoredRow>> PostgresBackend::GetEntry(std::string_view name_space,
                                                                   std::string_view id) {
  absl::MutexLock lock(&mu_);
  static const std::string sql = absl::StrCat(EntrySelect(), " WHERE id = $1 AND namespace = $2");
  const std::vector<PgParam> params = {PgParam::Text(id), PgParam::Text(name_space)};
  BULWARK_ASSIGN_OR_RETURN(auto result, ReadLocked("get_entry", sql, params));
  if (result.rows() == 0) return std::optional<StoredRow>();
  return std::optional<StoredRow>(pg::DecodeEntryRow(result, 0));
}

absl::StatusOr<std::vector<std::optional<StoredRow>>> PostgresBackend::GetRows(
    std::span<const int64_t> row_ids) {
  // The read path's rows: every signed column, but not the advisory report ('{}' keeps the column
  // layout). One statement, so one snapshot.
  static const std::string sql = absl::StrCat("SELECT ", pg::kSignedEntryColumns,
                                              ", '{}'::text FROM entries WHERE row_id = ANY($1::bigint[])");
  std::string ids = "{";
  for (size_t i = 0; i < row_ids.size(); ++i) absl::StrAppend(&ids, i ? "," : "", row_ids[i]);
  ids += "}";
  absl::MutexLock lock(&mu_);
  const std::vector<PgParam> params = {PgParam::Text(ids)};
  BULWARK_ASSIGN_OR_RETURN(auto result, ReadLocked("get_rows", sql, params));
  absl::flat_hash_map<int64_t, int> found;
  for (int r = 0; r < result.rows(); ++r) found[result.Int(r, 0)] = r;
  std::vector<std::optional<StoredRow>> rows(row_ids.size());
  for (size_t i = 0; i < row_ids.size(); ++i) {
    if (auto it = found.find(row_ids[i]); it != found.end()) rows[i] = pg::DecodeEntryRow(result, it->second);
  }
  return rows;
}

absl::Status PostgresBackend::ScanEntries(std::string_view name_space,
                                          const std::function<absl::Status(const StoredRow&)>& visit) {
  absl::MutexLock lock(&mu_);
  std::vector<PgParam> params;
  std::string sql = EntrySelect();
  if (name_space.empty()) {
    absl::StrAppend(&sql, " WHERE row_id > $1");
  } else {
    absl::StrAppend(&sql, " WHERE namespace = $1 AND row_id > $2");
    params.push_back(PgParam::Text(name_space));
  }
  absl::StrAppend(&sql, " ORDER BY row_id LIMIT ", kScanPage);
  return ScanPagesLocked(sql, std::move(params),
                         [&](const PgResult& page, int r) { return visit(pg::DecodeEntryRow(page, r)); });
}

absl::StatusOr<std::vector<HistoryEvent>> PostgresBackend::History(std::string_view name_space,
                                                                   std::string_view id) {
  absl::MutexLock lock(&mu_);
  static const std::string sql = absl::StrCat(
      "SELECT ", pg::kEventColumns, " FROM history WHERE entry_id = $1 AND namespace = $2 ORDER BY seq");
  const std::vector<PgParam> params = {PgParam::Text(id), PgParam::Text(name_space)};
  BULWARK_ASSIGN_OR_RETURN(auto result, ReadLocked("history", sql, params));
  std::vector<HistoryEvent> events;
  events.reserve(result.rows());
  for (int r = 0; r < result.rows(); ++r) events.push_back(pg::DecodeEventRow(result, r));
  return events;
}

absl::Status PostgresBackend::ScanHistory(const std::function<absl::Status(const HistoryEvent&)>& visit) {
  absl::MutexLock lock(&mu_);
  const std::string sql = absl::StrCat("SELECT ", pg::kEventColumns,
                                       " FROM history WHERE seq > $1 ORDER BY seq LIMIT ", kScanPage);
  return ScanPagesLocked(sql, {},
                         [&](const PgResult& page, int r) { return visit(pg::DecodeEventRow(page, r)); });
}

absl::Status PostgresBackend::ScanNewestEventTimes(std::string_view name_space,
                                                   const std::function<void(int64_t, int64_t)>& visit) {
  absl::MutexLock lock(&mu_);
  std::vector<PgParam> params;
  if (!name_space.empty()) params.push_back(PgParam::Text(name_space));
  BULWARK_ASSIGN_OR_RETURN(
      auto result,
      conn_->Query(absl::StrCat("SELECT e.row_id, MAX(h.at_us) FROM entries e JOIN history h "
                                "ON h.entry_id = e.id AND h.namespace = e.namespace",
                                name_space.empty() ? "" : " WHERE e.namespace = $1", " GROUP BY e.row_id"),
                   params));
  for (int r = 0; r < result.rows(); ++r) visit(result.Int(r, 0), result.Int(r, 1));
  return absl::OkStatus();
}

absl::StatusOr<int64_t> PostgresBackend::LastEventSeq() {
  absl::MutexLock lock(&mu_);
  BULWARK_ASSIGN_OR_RETURN(auto result,
                           ReadLocked("last_event_seq", "SELECT COALESCE(MAX(seq), 0) FROM history", {}));
  return result.Int(0, 0);
}

absl::StatusOr<std::vector<StorageBackend::EventRef>> PostgresBackend::EventsAfter(int64_t seq) {
  absl::MutexLock lock(&mu_);
  const std::vector<PgParam> params = {PgParam::Int(seq)};
  BULWARK_ASSIGN_OR_RETURN(
      auto result,
      ReadLocked("events_after", "SELECT seq, namespace, entry_id FROM history WHERE seq > $1 ORDER BY seq",
                 params));
  std::vector<EventRef> events;
  events.reserve(result.rows());
  for (int r = 0; r < result.rows(); ++r)
    events.push_back({result.Int(r, 0), result.Bytes(r, 1), result.Bytes(r, 2)});
  return events;
}

absl::StatusOr<std::vector<StorageBackend::EventRef>> PostgresBackend::HeldEventsAfter(
    int64_t seq, const std::vector<std::string>& held) {
  // One statement, so one snapshot: the held namespaces' events and the others' newest seqs agree.
  static const std::string sql =
      "SELECT seq, namespace, entry_id FROM history WHERE seq > $1 AND namespace = ANY($2::text[]) "
      "UNION ALL SELECT MAX(seq), namespace, '' FROM history WHERE seq > $1 AND namespace <> ALL($2::text[]) "
      "GROUP BY namespace ORDER BY 1";
  std::string names = "{";  // an array literal: each element quoted, '"' and '\\' escaped
  for (size_t i = 0; i < held.size(); ++i) {
    absl::StrAppend(&names, i ? "," : "", "\"");
    for (char c : held[i]) {
      if (c == '"' || c == '\\') names += '\\';
      names += c;
    }
    names += '"';
  }
  names += '}';
  absl::MutexLock lock(&mu_);
  const std::vector<PgParam> params = {PgParam::Int(seq), PgParam::Text(names)};
  BULWARK_ASSIGN_OR_RETURN(auto result, ReadLocked("held_events_after", sql, params));
  std::vector<EventRef> events;
  events.reserve(result.rows());
  for (int r = 0; r < result.rows(); ++r)
    events.push_back({result.Int(r, 0), result.Bytes(r, 1), result.Bytes(r, 2)});
  return events;
}

std::vector<int64_t> PostgresBackend::TakeInsertedEventSeqs() {
  absl::MutexLock lock(&mu_);
  return std::exchange(inserted_event_seqs_, {});
}

absl::StatusOr<int64_t> PostgresBackend::SignEventsFromBeforeSigning(
    const std::function<void(HistoryEvent*)>& sign) {
  absl::MutexLock lock(&mu_);
  constexpr char kMarker[] = "SELECT value FROM meta WHERE key = 'unsigned_history_through'";
  // Almost every open finds no marker, and takes no write lock for it.
  BULWARK_ASSIGN_OR_RETURN(auto seen, conn_->Query(kMarker));
  if (seen.rows() == 0) return 0;
  PgTransaction txn(*conn_);
  BULWARK_RETURN_IF_ERROR(txn.status());
  BULWARK_RETURN_IF_ERROR(LockWritersLocked());
  BULWARK_ASSIGN_OR_RETURN(auto marked, conn_->Query(kMarker));  // again, under the writers' lock
  if (marked.rows() == 0) return 0;
  int64_t through = 0;
  if (!absl::SimpleAtoi(absl::string_view(marked.View(0, 0).data(), marked.View(0, 0).size()), &through)) {
    return absl::DataLossError("the upgrade marker is not a number");
  }
  const std::vector<PgParam> params = {PgParam::Int(through)};
  BULWARK_ASSIGN_OR_RETURN(
      auto found, conn_->Query(absl::StrCat("SELECT ", pg::kEventColumns,
                                            " FROM history WHERE length(tag) = 0 AND seq <= $1 ORDER BY seq"),
                               params));
  std::vector<std::vector<PgParam>> rows;
  for (int r = 0; r < found.rows(); ++r) {
    HistoryEvent e = pg::DecodeEventRow(found, r);
    sign(&e);
    rows.push_back(
        {PgParam::Int(static_cast<int64_t>(e.key_id)), PgParam::Bytes(e.tag), PgParam::Int(e.seq)});
  }
  BULWARK_RETURN_IF_ERROR(
      conn_->ExecBatch("sign_event", "UPDATE history SET key_id = $1, tag = $2 WHERE seq = $3", rows)
          .status());
  BULWARK_RETURN_IF_ERROR(conn_->Exec("DELETE FROM meta WHERE key = 'unsigned_history_through'"));
  BULWARK_RETURN_IF_ERROR(txn.Commit());
  return static_cast<int64_t>(rows.size());
}

absl::Status PostgresBackend::CheckIntegrity() {
  absl::MutexLock lock(&mu_);
  BULWARK_ASSIGN_OR_RETURN(
      auto result,
      conn_->Query("SELECT (SELECT last_seq FROM history_counter WHERE id = 1), "
                   "(SELECT COALESCE(MAX(seq), 0) FROM history), (SELECT count(*) FROM history_counter)"));
  if (result.Int(0, 2) != 1) return absl::DataLossError("the history counter row is missing");
  if (result.Int(0, 0) < result.Int(0, 1)) {
    return absl::DataLossError(absl::StrCat("the history counter (", result.Int(0, 0),
                                            ") is behind the newest event (", result.Int(0, 1), ")"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<StateCount>> PostgresBackend::CountByState() {
  absl::MutexLock lock(&mu_);
  BULWARK_ASSIGN_OR_RETURN(auto result, conn_->Query("SELECT namespace, state, kind, count(*) FROM entries "
                                                     "GROUP BY namespace, state, kind ORDER BY 1, 2, 3"));
  std::vector<StateCount> counts;
  for (int r = 0; r < result.rows(); ++r) {
    auto state = ParseState(result.Bytes(r, 1));
    auto kind = ParseKind(result.Bytes(r, 2));
    if (!state || !kind) continue;  // undecodable rows are reported by verify, not counted here
    counts.push_back({result.Bytes(r, 0), *state, *kind, result.Int(r, 3)});
  }
  return counts;
}

absl::StatusOr<std::vector<StoredRow>> PostgresBackend::ListEntries(const ListQuery& query) {
  if (query.limit < 1 || query.limit > 10000) return absl::InvalidArgumentError("limit must be 1..10000");
  if (query.states.empty()) return absl::InvalidArgumentError("no states to list");
  std::string states;
  for (State state : query.states)
    absl::StrAppend(&states, states.empty() ? "'" : ", '", std::string(ToString(state)), "'");
  const std::string sql = absl::StrCat(
      EntrySelect(), " WHERE namespace = $1 AND id > $2 AND kind = 'memory' AND state IN (", states, ")",
      query.key ? " AND bulwark_entry_key(metadata) = $4" : "", " ORDER BY id LIMIT $3");
  std::vector<PgParam> params = {PgParam::Text(query.name_space), PgParam::Text(query.after_id),
                                 PgParam::Int(query.limit)};
  if (query.key) params.push_back(PgParam::Text(*query.key));
  absl::MutexLock lock(&mu_);
  BULWARK_ASSIGN_OR_RETURN(auto result, conn_->Query(sql, params));
  std::vector<StoredRow> rows;
  rows.reserve(result.rows());
  for (int r = 0; r < result.rows(); ++r) rows.push_back(pg::DecodeEntryRow(result, r));
  return rows;
}

absl::StatusOr<std::vector<std::pair<std::string, std::string>>> PostgresBackend::ExpiredEntries(
    int64_t now_us, int limit) {
  absl::MutexLock lock(&mu_);
  const std::vector<PgParam> params = {PgParam::Int(now_us), PgParam::Int(limit)};
  BULWARK_ASSIGN_OR_RETURN(auto result,
                           conn_->Prepared("expired_entries",
                                           "SELECT namespace, id FROM entries WHERE "
                                           "bulwark_entry_expiry(metadata) <= $1 AND state <> 'purged' "
                                           "ORDER BY bulwark_entry_expiry(metadata) LIMIT $2",
                                           params));
  std::vector<std::pair<std::string, std::string>> expired;
  for (int r = 0; r < result.rows(); ++r) expired.emplace_back(result.Bytes(r, 0), result.Bytes(r, 1));
  return expired;
}

absl::Status PostgresBackend::SaveQueryHistory(std::string_view name_space, uint64_t first_sequence,
                                               std::span<const std::vector<float>> rows,
                                               uint64_t keep_from_sequence, bool replace) {
  absl::MutexLock lock(&mu_);
  PgTransaction txn(*conn_);
  BULWARK_RETURN_IF_ERROR(txn.status());
  BULWARK_RETURN_IF_ERROR(CheckFenceLocked(name_space));
  const std::vector<PgParam> ns = {PgParam::Text(name_space)};
  if (replace)
    BULWARK_RETURN_IF_ERROR(conn_->Query("DELETE FROM query_history WHERE namespace = $1", ns).status());
  std::vector<std::vector<PgParam>> params;
  params.reserve(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    params.push_back({PgParam::Text(name_space), PgParam::Int(static_cast<int64_t>(first_sequence + i)),
                      PgParam::Bytes(pg::EmbeddingBytes(rows[i]))});
  }
  BULWARK_RETURN_IF_ERROR(
      conn_
          ->ExecBatch("save_query",
                      "INSERT INTO query_history(namespace, seq, embedding) VALUES($1,$2,$3) "
                      "ON CONFLICT(namespace, seq) DO UPDATE SET embedding = excluded.embedding",
                      params)
          .status());
  const std::vector<PgParam> trim = {PgParam::Text(name_space),
                                     PgParam::Int(static_cast<int64_t>(keep_from_sequence))};
  BULWARK_RETURN_IF_ERROR(
      conn_->Query("DELETE FROM query_history WHERE namespace = $1 AND seq < $2", trim).status());
  return txn.Commit();
}

absl::Status PostgresBackend::ScanQueryHistory(
    const std::function<absl::Status(std::string_view, uint64_t, std::vector<float>)>& visit) {
  absl::MutexLock lock(&mu_);
  BULWARK_ASSIGN_OR_RETURN(
      auto result,
      conn_->Query("SELECT namespace, seq, embedding FROM query_history ORDER BY namespace, seq"));
  for (int r = 0; r < result.rows(); ++r) {
    const std::string_view bytes = result.View(r, 2);
    std::vector<float> v(bytes.size() / sizeof(float));
    if (!v.empty()) std::memcpy(v.data(), bytes.data(), v.size() * sizeof(float));
    BULWARK_RETURN_IF_ERROR(visit(result.View(r, 0), static_cast<uint64_t>(result.Int(r, 1)), std::move(v)));
  }
  return absl::OkStatus();
}

absl::Status PostgresBackend::PutCalibration(std::string_view name_space, std::string_view calibration) {
  absl::MutexLock lock(&mu_);
  // A transaction only for the fence: unfenced, the upsert alone is atomic.
  std::optional<PgTransaction> txn;
  if (fences_.contains(ToAbsl(name_space)) || fences_required_) {
    txn.emplace(*conn_);
    BULWARK_RETURN_IF_ERROR(txn->status());
    BULWARK_RETURN_IF_ERROR(CheckFenceLocked(name_space));
  }
  const std::vector<PgParam> params = {PgParam::Text(name_space), PgParam::Text(calibration)};
  BULWARK_RETURN_IF_ERROR(
      conn_
          ->Query("INSERT INTO calibrations(namespace, calibration) VALUES($1, $2) "
                  "ON CONFLICT(namespace) DO UPDATE SET calibration = excluded.calibration",
                  params)
          .status());
  return txn.has_value() ? txn->Commit() : absl::OkStatus();
}

absl::Status PostgresBackend::ScanCalibrations(
    const std::function<absl::Status(std::string_view, std::string_view)>& visit) {
  absl::MutexLock lock(&mu_);
  BULWARK_ASSIGN_OR_RETURN(
      auto result, conn_->Query("SELECT namespace, calibration FROM calibrations ORDER BY namespace"));
  for (int r = 0; r < result.rows(); ++r)
    BULWARK_RETURN_IF_ERROR(visit(result.View(r, 0), result.View(r, 1)));
  return absl::OkStatus();
}

}  // namespace bulwark
