// SqliteBackend's reads (see sqlite_backend.h): point reads of rows (the hot ones prepared once and
// reset after each use, so no read transaction is held between calls), whole-table scans through
// SQLite's page cache (not the memory map), history and what the in-memory index loads at open.
#include <absl/strings/str_cat.h>
#include <absl/synchronization/mutex.h>
#include <sqlite3.h>

#include <functional>
#include <utility>

#include "core/status_macros.h"
#include "storage/sqlite/sqlite_backend.h"
#include "storage/sqlite/sqlite_entry_rows.h"
#include "storage/sqlite/sqlite_event_rows.h"
#include "storage/sqlite/sqlite_util.h"

namespace bulwark {

using sqlite_rows::DecodeEvent;
using sqlite_rows::DecodeRow;
using sqlite_rows::DecodeRowInto;
using sqlite_rows::kEventColumns;
using sqlite_rows::kReportColumn;
using sqlite_rows::kSignedEntryColumns;
using sqlite_rows::NoMmapWhileScanning;

namespace {

// Steps `st` (its columns in DecodeRowInto's layout) to the end, handing each row to `visit`; stops
// at visit's first error. The SQLite error of a failed step.
absl::Status VisitEntryRows(sqlite3* db, Statement& st,
                            const std::function<absl::Status(const StoredRow&)>& visit) {
  BULWARK_RETURN_IF_ERROR(st.status());
  StoredRow row;
  while (true) {
    const int rc = st.Step();
    if (rc == SQLITE_DONE) return absl::OkStatus();
    if (rc != SQLITE_ROW) return SqliteError(db, "scan entries");
    DecodeRowInto(st, &row);
    BULWARK_RETURN_IF_ERROR(visit(row));
  }
}

}  // namespace

absl::StatusOr<Statement*> SqliteBackend::Cached(std::unique_ptr<Statement>& slot, std::string_view sql) {
  if (slot == nullptr) {
    auto prepared = std::make_unique<Statement>(db_, sql);
    BULWARK_RETURN_IF_ERROR(prepared->status());
    slot = std::move(prepared);
  }
  return slot.get();
}

absl::StatusOr<std::optional<StoredRow>> SqliteBackend::ReadOneRow(
    std::unique_ptr<Statement>& slot, std::string_view sql, const std::function<void(Statement&)>& bind,
    std::string_view what) {
  auto cached = Cached(slot, sql);
  if (!cached.ok()) return cached.status();
  Statement& st = **cached;
  ResetOnExit reset(st);
  bind(st);
  int rc = st.Step();
  if (rc == SQLITE_ROW) return std::optional<StoredRow>(DecodeRow(st));
  if (rc == SQLITE_DONE) return std::optional<StoredRow>();
  return SqliteError(db_, what);
}

absl::StatusOr<std::optional<StoredRow>> SqliteBackend::GetEntry(std::string_view name_space,
                                                                 std::string_view id) {
  absl::MutexLock lock(&mu_);
  static const std::string sql = absl::StrCat("SELECT ", kSignedEntryColumns, kReportColumn,
                                              " FROM entries WHERE id = ? AND namespace = ?");
  return ReadOneRow(
      get_entry_, sql,
      [&](Statement& st) {
        st.Bind(1, id);
        st.Bind(2, name_space);
      },
      "read entry");
}

absl::StatusOr<std::vector<std::optional<StoredRow>>> SqliteBackend::GetRows(
    std::span<const int64_t> row_ids) {
  absl::MutexLock lock(&mu_);
  // The read path's rows: every signed column, but not the advisory report (it is not signed, and
  // parsing it was a seventh of a search's CPU); '{}' keeps DecodeRow's column layout. One read
  // transaction for the whole batch (one snapshot, one WAL read lock), then one cached point
  // lookup per id: cheaper than one statement over an IN list, which SQLite first copies into a
  // temporary b-tree.
  static const std::string sql =
      absl::StrCat("SELECT ", kSignedEntryColumns, ", '{}' FROM entries WHERE row_id = ?");
  auto cached = Cached(get_row_, sql);
  if (!cached.ok()) return cached.status();
  Statement& st = **cached;
  auto begin = Cached(begin_read_, "BEGIN");
  if (!begin.ok()) return begin.status();
  auto commit = Cached(end_read_, "COMMIT");
  if (!commit.ok()) return commit.status();
  const absl::Status begun = (*begin)->Run("begin a read");
  (*begin)->Reset();
  if (!begun.ok()) return begun;
  // Ends the read transaction however this returns (a read-only COMMIT has nothing to write; if it
  // failed anyway, the next BEGIN would report it).
  struct EndReadOnExit {
    Statement& st;
    Statement& commit;
    ~EndReadOnExit() {
      st.Reset();
      (void)commit.Step();
      commit.Reset();
    }
  } end_read{st, **commit};
  std::vector<std::optional<StoredRow>> rows(row_ids.size());
  for (size_t i = 0; i < row_ids.size(); ++i) {
    st.Bind(1, row_ids[i]);
    const int rc = st.Step();
    if (rc == SQLITE_ROW) {
      rows[i] = DecodeRow(st);
    } else if (rc != SQLITE_DONE) {
      return SqliteError(db_, "read rows");
    }
    st.Reset();
  }
  return rows;
}

absl::Status SqliteBackend::ScanEntries(std::string_view name_space,
                                        const std::function<absl::Status(const StoredRow&)>& visit) {
  absl::MutexLock lock(&mu_);
  NoMmapWhileScanning no_mmap(db_);
  std::string sql = absl::StrCat("SELECT ", kSignedEntryColumns, kReportColumn, " FROM entries",
                                 name_space.empty() ? "" : " WHERE namespace = ?", " ORDER BY row_id");
  Statement st(db_, sql);
  BULWARK_RETURN_IF_ERROR(st.status());
  if (!name_space.empty()) st.Bind(1, name_space);
  while (true) {
    int rc = st.Step();
    if (rc == SQLITE_DONE) return absl::OkStatus();
    if (rc != SQLITE_ROW) return SqliteError(db_, "scan entries");
    BULWARK_RETURN_IF_ERROR(visit(DecodeRow(st)));
  }
}

absl::Status SqliteBackend::ScanRowsToIndex(const std::function<absl::Status(const StoredRow&)>& visit) {
  absl::MutexLock lock(&mu_);
  NoMmapWhileScanning no_mmap(db_);
  Statement st(db_, absl::StrCat("SELECT ", kSignedEntryColumns, ", '{}' FROM entries ORDER BY row_id"));
  return VisitEntryRows(db_, st, visit);
}

absl::Status SqliteBackend::ScanIndexColumns(std::string_view name_space, const IndexColumns& columns,
                                             const std::function<absl::Status(const StoredRow&)>& visit) {
  absl::MutexLock lock(&mu_);
  NoMmapWhileScanning no_mmap(db_);
  // DecodeRowInto's column layout, with constants for the columns not asked for: SQLite then does
  // not copy them (a row's text and metadata, or its 1.5 KB vector, stay in the page).
  const std::string sql = absl::StrCat(
      "SELECT row_id, id, namespace, ", columns.text ? "text" : "''", ", ",
      columns.metadata ? "metadata" : "'{}'", ", '', source, kind, state, created_at_us, updated_at_us, ",
      columns.embedding ? "embedding" : "X''", ", key_id, X'', '' FROM entries",
      name_space.empty() ? "" : " WHERE namespace = ?", " ORDER BY row_id");
  Statement st(db_, sql);
  if (st.status().ok() && !name_space.empty()) st.Bind(1, name_space);
  return VisitEntryRows(db_, st, visit);
}

absl::StatusOr<std::vector<std::pair<std::string, int64_t>>> SqliteBackend::CountRowsByNamespace() {
  absl::MutexLock lock(&mu_);
  // Answered from the entries_by_namespace index alone, without reading the rows.
  Statement st(db_, "SELECT namespace, count(*) FROM entries GROUP BY namespace");
  BULWARK_RETURN_IF_ERROR(st.status());
  std::vector<std::pair<std::string, int64_t>> counts;
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) counts.emplace_back(st.Text(0), st.Int(1));
  if (rc != SQLITE_DONE) return SqliteError(db_, "count entries by namespace");
  return counts;
}

