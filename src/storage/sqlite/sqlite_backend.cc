// SqliteBackend implementation. Statements are prepared per call and finalized by RAII, except the
// hot ones (the reads every search runs, and the newest history seq), which are prepared once and
// reset after each use; all access is serialized by mu_. Rows are decoded defensively (see StorageBackend).
#include "storage/sqlite/sqlite_backend.h"

#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>
#include <absl/synchronization/mutex.h>
#include <sqlite3.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "storage/sqlite/sqlite_event_rows.h"
#include "storage/sqlite/sqlite_schema.h"
#include "storage/sqlite/sqlite_util.h"
#include "storage/stored_report.h"

namespace bulwark {
namespace {

using sqlite_rows::DecodeEvent;
using sqlite_rows::kEventColumns;

// The reserved metadata members (store/entry_keys.h) as SQL expressions over the metadata column;
// identical to the index expressions above, so SQLite uses those indexes.
constexpr char kKeyExpr[] =
    "(CASE WHEN json_valid(metadata) THEN json_extract(metadata, '$.\"bulwark.key\"') END)";
constexpr char kExpiryExpr[] =
    "(CASE WHEN json_valid(metadata) THEN json_extract(metadata, '$.\"bulwark.expires_at_us\"') END)";

// An entry's columns as DecodeRow reads them: the signed ones, then the advisory report.
constexpr char kSignedEntryColumns[] =
    "row_id, id, namespace, text, metadata, principal, source, kind, state, created_at_us, "
    "updated_at_us, embedding, key_id, tag";
constexpr char kReportColumn[] = ", report";

// A new file's page size (doc/store_format.md): an entry row (a d = 384 vector is 1,536 bytes, plus
// its text, id and tag) is about half of SQLite's default 4 KiB page, so one fits and the rest of
// the page is wasted; a 64 KiB page (SQLite's largest) holds 34 or more, leaving on average half a
// row empty per page. Set before the file's first page is written; a file made earlier keeps its
// page size.
constexpr char kNewFilePageSize[] = "PRAGMA page_size=65536; ";
// The WAL is checkpointed into the file once it holds this many bytes (in pages of the file's size).
constexpr int64_t kWalCheckpointBytes = 32 << 20;

std::string EmbeddingBytes(const std::vector<float>& embedding) {
  std::string bytes(embedding.size() * sizeof(float), '\0');
  if (!bytes.empty()) std::memcpy(bytes.data(), embedding.data(), bytes.size());  // little-endian host
  return bytes;
}

void BindEntry(Statement& st, const Entry& e) {
  st.Bind(1, e.id);
  st.Bind(2, e.name_space);
  st.Bind(3, e.text);
  st.Bind(4, e.metadata.dump());
  st.Bind(5, e.principal);
  st.Bind(6, ToString(e.source));
  st.Bind(7, ToString(e.kind));
  st.Bind(8, ToString(e.state));
  st.Bind(9, e.created_at_us);
  st.Bind(10, e.updated_at_us);
  std::string embedding = EmbeddingBytes(e.embedding);
  st.BindBlob(11, embedding.data(), embedding.size());
  st.Bind(12, static_cast<int64_t>(e.key_id));
  st.BindBlob(13, e.tag.data(), e.tag.size());
  // A passed write's report (StoredReport) is stored as an empty column, read back as PassedReport().
  const nlohmann::json report = StoredReport(e.report);
  st.Bind(14, report == PassedReport() ? std::string() : report.dump());
}

// A stored JSON column; discarded (not an object) if it does not parse. "{}", by far the most
// common metadata and report, skips the parser.
nlohmann::json ParseStoredObject(std::string_view text) {
  if (text == "{}") return nlohmann::json::object();
  return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
}

// Adds one problem to a row's decode_error.
void AddProblem(StoredRow* row, std::string_view problem) {
  if (!row->decode_error.empty()) row->decode_error += "; ";
  row->decode_error += problem;
}

// Decodes kSignedEntryColumns followed by the report column into `row`, whose strings and vectors
// are overwritten in place (a scan reuses one row: no allocation per row once they are large
// enough). Never fails: problems land in row->decode_error.
void DecodeRowInto(const Statement& st, StoredRow* row) {
  row->row_id = st.Int(0);
  row->decode_error.clear();
  Entry& e = row->entry;
  e.id.assign(st.TextView(1));
  e.name_space.assign(st.TextView(2));
  e.text.assign(st.TextView(3));
  e.metadata = ParseStoredObject(st.TextView(4));
  if (!e.metadata.is_object()) {
    AddProblem(row, "metadata is not a JSON object");
    e.metadata = nlohmann::json::object();
  }
  e.principal.assign(st.TextView(5));
  auto source = ParseSource(st.TextView(6));
  auto kind = ParseKind(st.TextView(7));
  auto state = ParseState(st.TextView(8));
  if (!source) AddProblem(row, "unknown source");
  if (!kind) AddProblem(row, "unknown kind");
  if (!state) AddProblem(row, "unknown state");
  e.source = source.value_or(Source::kUser);
  e.kind = kind.value_or(Kind::kMemory);
  e.state = state.value_or(State::kQuarantined);
  e.created_at_us = st.Int(9);
  e.updated_at_us = st.Int(10);
  const std::string_view embedding = st.BlobView(11);
  if (embedding.size() % sizeof(float) != 0) {
    AddProblem(row, "embedding size is not a multiple of 4 bytes");
    e.embedding.clear();
  } else {
    e.embedding.resize(embedding.size() / sizeof(float));
    if (!embedding.empty()) std::memcpy(e.embedding.data(), embedding.data(), embedding.size());
  }
  int64_t key_id = st.Int(12);
  if (key_id < 0 || key_id > UINT32_MAX) AddProblem(row, "key id out of range");
  e.key_id = static_cast<uint32_t>(key_id);
  e.tag.assign(st.BlobView(13));
  e.report = st.TextView(14).empty() ? PassedReport() : ParseStoredObject(st.TextView(14));
  if (!e.report.is_object()) {
    AddProblem(row, "report is not a JSON object");
    e.report = nlohmann::json::object();
  }
}

StoredRow DecodeRow(const Statement& st) {
  StoredRow row;
  DecodeRowInto(st, &row);
  return row;
}

// The entries connection reads through a memory map (no copy per page read). A whole-table scan
// would map, and so keep resident, every page of the file; scans read through SQLite's small page
// cache instead, and the map is restored for the point reads that follow.
constexpr char kMmapOn[] = "PRAGMA mmap_size=1073741824";
class NoMmapWhileScanning {
 public:
  explicit NoMmapWhileScanning(sqlite3* db) : db_(db) { Exec(db_, "PRAGMA mmap_size=0").IgnoreError(); }
  ~NoMmapWhileScanning() { Exec(db_, kMmapOn).IgnoreError(); }
  NoMmapWhileScanning(const NoMmapWhileScanning&) = delete;
  NoMmapWhileScanning& operator=(const NoMmapWhileScanning&) = delete;

