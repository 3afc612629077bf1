// SqliteBackend: opening the database, its metadata, the write transactions (insert, update,
// purge and the event references they keep), the one-time signing of old events, the integrity
// check and the defense state tables. Reads are in sqlite_backend_reads.cc, the agent routes'
// claims and listings in sqlite_backend_routes.cc, the history chain in sqlite_backend_chain.cc, and
// the entry row codec in sqlite_entry_rows.{h,cc}. Statements are prepared per call and finalized by
// RAII, except the hot ones (sqlite_backend_reads.cc); all access is serialized by mu_.
#include "storage/sqlite/sqlite_backend.h"

#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>
#include <absl/synchronization/mutex.h>
#include <sqlite3.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "core/status_macros.h"
#include "storage/sqlite/sqlite_entry_rows.h"
#include "storage/sqlite/sqlite_event_rows.h"
#include "storage/sqlite/sqlite_schema.h"
#include "storage/sqlite/sqlite_util.h"
#include "storage/stored_report.h"

namespace bulwark {
namespace {

using sqlite_rows::BindEntry;
using sqlite_rows::DecodeEvent;
using sqlite_rows::EmbeddingBytes;
using sqlite_rows::kEventColumns;
using sqlite_rows::kMmapOn;

// A new file's page size (doc/store_format.md). Every commit writes each page it touches to the WAL
// whole, with a checksum, and a single add touches about six B-trees (the entries table, its two
// namespace indexes, the history and its index, the meta row of the chain's head; seven before
// schema version 8 dropped the index on id alone): about
// 40 KB of WAL per add at 4 KiB against 460 KB at 64 KiB, which cost an add about 1.7x the CPU
// (bench/RESULTS.md, "The add path and the page size"). Disk: a row with a packed lexical vector
// (vector_codec.h, about 1.1 KB) fits three to a 4 KiB page; a row with a dense d = 384 vector
// (1.86 KB) fits two, about 2.05 KB of page per entry. Set before the file's first page is
// written; a file made earlier keeps its page size (64 KiB for those made by schema version 6).
constexpr char kNewFilePageSize[] = "PRAGMA page_size=4096; ";
// The WAL is checkpointed into the file once it holds this many bytes (in pages of the file's size).
constexpr int64_t kWalCheckpointBytes = 32 << 20;

}  // namespace

absl::StatusOr<std::unique_ptr<SqliteBackend>> SqliteBackend::Open(const std::filesystem::path& path,
                                                                   bool create) {
  std::error_code ec;
  bool exists = std::filesystem::exists(path, ec);
  if (!exists && !create) return absl::NotFoundError(absl::StrCat("no store database at ", path.string()));
  sqlite3* db = nullptr;
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (create ? SQLITE_OPEN_CREATE : 0);
  if (sqlite3_open_v2(path.c_str(), &db, flags, nullptr) != SQLITE_OK) {
    absl::Status status = absl::UnavailableError(
        absl::StrCat("cannot open ", path.string(), ": ", db ? sqlite3_errmsg(db) : "out of memory"));
    sqlite3_close(db);
    return status;
  }
  std::unique_ptr<SqliteBackend> backend(new SqliteBackend(db));
  sqlite3_busy_timeout(db, 5000);
  sqlite3_extended_result_codes(db, 1);
  // WAL + synchronous=FULL: a committed transaction is fsynced before COMMIT returns.
  if (auto s =
          Exec(db, absl::StrCat(exists ? "" : kNewFilePageSize,
                                "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA secure_delete=ON; ",
                                kMmapOn)
                       .c_str());
      !s.ok()) {
    return absl::DataLossError(
        absl::StrCat(path.string(), " is not a usable SQLite database: ", s.message()));
  }
  BULWARK_RETURN_IF_ERROR(PrepareStoreSchema(db, path));
  int64_t page_bytes = 4096;
  {
    Statement page_size(db, "PRAGMA page_size");
    if (page_size.Step() == SQLITE_ROW) page_bytes = std::max<int64_t>(page_size.Int(0), 512);
  }
  if (auto s = Exec(db, absl::StrCat("PRAGMA wal_autocheckpoint=", kWalCheckpointBytes / page_bytes).c_str());
      !s.ok()) {
    return s;
  }
  return backend;
}

SqliteBackend::SqliteBackend(sqlite3* db) : db_(db) {}

SqliteBackend::~SqliteBackend() {
  // sqlite3_close refuses to close a connection with unfinalized statements.
  for (auto* slot : {&get_row_, &get_entry_, &begin_read_, &end_read_, &last_event_seq_, &insert_entry_,
                     &insert_event_, &newest_link_, &get_head_, &put_head_, &begin_write_, &commit_write_}) {
    slot->reset();
  }
  sqlite3_close(db_);
}

absl::StatusOr<std::optional<std::string>> SqliteBackend::GetMeta(std::string_view key) {
  absl::MutexLock lock(&mu_);
  Statement st(db_, "SELECT value FROM meta WHERE key = ?");
  BULWARK_RETURN_IF_ERROR(st.status());
  st.Bind(1, key);
  int rc = st.Step();
  if (rc == SQLITE_ROW) return std::optional<std::string>(st.Text(0));
  if (rc == SQLITE_DONE) return std::optional<std::string>();
  return SqliteError(db_, "read meta");
}

absl::Status SqliteBackend::PutMeta(std::string_view key, std::string_view value) {
  absl::MutexLock lock(&mu_);
  Statement st(
      db_, "INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value");
  BULWARK_RETURN_IF_ERROR(st.status());
  st.Bind(1, key);
  st.Bind(2, value);
  return st.Run("write meta");
}

absl::StatusOr<std::vector<int64_t>> SqliteBackend::InsertEntries(std::span<const Entry> entries,
                                                                  std::span<const HistoryEvent> events) {
  absl::MutexLock lock(&mu_);
  inserted_event_seqs_.clear();
  BULWARK_ASSIGN_OR_RETURN(Statement * begin, Cached(begin_write_, "BEGIN IMMEDIATE"));
  BULWARK_ASSIGN_OR_RETURN(Statement * commit, Cached(commit_write_, "COMMIT"));
  Transaction txn(db_, *begin, *commit);
  if (!txn.status().ok()) return txn.status();
  auto row_ids = InsertLocked(entries, events);
  if (!row_ids.ok()) return row_ids.status();
  BULWARK_RETURN_IF_ERROR(txn.Commit());
  // The tail it appended is the chain's now, as of this data version (none kept if it is unknown).
  if (chain_ != nullptr && !events.empty()) {
    if (const std::optional<uint32_t> version = DataVersionLocked(); version.has_value()) {
      committed_tail_ = std::move(appended_tail_);
      tail_version_ = *version;
    }
  }
  return row_ids;
}

absl::StatusOr<std::vector<int64_t>> SqliteBackend::InsertLocked(std::span<const Entry> entries,
                                                                 std::span<const HistoryEvent> events) {
  BULWARK_ASSIGN_OR_RETURN(
      Statement * cached,
      Cached(insert_entry_,
             "INSERT INTO entries(id, namespace, text, metadata, principal, source, kind, "
             "state, created_at_us, updated_at_us, embedding, key_id, tag, report) "
             "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)"));
  Statement& st = *cached;
  ResetOnExit reset(st);
  std::vector<int64_t> row_ids;
  row_ids.reserve(entries.size());
  for (const Entry& e : entries) {
    BindEntry(st, e);
    BULWARK_RETURN_IF_ERROR(st.Run(absl::StrCat("insert entry ", e.id)));
    row_ids.push_back(sqlite3_last_insert_rowid(db_));
    st.Reset();
  }
  BULWARK_RETURN_IF_ERROR(AppendEventsLocked(events, entries));
  return row_ids;
}

absl::Status SqliteBackend::UpdateLocked(const Entry& entry, int64_t expected_updated_at_us,
                                         std::span<const HistoryEvent> scrubbed, const HistoryEvent& event) {
  inserted_event_seqs_.clear();
  Transaction txn(db_);
  if (!txn.status().ok()) return txn.status();
  Statement st(db_,
               "UPDATE entries SET id=?1, namespace=?2, text=?3, metadata=?4, principal=?5, source=?6, "
               "kind=?7, state=?8, created_at_us=?9, updated_at_us=?10, embedding=?11, key_id=?12, "
               "tag=?13, report=?14 WHERE id=?1 AND namespace=?2 AND updated_at_us=?15");
  BULWARK_RETURN_IF_ERROR(st.status());
  BULWARK_RETURN_IF_ERROR(DetachEventsLocked(entry));
  BindEntry(st, entry);
  st.Bind(15, expected_updated_at_us);
  BULWARK_RETURN_IF_ERROR(st.Run("update entry"));
  if (sqlite3_changes(db_) != 1) {
    Statement exists(db_, "SELECT 1 FROM entries WHERE id = ? AND namespace = ?");
    BULWARK_RETURN_IF_ERROR(exists.status());
    exists.Bind(1, entry.id);
    exists.Bind(2, entry.name_space);
    if (exists.Step() != SQLITE_ROW) return absl::NotFoundError(absl::StrCat("no entry ", entry.id));
    return absl::AbortedError(
        absl::StrCat("entry ", entry.id, " was changed by another writer since it was read"));
  }
  if (!scrubbed.empty()) {
    Statement scrub(db_,
                    "UPDATE history SET detail = ?, key_id = ?, tag = ?, detail_ref = 0 WHERE seq = ? AND "
                    "entry_id = ? AND namespace = ?");
    BULWARK_RETURN_IF_ERROR(scrub.status());
    for (const HistoryEvent& e : scrubbed) {
      scrub.Bind(1, e.detail.dump());
      scrub.Bind(2, static_cast<int64_t>(e.key_id));
      scrub.BindBlob(3, e.tag.data(), e.tag.size());
      scrub.Bind(4, e.seq);
      scrub.Bind(5, entry.id);
      scrub.Bind(6, entry.name_space);
      BULWARK_RETURN_IF_ERROR(scrub.Run("scrub history"));
      scrub.Reset();
    }
  }
  if (auto s =
          AppendEventsLocked(std::span<const HistoryEvent>(&event, 1), std::span<const Entry>(&entry, 1));
      !s.ok()) {
    return s;
  }
  return txn.Commit();
}

absl::Status SqliteBackend::DetachEventsLocked(const Entry& entry) {
  Statement row(db_, "SELECT text, metadata, source, state FROM entries WHERE id = ? AND namespace = ?");
  BULWARK_RETURN_IF_ERROR(row.status());
  row.Bind(1, entry.id);
  row.Bind(2, entry.name_space);
  const int rc = row.Step();
  if (rc == SQLITE_DONE) return absl::OkStatus();  // the update finds no row and says so
  if (rc != SQLITE_ROW) return SqliteError(db_, "read the entry's text");
  if (row.TextView(0) == entry.text && row.TextView(1) == entry.metadata.dump() &&
      row.TextView(2) == ToString(entry.source) && row.TextView(3) == ToString(entry.state)) {
    return absl::OkStatus();  // every referred member stays as it is
  }
  Statement refs(db_, absl::StrCat("SELECT ", kEventColumns,
                                   " FROM history WHERE entry_id = ? AND namespace = ? AND detail_ref != 0"));
  BULWARK_RETURN_IF_ERROR(refs.status());
  refs.Bind(1, entry.id);
  refs.Bind(2, entry.name_space);
  std::vector<HistoryEvent> events;
  int step;
  while ((step = refs.Step()) == SQLITE_ROW) events.push_back(DecodeEvent(refs));
  if (step != SQLITE_DONE) return SqliteError(db_, "read the events that reference an entry");
  Statement detach(db_, "UPDATE history SET detail = ?, detail_ref = 0 WHERE seq = ?");
  BULWARK_RETURN_IF_ERROR(detach.status());
  for (const HistoryEvent& ev : events) {
    detach.Bind(1, ev.detail.dump());  // with the row's text and metadata put back in
    detach.Bind(2, ev.seq);
    BULWARK_RETURN_IF_ERROR(detach.Run("detach a history event"));
    detach.Reset();
  }
  return absl::OkStatus();
}

absl::Status SqliteBackend::UpdateEntry(const Entry& entry, int64_t expected_updated_at_us,
                                        const HistoryEvent& event) {
  absl::MutexLock lock(&mu_);
  return UpdateLocked(entry, expected_updated_at_us, {}, event);
}

absl::Status SqliteBackend::PurgeEntry(const Entry& purged, int64_t expected_updated_at_us,
                                       std::span<const HistoryEvent> scrubbed, const HistoryEvent& event) {
  absl::MutexLock lock(&mu_);
  BULWARK_RETURN_IF_ERROR(UpdateLocked(purged, expected_updated_at_us, scrubbed, event));
  // Make sure the erased text does not linger in free pages or the WAL.
  BULWARK_RETURN_IF_ERROR(Exec(db_, "PRAGMA wal_checkpoint(TRUNCATE)"));
  return absl::OkStatus();
}

std::vector<int64_t> SqliteBackend::TakeInsertedEventSeqs() {
  absl::MutexLock lock(&mu_);
  return std::exchange(inserted_event_seqs_, {});
}

absl::StatusOr<int64_t> SqliteBackend::SignEventsFromBeforeSigning(
    const std::function<void(HistoryEvent*)>& sign) {
  absl::MutexLock lock(&mu_);
  // The last event written before the upgrade, or nullopt once its events are signed.
  auto marker = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) -> absl::StatusOr<std::optional<int64_t>> {
    Statement st(db_, absl::StrCat("SELECT CAST(value AS INTEGER) FROM meta WHERE key = '",
                                   kUnsignedHistoryMarker, "'"));
    BULWARK_RETURN_IF_ERROR(st.status());
    const int rc = st.Step();
    if (rc == SQLITE_DONE) return std::nullopt;
    if (rc != SQLITE_ROW) return SqliteError(db_, "read the upgrade marker");
    return st.Int(0);
  };
  // Almost every open finds no marker, and takes no write lock for it.
  auto seen = marker();
  if (!seen.ok()) return seen.status();
  if (!seen->has_value()) return 0;
  Transaction txn(db_);
  if (!txn.status().ok()) return txn.status();
  auto marked = marker();  // again under the write lock: another process may have signed them meanwhile
  if (!marked.ok()) return marked.status();
  if (!marked->has_value()) return 0;
  const int64_t through = **marked;
  std::vector<HistoryEvent> unsigned_events;
  {
    Statement st(db_, absl::StrCat("SELECT ", kEventColumns,
                                   " FROM history WHERE length(tag) = 0 AND seq <= ? ORDER BY seq"));
    BULWARK_RETURN_IF_ERROR(st.status());
    st.Bind(1, through);
    int rc;
    while ((rc = st.Step()) == SQLITE_ROW) unsigned_events.push_back(DecodeEvent(st));
    if (rc != SQLITE_DONE) return SqliteError(db_, "find unsigned history events");
  }
  Statement update(db_, "UPDATE history SET key_id = ?, tag = ? WHERE seq = ?");
  BULWARK_RETURN_IF_ERROR(update.status());
  for (HistoryEvent& e : unsigned_events) {
    sign(&e);
    update.Bind(1, static_cast<int64_t>(e.key_id));
    update.BindBlob(2, e.tag.data(), e.tag.size());
    update.Bind(3, e.seq);
    BULWARK_RETURN_IF_ERROR(update.Run("sign history event"));
    update.Reset();
  }
  BULWARK_RETURN_IF_ERROR(bulwark::DeleteMeta(db_, kUnsignedHistoryMarker));
  BULWARK_RETURN_IF_ERROR(txn.Commit());
  return static_cast<int64_t>(unsigned_events.size());
}