absl::StatusOr<std::vector<HistoryEvent>> SqliteBackend::History(std::string_view name_space,
                                                                 std::string_view id) {
  absl::MutexLock lock(&mu_);
  Statement st(db_, absl::StrCat("SELECT ", kEventColumns,
                                 " FROM history WHERE entry_id = ? AND namespace = ? ORDER BY seq"));
  BULWARK_RETURN_IF_ERROR(st.status());
  st.Bind(1, id);
  st.Bind(2, name_space);
  std::vector<HistoryEvent> events;
  while (true) {
    int rc = st.Step();
    if (rc == SQLITE_DONE) return events;
    if (rc != SQLITE_ROW) return SqliteError(db_, "read history");
    events.push_back(DecodeEvent(st));
  }
}

absl::Status SqliteBackend::ScanHistory(const std::function<absl::Status(const HistoryEvent&)>& visit) {
  absl::MutexLock lock(&mu_);
  Statement st(db_, absl::StrCat("SELECT ", kEventColumns, " FROM history ORDER BY seq"));
  BULWARK_RETURN_IF_ERROR(st.status());
  while (true) {
    int rc = st.Step();
    if (rc == SQLITE_DONE) return absl::OkStatus();
    if (rc != SQLITE_ROW) return SqliteError(db_, "scan history");
    BULWARK_RETURN_IF_ERROR(visit(DecodeEvent(st)));
  }
}