 private:
  sqlite3* db_;
};

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
  if (auto s = PrepareStoreSchema(db, path); !s.ok()) return s;
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
  for (auto* slot : {&get_row_, &get_entry_, &begin_read_, &end_read_, &last_event_seq_}) slot->reset();
  sqlite3_close(db_);
}

absl::StatusOr<std::optional<std::string>> SqliteBackend::GetMeta(std::string_view key) {
  absl::MutexLock lock(&mu_);
  Statement st(db_, "SELECT value FROM meta WHERE key = ?");
  if (auto s = st.status(); !s.ok()) return s;
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
  if (auto s = st.status(); !s.ok()) return s;
  st.Bind(1, key);
  st.Bind(2, value);
  return st.Run("write meta");
}

absl::StatusOr<std::vector<int64_t>> SqliteBackend::InsertEntries(std::span<const Entry> entries,
                                                                  std::span<const HistoryEvent> events) {
  absl::MutexLock lock(&mu_);
  inserted_event_seqs_.clear();
  Transaction txn(db_);
  if (!txn.status().ok()) return txn.status();
  auto row_ids = InsertLocked(entries, events);
  if (!row_ids.ok()) return row_ids.status();
  if (auto s = txn.Commit(); !s.ok()) return s;
  return row_ids;
}

absl::StatusOr<std::vector<int64_t>> SqliteBackend::InsertLocked(std::span<const Entry> entries,
                                                                 std::span<const HistoryEvent> events) {
  Statement st(db_,
               "INSERT INTO entries(id, namespace, text, metadata, principal, source, kind, state, "
               "created_at_us, updated_at_us, embedding, key_id, tag, report) "
               "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  if (auto s = st.status(); !s.ok()) return s;
  std::vector<int64_t> row_ids;
  row_ids.reserve(entries.size());
  for (const Entry& e : entries) {
    BindEntry(st, e);
    if (auto s = st.Run(absl::StrCat("insert entry ", e.id)); !s.ok()) return s;
    row_ids.push_back(sqlite3_last_insert_rowid(db_));
    st.Reset();
  }
  if (auto s = AppendEventsLocked(events, entries); !s.ok()) return s;
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
  if (auto s = st.status(); !s.ok()) return s;
  if (auto s = DetachEventsLocked(entry); !s.ok()) return s;
  BindEntry(st, entry);
  st.Bind(15, expected_updated_at_us);
  if (auto s = st.Run("update entry"); !s.ok()) return s;
  if (sqlite3_changes(db_) != 1) {
    Statement exists(db_, "SELECT 1 FROM entries WHERE id = ? AND namespace = ?");
    if (auto s = exists.status(); !s.ok()) return s;
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
    if (auto s = scrub.status(); !s.ok()) return s;
    for (const HistoryEvent& e : scrubbed) {
      scrub.Bind(1, e.detail.dump());
      scrub.Bind(2, static_cast<int64_t>(e.key_id));
      scrub.BindBlob(3, e.tag.data(), e.tag.size());
      scrub.Bind(4, e.seq);
      scrub.Bind(5, entry.id);
      scrub.Bind(6, entry.name_space);
      if (auto s = scrub.Run("scrub history"); !s.ok()) return s;
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
  if (auto s = row.status(); !s.ok()) return s;
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
  if (auto s = refs.status(); !s.ok()) return s;
  refs.Bind(1, entry.id);
  refs.Bind(2, entry.name_space);
  std::vector<HistoryEvent> events;
  int step;
  while ((step = refs.Step()) == SQLITE_ROW) events.push_back(DecodeEvent(refs));
  if (step != SQLITE_DONE) return SqliteError(db_, "read the events that reference an entry");
  Statement detach(db_, "UPDATE history SET detail = ?, detail_ref = 0 WHERE seq = ?");
  if (auto s = detach.status(); !s.ok()) return s;
  for (const HistoryEvent& ev : events) {
    detach.Bind(1, ev.detail.dump());  // with the row's text and metadata put back in
    detach.Bind(2, ev.seq);
    if (auto s = detach.Run("detach a history event"); !s.ok()) return s;
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
  if (auto s = UpdateLocked(purged, expected_updated_at_us, scrubbed, event); !s.ok()) return s;
  // Make sure the erased text does not linger in free pages or the WAL.
  if (auto s = Exec(db_, "PRAGMA wal_checkpoint(TRUNCATE)"); !s.ok()) return s;
  return absl::OkStatus();
}

absl::StatusOr<Statement*> SqliteBackend::Cached(std::unique_ptr<Statement>& slot, std::string_view sql) {
  if (slot == nullptr) {
    auto prepared = std::make_unique<Statement>(db_, sql);
    if (auto s = prepared->status(); !s.ok()) return s;
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
  struct ResetOnExit {
    Statement& st;
    ~ResetOnExit() { st.Reset(); }
  } reset{st};
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
  if (auto s = st.status(); !s.ok()) return s;
  if (!name_space.empty()) st.Bind(1, name_space);
  while (true) {
    int rc = st.Step();
    if (rc == SQLITE_DONE) return absl::OkStatus();
    if (rc != SQLITE_ROW) return SqliteError(db_, "scan entries");
    if (auto s = visit(DecodeRow(st)); !s.ok()) return s;
  }
}

absl::Status SqliteBackend::ScanRowsToIndex(const std::function<absl::Status(const StoredRow&)>& visit) {
  absl::MutexLock lock(&mu_);
  NoMmapWhileScanning no_mmap(db_);
  Statement st(db_, absl::StrCat("SELECT ", kSignedEntryColumns, ", '{}' FROM entries ORDER BY row_id"));
  if (auto s = st.status(); !s.ok()) return s;
  StoredRow row;
  while (true) {
    const int rc = st.Step();
    if (rc == SQLITE_DONE) return absl::OkStatus();
    if (rc != SQLITE_ROW) return SqliteError(db_, "scan entries");
    DecodeRowInto(st, &row);
    if (auto s = visit(row); !s.ok()) return s;
  }
}

absl::StatusOr<std::vector<std::pair<std::string, int64_t>>> SqliteBackend::CountRowsByNamespace() {
  absl::MutexLock lock(&mu_);
  // Answered from the entries_by_namespace index alone, without reading the rows.
  Statement st(db_, "SELECT namespace, count(*) FROM entries GROUP BY namespace");
  if (auto s = st.status(); !s.ok()) return s;
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
  if (auto s = st.status(); !s.ok()) return s;
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
  if (auto s = st.status(); !s.ok()) return s;
  while (true) {
    int rc = st.Step();
    if (rc == SQLITE_DONE) return absl::OkStatus();
    if (rc != SQLITE_ROW) return SqliteError(db_, "scan history");
    if (auto s = visit(DecodeEvent(st)); !s.ok()) return s;
  }
}

absl::Status SqliteBackend::ScanNewestEventTimes(const std::function<void(int64_t, int64_t)>& visit) {
  absl::MutexLock lock(&mu_);
  NoMmapWhileScanning no_mmap(db_);
  // From the history and the (namespace, id) index alone: the entries table (the vectors) is not
  // read. The index is created at every open (sqlite_schema.cc).
  Statement st(
      db_,
      "SELECT e.row_id, MAX(h.at_us) FROM entries e INDEXED BY entries_by_namespace_id JOIN history h "
      "ON h.entry_id = e.id AND h.namespace = e.namespace GROUP BY e.row_id");
  if (auto s = st.status(); !s.ok()) return s;
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
  if (auto s = st.status(); !s.ok()) return s;
  st.Bind(1, seq);
  std::vector<EventRef> events;
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) events.push_back({st.Int(0), st.Text(1), st.Text(2)});
  if (rc != SQLITE_DONE) return SqliteError(db_, "read new history events");
  return events;
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
    if (auto s = st.status(); !s.ok()) return s;
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
    if (auto s = st.status(); !s.ok()) return s;
    st.Bind(1, through);
    int rc;
    while ((rc = st.Step()) == SQLITE_ROW) unsigned_events.push_back(DecodeEvent(st));
    if (rc != SQLITE_DONE) return SqliteError(db_, "find unsigned history events");
  }
  Statement update(db_, "UPDATE history SET key_id = ?, tag = ? WHERE seq = ?");
  if (auto s = update.status(); !s.ok()) return s;
  for (HistoryEvent& e : unsigned_events) {
    sign(&e);
    update.Bind(1, static_cast<int64_t>(e.key_id));
    update.BindBlob(2, e.tag.data(), e.tag.size());
    update.Bind(3, e.seq);
    if (auto s = update.Run("sign history event"); !s.ok()) return s;
    update.Reset();
  }
  if (auto s = bulwark::DeleteMeta(db_, kUnsignedHistoryMarker); !s.ok()) return s;
  if (auto s = txn.Commit(); !s.ok()) return s;
  return static_cast<int64_t>(unsigned_events.size());
}

absl::Status SqliteBackend::CheckIntegrity() {
  constexpr int kMaxProblems = 5;
  absl::MutexLock lock(&mu_);
  Statement st(db_, absl::StrCat("PRAGMA quick_check(", kMaxProblems, ")"));
  if (auto s = st.status(); !s.ok()) return s;
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

absl::StatusOr<std::vector<StateCount>> SqliteBackend::CountByState() {
  absl::MutexLock lock(&mu_);
  Statement st(
      db_,
      "SELECT namespace, state, kind, count(*) FROM entries GROUP BY namespace, state, kind ORDER BY 1,2,3");
  if (auto s = st.status(); !s.ok()) return s;
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

absl::Status SqliteBackend::SaveQueryHistory(std::string_view name_space, uint64_t first_sequence,
                                             std::span<const std::vector<float>> rows,
                                             uint64_t keep_from_sequence, bool replace) {
  absl::MutexLock lock(&mu_);
  Transaction txn(db_);
  if (!txn.status().ok()) return txn.status();
  if (replace) {
    Statement del(db_, "DELETE FROM query_history WHERE namespace = ?");
    if (auto s = del.status(); !s.ok()) return s;
    del.Bind(1, name_space);
    if (auto s = del.Run("clear query history"); !s.ok()) return s;
  }
  Statement ins(db_, "INSERT OR REPLACE INTO query_history(namespace, seq, embedding) VALUES(?,?,?)");
  if (auto s = ins.status(); !s.ok()) return s;
  for (size_t i = 0; i < rows.size(); ++i) {
    const std::string bytes = EmbeddingBytes(rows[i]);
    ins.Bind(1, name_space);
    ins.Bind(2, static_cast<int64_t>(first_sequence + i));
    ins.BindBlob(3, bytes.data(), bytes.size());
    if (auto s = ins.Run("save query history"); !s.ok()) return s;
    ins.Reset();
  }
  Statement trim(db_, "DELETE FROM query_history WHERE namespace = ? AND seq < ?");
  if (auto s = trim.status(); !s.ok()) return s;
  trim.Bind(1, name_space);
  trim.Bind(2, static_cast<int64_t>(keep_from_sequence));
  if (auto s = trim.Run("trim query history"); !s.ok()) return s;
  return txn.Commit();
}

absl::Status SqliteBackend::ScanQueryHistory(
    const std::function<absl::Status(std::string_view, uint64_t, std::vector<float>)>& visit) {
  absl::MutexLock lock(&mu_);
  Statement st(db_, "SELECT namespace, seq, embedding FROM query_history ORDER BY namespace, seq");
  if (auto s = st.status(); !s.ok()) return s;
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) {
    const std::string bytes = st.Blob(2);
    std::vector<float> v(bytes.size() / sizeof(float));
    if (!v.empty()) std::memcpy(v.data(), bytes.data(), v.size() * sizeof(float));
    if (auto s = visit(st.Text(0), static_cast<uint64_t>(st.Int(1)), std::move(v)); !s.ok()) return s;
  }
  return rc == SQLITE_DONE ? absl::OkStatus() : SqliteError(db_, "read query history");
}

absl::Status SqliteBackend::PutCalibration(std::string_view name_space, std::string_view calibration) {
  absl::MutexLock lock(&mu_);
  Statement st(db_, "INSERT OR REPLACE INTO calibrations(namespace, calibration) VALUES(?,?)");
  if (auto s = st.status(); !s.ok()) return s;
  st.Bind(1, name_space);
  st.Bind(2, calibration);
  return st.Run("save calibration");
}

absl::Status SqliteBackend::ScanCalibrations(
    const std::function<absl::Status(std::string_view, std::string_view)>& visit) {
  absl::MutexLock lock(&mu_);
  Statement st(db_, "SELECT namespace, calibration FROM calibrations ORDER BY namespace");
  if (auto s = st.status(); !s.ok()) return s;
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) {
    if (auto s = visit(st.Text(0), st.Text(1)); !s.ok()) return s;
  }
  return rc == SQLITE_DONE ? absl::OkStatus() : SqliteError(db_, "read calibrations");
}

}  // namespace bulwark

namespace bulwark {

absl::Status SqliteBackend::CheckClaimLocked(std::string_view name_space, std::string_view principal,
                                             const InsertClaim& claim, InsertOutcome* outcome) {
  if (!claim.idempotency_key.empty()) {
    Statement st(db_,
                 "SELECT entry_ids, request_hash FROM idempotency WHERE namespace = ? AND principal = ? "
                 "AND idempotency_key = ? AND created_at_us > ?");
    if (auto s = st.status(); !s.ok()) return s;
    st.Bind(1, name_space);
    st.Bind(2, principal);
    st.Bind(3, claim.idempotency_key);
    st.Bind(4, claim.idempotency_after_us);
    const int rc = st.Step();
    if (rc == SQLITE_ROW) {
      // Written by InsertEntriesOnce as a JSON array of ids; anything else is treated as no ids.
      nlohmann::json ids = nlohmann::json::parse(st.TextView(0), nullptr, /*allow_exceptions=*/false);
      if (ids.is_array()) {
        for (const auto& id : ids) {
          if (id.is_string()) outcome->replay_ids.push_back(id.get<std::string>());
        }
      }
      outcome->replay_request_hash = st.Text(1);
      if (outcome->replay_ids.empty()) return absl::DataLossError("an idempotency record holds no entry ids");
      return absl::OkStatus();
    }
    if (rc != SQLITE_DONE) return SqliteError(db_, "read idempotency record");
  }
  if (!claim.entry_key.empty()) {
    Statement st(
        db_, absl::StrCat("SELECT id FROM entries WHERE namespace = ? AND ", kKeyExpr,
                          " = ? AND state IN ('active', 'quarantined') AND kind = 'memory' AND NOT (typeof(",
                          kExpiryExpr, ") = 'integer' AND ", kExpiryExpr, " <= ?) LIMIT 1"));
    if (auto s = st.status(); !s.ok()) return s;
    st.Bind(1, name_space);
    st.Bind(2, claim.entry_key);
    st.Bind(3, claim.now_us);
    const int rc = st.Step();
    if (rc == SQLITE_ROW) outcome->key_taken_by = st.Text(0);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return SqliteError(db_, "read entry key");
  }
  return absl::OkStatus();
}

absl::StatusOr<InsertOutcome> SqliteBackend::InsertEntriesOnce(std::span<const Entry> entries,
                                                               std::span<const HistoryEvent> events,
                                                               const InsertClaim& claim) {
  if (entries.empty()) return absl::InvalidArgumentError("nothing to insert");
  const Entry& first = entries.front();
  absl::MutexLock lock(&mu_);
  inserted_event_seqs_.clear();
  Transaction txn(db_);
  if (!txn.status().ok()) return txn.status();
  InsertOutcome outcome;
  if (auto s = CheckClaimLocked(first.name_space, first.principal, claim, &outcome); !s.ok()) return s;
  if (!outcome.replay_ids.empty() || !outcome.key_taken_by.empty()) return outcome;  // rolled back
  auto row_ids = InsertLocked(entries, events);
  if (!row_ids.ok()) return row_ids.status();
  outcome.row_ids = *std::move(row_ids);
  if (!claim.idempotency_key.empty()) {
    nlohmann::json ids = nlohmann::json::array();
    for (const Entry& e : entries) ids.push_back(e.id);
    Statement st(db_,
                 "INSERT OR REPLACE INTO idempotency(namespace, principal, idempotency_key, request_hash, "
                 "entry_ids, created_at_us) VALUES(?,?,?,?,?,?)");
    if (auto s = st.status(); !s.ok()) return s;
    st.Bind(1, first.name_space);
    st.Bind(2, first.principal);
    st.Bind(3, claim.idempotency_key);
    st.Bind(4, claim.request_hash);
    st.Bind(5, ids.dump());
    st.Bind(6, first.created_at_us);
    if (auto s = st.Run("write idempotency record"); !s.ok()) return s;
  }
  if (auto s = txn.Commit(); !s.ok()) return s;
  return outcome;
}

absl::StatusOr<std::vector<StoredRow>> SqliteBackend::ListEntries(const ListQuery& query) {
  if (query.limit < 1 || query.limit > 10000) return absl::InvalidArgumentError("limit must be 1..10000");
  if (query.states.empty()) return absl::InvalidArgumentError("no states to list");
  std::string states;
  for (State state : query.states)
    absl::StrAppend(&states, states.empty() ? "'" : ", '", std::string(ToString(state)), "'");
  const std::string sql = absl::StrCat(
      "SELECT ", kSignedEntryColumns, kReportColumn,
      " FROM entries WHERE namespace = ?1 AND id > ?2 AND kind = 'memory' AND state IN (", states, ")",
      query.key ? absl::StrCat(" AND ", kKeyExpr, " = ?4") : "", " ORDER BY id LIMIT ?3");
  absl::MutexLock lock(&mu_);
  Statement st(db_, sql);
  if (auto s = st.status(); !s.ok()) return s;
  st.Bind(1, query.name_space);
  st.Bind(2, query.after_id);
  st.Bind(3, int64_t{query.limit});
  if (query.key) st.Bind(4, *query.key);
  std::vector<StoredRow> rows;
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) rows.push_back(DecodeRow(st));
  if (rc != SQLITE_DONE) return SqliteError(db_, "list entries");
  return rows;
}

absl::StatusOr<std::vector<std::pair<std::string, std::string>>> SqliteBackend::ExpiredEntries(int64_t now_us,
                                                                                               int limit) {
  absl::MutexLock lock(&mu_);
  Statement st(db_, absl::StrCat("SELECT namespace, id FROM entries WHERE ", kExpiryExpr,
                                 " <= ?1 AND typeof(", kExpiryExpr,
                                 ") = 'integer' AND state != 'purged' ORDER BY ", kExpiryExpr, " LIMIT ?2"));
  if (auto s = st.status(); !s.ok()) return s;
  st.Bind(1, now_us);
  st.Bind(2, int64_t{limit});
  std::vector<std::pair<std::string, std::string>> expired;
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) expired.emplace_back(st.Text(0), st.Text(1));
  if (rc != SQLITE_DONE) return SqliteError(db_, "find expired entries");
  return expired;
}

absl::StatusOr<int64_t> SqliteBackend::DeleteIdempotencyRecords(int64_t before_us) {
  absl::MutexLock lock(&mu_);
  Statement st(db_, "DELETE FROM idempotency WHERE created_at_us <= ?");
  if (auto s = st.status(); !s.ok()) return s;
  st.Bind(1, before_us);
  if (auto s = st.Run("delete idempotency records"); !s.ok()) return s;
  return static_cast<int64_t>(sqlite3_changes(db_));
}

}  // namespace bulwark