absl::Status SqliteBackend::CheckIntegrity() {
  constexpr int kMaxProblems = 5;
  absl::MutexLock lock(&mu_);
  Statement st(db_, absl::StrCat("PRAGMA quick_check(", kMaxProblems, ")"));
  BULWARK_RETURN_IF_ERROR(st.status());
  std::vector<std::string> problems;
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) {
    if (st.Text(0) != "ok") problems.push_back(st.Text(0));
  }
  if (rc != SQLITE_DONE) return SqliteError(db_, "integrity check");
  if (problems.empty()) return absl::OkStatus();
  return absl::DataLossError(
      absl::StrCat("the database failed its integrity check: ", absl::StrJoin(problems, "; ")));
}

absl::Status SqliteBackend::SaveQueryHistory(std::string_view name_space, uint64_t first_sequence,
                                             std::span<const std::vector<float>> rows,
                                             uint64_t keep_from_sequence, bool replace) {
  absl::MutexLock lock(&mu_);
  Transaction txn(db_);
  if (!txn.status().ok()) return txn.status();
  if (replace) {
    Statement del(db_, "DELETE FROM query_history WHERE namespace = ?");
    BULWARK_RETURN_IF_ERROR(del.status());
    del.Bind(1, name_space);
    BULWARK_RETURN_IF_ERROR(del.Run("clear query history"));
  }
  Statement ins(db_, "INSERT OR REPLACE INTO query_history(namespace, seq, embedding) VALUES(?,?,?)");
  BULWARK_RETURN_IF_ERROR(ins.status());
  for (size_t i = 0; i < rows.size(); ++i) {
    const std::string bytes = EmbeddingBytes(rows[i]);
    ins.Bind(1, name_space);
    ins.Bind(2, static_cast<int64_t>(first_sequence + i));
    ins.BindBlob(3, bytes.data(), bytes.size());
    BULWARK_RETURN_IF_ERROR(ins.Run("save query history"));
    ins.Reset();
  }
  Statement trim(db_, "DELETE FROM query_history WHERE namespace = ? AND seq < ?");
  BULWARK_RETURN_IF_ERROR(trim.status());
  trim.Bind(1, name_space);
  trim.Bind(2, static_cast<int64_t>(keep_from_sequence));
  BULWARK_RETURN_IF_ERROR(trim.Run("trim query history"));
  return txn.Commit();
}