absl::Status SqliteBackend::ScanNewestEventTimes(std::string_view name_space,
                                                 const std::function<void(int64_t, int64_t)>& visit) {
  absl::MutexLock lock(&mu_);
  NoMmapWhileScanning no_mmap(db_);
  // From the history and the (namespace, id) index alone: the entries table (the vectors) is not
  // read. The index is created at every open (sqlite_schema.cc).
  Statement st(db_, absl::StrCat("SELECT e.row_id, MAX(h.at_us) FROM entries e INDEXED BY "
                                 "entries_by_namespace_id JOIN history h "
                                 "ON h.entry_id = e.id AND h.namespace = e.namespace",
                                 name_space.empty() ? "" : " WHERE e.namespace = ?", " GROUP BY e.row_id"));
  BULWARK_RETURN_IF_ERROR(st.status());
  if (!name_space.empty()) st.Bind(1, name_space);
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) visit(st.Int(0), st.Int(1));
  return rc == SQLITE_DONE ? absl::OkStatus() : SqliteError(db_, "read the newest event times");
}

absl::StatusOr<int64_t> SqliteBackend::LastEventSeq() {
  absl::MutexLock lock(&mu_);
  auto cached = Cached(last_event_seq_, "SELECT COALESCE(MAX(seq), 0) FROM history");
  if (!cached.ok()) return cached.status();
  Statement& st = **cached;
  const int rc = st.Step();
  const int64_t seq = rc == SQLITE_ROW ? st.Int(0) : 0;
  st.Reset();
  if (rc != SQLITE_ROW) return SqliteError(db_, "read the last history seq");
  return seq;
}

absl::StatusOr<std::vector<StorageBackend::EventRef>> SqliteBackend::EventsAfter(int64_t seq) {
  absl::MutexLock lock(&mu_);
  Statement st(db_, "SELECT seq, namespace, entry_id FROM history WHERE seq > ? ORDER BY seq");
  BULWARK_RETURN_IF_ERROR(st.status());
  st.Bind(1, seq);
  std::vector<EventRef> events;
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) events.push_back({st.Int(0), st.Text(1), st.Text(2)});
  if (rc != SQLITE_DONE) return SqliteError(db_, "read new history events");
  return events;
}

absl::StatusOr<std::vector<StateCount>> SqliteBackend::CountByState() {
  absl::MutexLock lock(&mu_);
  Statement st(
      db_,
      "SELECT namespace, state, kind, count(*) FROM entries GROUP BY namespace, state, kind ORDER BY 1,2,3");
  BULWARK_RETURN_IF_ERROR(st.status());
  std::vector<StateCount> counts;
  while (true) {
    int rc = st.Step();
    if (rc == SQLITE_DONE) return counts;
    if (rc != SQLITE_ROW) return SqliteError(db_, "count entries");
    auto state = ParseState(st.Text(1));
    auto kind = ParseKind(st.Text(2));
    if (!state || !kind) continue;  // undecodable rows are reported by verify, not counted here
    counts.push_back({st.Text(0), *state, *kind, st.Int(3)});
  }
}

}  // namespace bulwark