absl::Status SqliteBackend::ScanQueryHistory(
    const std::function<absl::Status(std::string_view, uint64_t, std::vector<float>)>& visit) {
  absl::MutexLock lock(&mu_);
  Statement st(db_, "SELECT namespace, seq, embedding FROM query_history ORDER BY namespace, seq");
  BULWARK_RETURN_IF_ERROR(st.status());
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) {
    const std::string bytes = st.Blob(2);
    std::vector<float> v(bytes.size() / sizeof(float));
    if (!v.empty()) std::memcpy(v.data(), bytes.data(), v.size() * sizeof(float));
    BULWARK_RETURN_IF_ERROR(visit(st.Text(0), static_cast<uint64_t>(st.Int(1)), std::move(v)));
  }
  return rc == SQLITE_DONE ? absl::OkStatus() : SqliteError(db_, "read query history");
}

absl::Status SqliteBackend::PutCalibration(std::string_view name_space, std::string_view calibration) {
  absl::MutexLock lock(&mu_);
  Statement st(db_, "INSERT OR REPLACE INTO calibrations(namespace, calibration) VALUES(?,?)");
  BULWARK_RETURN_IF_ERROR(st.status());
  st.Bind(1, name_space);
  st.Bind(2, calibration);
  return st.Run("save calibration");
}

absl::Status SqliteBackend::ScanCalibrations(
    const std::function<absl::Status(std::string_view, std::string_view)>& visit) {
  absl::MutexLock lock(&mu_);
  Statement st(db_, "SELECT namespace, calibration FROM calibrations ORDER BY namespace");
  BULWARK_RETURN_IF_ERROR(st.status());
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) {
    BULWARK_RETURN_IF_ERROR(visit(st.Text(0), st.Text(1)));
  }
  return rc == SQLITE_DONE ? absl::OkStatus() : SqliteError(db_, "read calibrations");
}

}  // namespace bulwark
