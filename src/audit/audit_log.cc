// AuditLog implementation: a bounded in-memory queue drained by one writer thread that commits
// each batch in a single SQLite transaction (group commit). Records stay in the queue until their
// transaction has committed, so a failed write is retried and the queue's size is the whole
// memory cost. When the queue is full, Append waits for room (backpressure on the caller) for at
// most kMaxAppendWait, then drops the record and counts it; Flush reports drops.
#include "audit/audit_log.h"

#include <absl/strings/str_cat.h>
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <mutex>
#include <thread>

#include "audit/audit_chain.h"
#include "core/strings.h"
#include "storage/sqlite_util.h"
#include "storage/store_layout.h"

namespace bulwark {
namespace {

constexpr char kSchema[] = R"sql(
CREATE TABLE IF NOT EXISTS audit(
  seq          INTEGER PRIMARY KEY AUTOINCREMENT,
  at_us        INTEGER NOT NULL,
  principal    TEXT NOT NULL,
  session      TEXT NOT NULL,
  namespace    TEXT NOT NULL,
  operation    TEXT NOT NULL,
  query_hash   TEXT NOT NULL,
  returned_ids TEXT NOT NULL,
  detail       TEXT NOT NULL,
  key_id       INTEGER NOT NULL DEFAULT 0,
  tag          BLOB
);
CREATE INDEX IF NOT EXISTS audit_by_principal ON audit(principal, seq);
CREATE INDEX IF NOT EXISTS audit_by_session ON audit(session, seq);
CREATE INDEX IF NOT EXISTS audit_by_namespace ON audit(namespace, seq);
CREATE INDEX IF NOT EXISTS audit_by_time ON audit(at_us);
)sql";

constexpr size_t kMaxBatch = 4096;  // records per transaction: keeps the write lock short
constexpr auto kMaxAppendWait = std::chrono::seconds(1);
constexpr int kShutdownAttempts = 3;  // failed writes tolerated while closing before giving up
constexpr int kMaxQueryLimit = 10000;

// Strings from callers may hold invalid UTF-8; replace it rather than let nlohmann throw.
std::string Dump(const nlohmann::json& value) {
  return value.dump(-1, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
}

// Logs created before records were signed lack key_id and tag: add them (NULL tag = unsigned).
absl::Status AddSigningColumns(sqlite3* db) {
  Statement info(db, "SELECT 1 FROM pragma_table_info('audit') WHERE name = 'tag'");
  if (auto s = info.status(); !s.ok()) return s;
  const int rc = info.Step();
  if (rc == SQLITE_ROW) return absl::OkStatus();
  if (rc != SQLITE_DONE) return SqliteError(db, "read the audit table's columns");
  return Exec(db,
              "ALTER TABLE audit ADD COLUMN key_id INTEGER NOT NULL DEFAULT 0; "
              "ALTER TABLE audit ADD COLUMN tag BLOB");
}

// The columns both SELECTs read first, in this order.
constexpr char kRecordColumns[] =
    "seq, at_us, principal, session, namespace, operation, query_hash, returned_ids, detail";

// The scalar fields of a row (columns 0-6 of kRecordColumns).
AuditRecord DecodeScalars(const Statement& st) {
  AuditRecord r;
  r.seq = st.Int(0);
  r.at_us = st.Int(1);
  r.principal = st.Text(2);
  r.session = st.Text(3);
  r.name_space = st.Text(4);
  r.operation = st.Text(5);
  r.query_hash = st.Text(6);
  return r;
}

// Decodes one row of the Query SELECT. Never fails: a column that does not decode is replaced
// and the damage is noted in `detail`.
AuditRecord DecodeRecord(const Statement& st) {
  AuditRecord r = DecodeScalars(st);
  nlohmann::json ids = nlohmann::json::parse(st.Text(7), nullptr, /*allow_exceptions=*/false);
  bool ids_ok = ids.is_array() &&
                std::all_of(ids.begin(), ids.end(), [](const nlohmann::json& id) { return id.is_string(); });
  if (ids_ok) {
    for (const nlohmann::json& id : ids) r.returned_ids.push_back(id.get<std::string>());
  }
  r.detail = nlohmann::json::parse(st.Text(8), nullptr, /*allow_exceptions=*/false);
  if (r.detail.is_discarded()) r.detail = nlohmann::json{{"corrupt", "detail is not JSON"}};
  if (!ids_ok) r.detail = nlohmann::json{{"corrupt", "returned_ids is not a JSON array of strings"}};
  return r;
}

}  // namespace

class AuditLog::Impl {
 public:
  // `keyring` empty: records are written unsigned. `keyring_path` is where Verify reloads it.
  Impl(sqlite3* db, std::filesystem::path db_path, std::chrono::milliseconds interval, size_t capacity,
       std::optional<Keyring> keyring, std::filesystem::path keyring_path)
      : db_(db),
        db_path_(std::move(db_path)),
        interval_(interval),
        capacity_(capacity),
        batch_limit_(std::min(kMaxBatch, capacity)),
        keyring_(std::move(keyring)),
        keyring_path_(std::move(keyring_path)) {}

  ~Impl() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    work_cv_.notify_all();
    space_cv_.notify_all();
    if (writer_.joinable()) writer_.join();
    sqlite3_close(db_);
  }

  void Start() {
    writer_ = std::thread([this] { Run(); });
  }

  void Append(AuditRecord record) {
    std::unique_lock<std::mutex> lock(mu_);
    if (queue_.size() >= capacity_ &&
        !space_cv_.wait_for(lock, kMaxAppendWait, [&] { return queue_.size() < capacity_ || stop_; })) {
      ++dropped_;
      return;
    }
    queue_.push_back(std::move(record));
    ++appended_;
    if (queue_.size() == 1 || queue_.size() >= batch_limit_) work_cv_.notify_one();
  }

  absl::Status Flush() {
    std::unique_lock<std::mutex> lock(mu_);
    const uint64_t target = appended_;
    const uint64_t attempts_before = attempts_;
    if (committed_ < target) {
      flush_requested_ = true;
      work_cv_.notify_one();
      done_cv_.wait(
          lock, [&] { return committed_ >= target || (attempts_ > attempts_before && !last_error_.ok()); });
      if (committed_ < target) {
        return absl::Status(last_error_.code(),
                            absl::StrCat("audit records not yet written: ", last_error_.message()));
      }
    }
    if (dropped_ > dropped_reported_) {
      uint64_t newly_dropped = dropped_ - dropped_reported_;
      dropped_reported_ = dropped_;
      return absl::ResourceExhaustedError(
          absl::StrCat(newly_dropped, " audit records were dropped because the audit queue stayed full"));
    }
    return absl::OkStatus();
  }

  uint64_t DroppedCount() {
    std::lock_guard<std::mutex> lock(mu_);
    return dropped_;
  }

  absl::Status WriteHealth() {
    std::lock_guard<std::mutex> lock(mu_);
    return last_error_;
  }

  absl::StatusOr<std::vector<AuditRecord>> Query(const AuditQuery& query) {
    if (query.limit < 1 || query.limit > kMaxQueryLimit) {
      return absl::InvalidArgumentError(absl::StrCat("limit must be 1 to ", kMaxQueryLimit));
    }
    std::string sql = absl::StrCat("SELECT ", kRecordColumns, " FROM audit WHERE 1");
    std::vector<std::string> texts;  // bound in order, then since_us, then limit
    auto filter = [&](const std::optional<std::string>& value, const char* column) {
      if (!value) return;
      absl::StrAppend(&sql, " AND ", column, " = ?");
      texts.push_back(*value);
    };
    filter(query.principal, "principal");
    filter(query.session, "session");
    filter(query.name_space, "namespace");
    if (query.entry_id) {
      // instr() on the JSON-quoted id is a cheap pre-filter; json_each then compares whole
      // elements, so "A1" does not match a record that returned only "A10". CASE keeps json_each
      // away from a row whose JSON is damaged.
      sql +=
          " AND instr(returned_ids, ?) > 0 AND CASE WHEN json_valid(returned_ids) THEN "
          "EXISTS(SELECT 1 FROM json_each(audit.returned_ids) AS e WHERE e.type = 'text' AND e.value = ?) "
          "ELSE 0 END";
      texts.push_back(Dump(nlohmann::json(*query.entry_id)));
      texts.push_back(*query.entry_id);
    }
    if (query.since_us != 0) sql += " AND at_us >= ?";
    sql += " ORDER BY seq DESC LIMIT ?";

    std::lock_guard<std::mutex> lock(db_mu_);
    Statement st(db_, sql);
    if (auto s = st.status(); !s.ok()) return s;
    int i = 1;
    for (const std::string& text : texts) st.Bind(i++, text);
    if (query.since_us != 0) st.Bind(i++, query.since_us);
    st.Bind(i++, static_cast<int64_t>(query.limit));
    std::vector<AuditRecord> out;
    int rc;
    while ((rc = st.Step()) == SQLITE_ROW) out.push_back(DecodeRecord(st));
    if (rc != SQLITE_DONE) return SqliteError(db_, "query audit log");
    return out;
  }

  // Walks every record in seq order and checks the chain (audit_chain.h) with the keyring as it is
  // on disk now (keys rotated since this log opened included). Reads through a connection of its
  // own (one snapshot of the WAL database), so the writer keeps committing meanwhile.
  absl::StatusOr<AuditVerification> Verify() {
    if (keyring_path_.empty()) {
      return absl::FailedPreconditionError("this audit log has no keyring: its records are not signed");
    }
    auto keyring = Keyring::Load(keyring_path_);
    if (!keyring.ok()) return keyring.status();
    sqlite3* reader = nullptr;
    if (sqlite3_open_v2(db_path_.c_str(), &reader, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
      sqlite3_close(reader);
      return absl::UnavailableError(absl::StrCat("cannot open ", db_path_.string(), " to verify it"));
    }
    sqlite3_busy_timeout(reader, 5000);
    absl::StatusOr<AuditVerification> result = VerifyWith(reader, *keyring);
    sqlite3_close(reader);
    return result;
  }

  absl::StatusOr<AuditVerification> VerifyWith(sqlite3* db, const Keyring& keyring) {
    // One statement: SQLite reads it from one snapshot of the log.
    Statement st(db, absl::StrCat("SELECT ", kRecordColumns, ", key_id, tag FROM audit ORDER BY seq"));
    if (auto s = st.status(); !s.ok()) return s;
    AuditVerification out;
    std::string previous_tag;
    bool seen_signed = false;
    int rc;
    while ((rc = st.Step()) == SQLITE_ROW) {
      ++out.records;
      const AuditRecord record = DecodeScalars(st);
      const std::string tag = st.Blob(10);
      if (st.IsNull(10)) {
        if (seen_signed) {
          out.bad.push_back({record.seq, "not signed, though records before it are (inserted by hand?)"});
        } else {
          ++out.unsigned_records;
        }
        previous_tag.clear();
        continue;
      }
      seen_signed = true;
      const int64_t key_id = st.Int(9);
      absl::StatusOr<std::string> expected =
          key_id > 0 && key_id <= kMaxKeyringKeys
              ? AuditRecordTag(keyring, {record.seq, record, st.TextView(7), st.TextView(8)},
                               static_cast<uint32_t>(key_id), previous_tag)
              : absl::FailedPreconditionError(absl::StrCat("no signing key ", key_id));
      if (!expected.ok()) {
        out.bad.push_back({record.seq, std::string(expected.status().message())});
      } else if (*expected != tag) {
        out.bad.push_back(
            {record.seq, "tag does not match: the record was changed, or a record before it was removed"});
      }
      previous_tag = tag;
    }
    if (rc != SQLITE_DONE) return SqliteError(db, "read the audit log");
    return out;
  }

  // Copies the records of table `audit` in `store_db` (where earlier versions kept the log) into
  // this log under their own seq numbers, then drops that table. Idempotent: a record already here
  // is skipped, so a crash between the two steps only repeats the copy on the next open.
  absl::Status MoveLegacyRecords(const std::filesystem::path& store_db) {
    std::lock_guard<std::mutex> lock(db_mu_);
    {
      Statement attach(db_, "ATTACH DATABASE ? AS legacy");
      if (auto s = attach.status(); !s.ok()) return s;
      attach.Bind(1, store_db.string());
      if (auto s = attach.Run("attach the store database"); !s.ok()) return s;
    }
    absl::Status status = [&]() -> absl::Status {
      Statement probe(db_, "SELECT 1 FROM legacy.sqlite_master WHERE type = 'table' AND name = 'audit'");
      if (auto s = probe.status(); !s.ok()) return s;
      const int rc = probe.Step();
      if (rc == SQLITE_DONE) return absl::OkStatus();
      if (rc != SQLITE_ROW) return SqliteError(db_, "look for audit records in the store database");
      probe.Reset();
      if (auto s =
              Exec(db_,
                   "INSERT OR IGNORE INTO main.audit(seq, at_us, principal, session, namespace, operation, "
                   "query_hash, returned_ids, detail) SELECT seq, at_us, principal, session, namespace, "
                   "operation, query_hash, returned_ids, detail FROM legacy.audit");
          !s.ok()) {
        return s;
      }
      return Exec(db_, "DROP TABLE legacy.audit");
    }();
    const absl::Status detached = Exec(db_, "DETACH DATABASE legacy");
    return status.ok() ? detached : status;
  }

 private:
  // The writer thread: waits for records, lets a batch gather for up to one interval (less if a
  // Flush asks, the batch fills, or the log closes), commits it, and repeats.
  void Run() {
    std::unique_lock<std::mutex> lock(mu_);
    int failures = 0;
    while (true) {
      work_cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) {  // stop_ and nothing left to write
        flush_requested_ = false;
        return;
      }
      work_cv_.wait_for(lock, interval_,
                        [&] { return stop_ || flush_requested_ || queue_.size() >= batch_limit_; });
      // Records stay queued until committed; deque::push_back keeps references to them valid.
      const size_t n = std::min(queue_.size(), kMaxBatch);
      std::vector<const AuditRecord*> batch;
      batch.reserve(n);
      for (size_t i = 0; i < n; ++i) batch.push_back(&queue_[i]);
      lock.unlock();
      absl::Status status = WriteBatch(batch);
      lock.lock();
      ++attempts_;
      if (status.ok()) {
        queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(n));
        committed_ += n;
        last_error_ = absl::OkStatus();
        failures = 0;
        if (queue_.empty()) flush_requested_ = false;
        space_cv_.notify_all();
        done_cv_.notify_all();
        continue;
      }
      last_error_ = status;
      ++failures;
      done_cv_.notify_all();
      if (stop_ && failures >= kShutdownAttempts) {
        std::fprintf(stderr, "bulwark: audit log closing with %zu unwritten records lost: %s\n",
                     queue_.size(), std::string(status.message()).c_str());
        dropped_ += queue_.size();
        queue_.clear();
        return;
      }
      // Back off for an interval before retrying, so a broken disk does not spin this thread; a new
      // Flush (it has seen this failure) or closing the log retries at once.
      flush_requested_ = false;
      work_cv_.wait_for(lock, interval_, [&] { return stop_ || flush_requested_; });
    }
  }

  // One transaction. With a keyring, each record gets the next seq and its chained tag: the chain
  // continues from the newest row in the file (another process may have appended since).
  absl::Status WriteBatch(const std::vector<const AuditRecord*>& batch) {
    std::lock_guard<std::mutex> lock(db_mu_);
    Transaction txn(db_);
    if (!txn.status().ok()) return txn.status();
    int64_t seq = 0;
    std::string previous_tag;
    if (keyring_) {
      Statement last(db_, "SELECT seq, tag FROM audit ORDER BY seq DESC LIMIT 1");
      if (auto s = last.status(); !s.ok()) return s;
      const int rc = last.Step();
      if (rc == SQLITE_ROW) {
        seq = last.Int(0);
        if (!last.IsNull(1)) previous_tag = last.Blob(1);
      } else if (rc != SQLITE_DONE) {
        return SqliteError(db_, "read the newest audit record");
      }
    }
    Statement st(
        db_,
        "INSERT INTO audit(seq, at_us, principal, session, namespace, operation, query_hash, returned_ids, "
        "detail, key_id, tag) VALUES(?,?,?,?,?,?,?,?,?,?,?)");
    if (auto s = st.status(); !s.ok()) return s;
    for (const AuditRecord* r : batch) {
      const std::string ids = Dump(nlohmann::json(r->returned_ids));
      const std::string detail = Dump(r->detail);
      if (keyring_) {
        const uint32_t key_id = keyring_->newest_key_id();
        auto tag = AuditRecordTag(*keyring_, {++seq, *r, ids, detail}, key_id, previous_tag);
        if (!tag.ok()) return tag.status();
        st.Bind(1, seq);
        st.Bind(10, static_cast<int64_t>(key_id));
        st.BindBlob(11, tag->data(), tag->size());
        previous_tag = *std::move(tag);
      } else {
        st.Bind(10, int64_t{0});  // seq and tag stay NULL: the next seq, unsigned
      }
      st.Bind(2, r->at_us);
      st.Bind(3, r->principal);
      st.Bind(4, r->session);
      st.Bind(5, r->name_space);
      st.Bind(6, r->operation);
      st.Bind(7, r->query_hash);
      st.Bind(8, ids);
      st.Bind(9, detail);
      if (auto s = st.Run("insert audit record"); !s.ok()) return s;
      st.Reset();
    }
    return txn.Commit();
  }

  std::mutex db_mu_;  // serializes all use of db_
  sqlite3* db_;       // guarded by db_mu_
  const std::filesystem::path db_path_;

  const std::chrono::milliseconds interval_;
  const size_t capacity_;                 // most records queued (written or not) at once
  const size_t batch_limit_;              // a batch this large is written without waiting for the interval
  const std::optional<Keyring> keyring_;  // signs new records (read by the writer thread only)
  const std::filesystem::path keyring_path_;  // empty: unsigned log

  std::mutex mu_;                     // guards everything below
  std::condition_variable work_cv_;   // writer: records arrived, Flush asked, or stop
  std::condition_variable space_cv_;  // Append: the queue has room
  std::condition_variable done_cv_;   // Flush: a write attempt finished
  std::deque<AuditRecord> queue_;     // oldest first; the first records may be in flight
  uint64_t appended_ = 0;             // records ever accepted by Append
  uint64_t committed_ = 0;            // records ever committed (a prefix of those appended)
  uint64_t attempts_ = 0;             // write attempts finished
  uint64_t dropped_ = 0;              // records refused by a full queue, or lost at close
  uint64_t dropped_reported_ = 0;     // dropped_ as last reported by Flush
  absl::Status last_error_;           // outcome of the last write attempt
  bool flush_requested_ = false;
  bool stop_ = false;
  std::thread writer_;
};

AuditLog::AuditLog(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
AuditLog::~AuditLog() = default;

std::filesystem::path AuditDatabaseFor(const std::filesystem::path& store_db) {
  return StoreLayout::ForDatabase(store_db).audit_database();
}

absl::StatusOr<std::unique_ptr<AuditLog>> AuditLog::Open(const std::filesystem::path& db_path,
                                                         int flush_interval_ms, size_t queue_capacity,
                                                         const std::filesystem::path& keyring_path) {
  if (flush_interval_ms < 1 || flush_interval_ms > 60'000) {
    return absl::InvalidArgumentError("flush_interval_ms must be 1 to 60000");
  }
  if (queue_capacity < 1 || queue_capacity > 10'000'000) {
    return absl::InvalidArgumentError("queue_capacity must be 1 to 10000000");
  }
  std::optional<Keyring> keyring;
  if (!keyring_path.empty()) {
    auto loaded = Keyring::Load(keyring_path);
    if (!loaded.ok()) return loaded.status();
    keyring = *std::move(loaded);
  }
  auto opened = OpenExistingDatabase(db_path, kSchema);
  if (!opened.ok()) return opened.status();
  sqlite3* db = *opened;
  if (auto s = AddSigningColumns(db); !s.ok()) {
    sqlite3_close(db);
    return s;
  }
  auto impl = std::make_unique<Impl>(db, db_path, std::chrono::milliseconds(flush_interval_ms),
                                     queue_capacity, std::move(keyring), keyring_path);
  impl->Start();
  return std::unique_ptr<AuditLog>(new AuditLog(std::move(impl)));
}

absl::StatusOr<std::unique_ptr<AuditLog>> AuditLog::OpenForStore(const std::filesystem::path& store_db,
                                                                 int flush_interval_ms, size_t queue_capacity,
                                                                 std::filesystem::path keyring_path) {
  std::error_code ec;
  if (!std::filesystem::exists(store_db, ec)) {
    return absl::NotFoundError(absl::StrCat("no store database at ", store_db.string()));
  }
  if (keyring_path.empty()) {
    keyring_path = StoreLayout::ForDatabase(store_db).keyring();
    if (!std::filesystem::exists(keyring_path, ec)) keyring_path.clear();
  }
  const std::filesystem::path path = AuditDatabaseFor(store_db);
  if (!std::filesystem::exists(path, ec)) {
    sqlite3* created = nullptr;
    const int rc =
        sqlite3_open_v2(path.c_str(), &created, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
    sqlite3_close(created);
    if (rc != SQLITE_OK) return absl::UnavailableError(absl::StrCat("cannot create ", path.string()));
  }
  auto log = Open(path, flush_interval_ms, queue_capacity, keyring_path);
  if (!log.ok()) return log.status();
  if (auto s = (*log)->impl_->MoveLegacyRecords(store_db); !s.ok()) {
    return absl::Status(s.code(),
                        absl::StrCat("moving audit records out of ", store_db.string(), ": ", s.message()));
  }
  return log;
}

void AuditLog::Append(AuditRecord record) { impl_->Append(std::move(record)); }
absl::Status AuditLog::Flush() { return impl_->Flush(); }
uint64_t AuditLog::DroppedCount() { return impl_->DroppedCount(); }
absl::Status AuditLog::WriteHealth() { return impl_->WriteHealth(); }
absl::StatusOr<std::vector<AuditRecord>> AuditLog::Query(const AuditQuery& query) {
  return impl_->Query(query);
}
absl::StatusOr<AuditVerification> AuditLog::Verify() { return impl_->Verify(); }

nlohmann::json ToJson(const AuditRecord& record) {
  return nlohmann::json{{"seq", record.seq},
                        {"at_us", record.at_us},
                        {"principal", record.principal},
                        {"session", record.session},
                        {"namespace", record.name_space},
                        {"operation", record.operation},
                        {"query_hash", record.query_hash},
                        {"returned_ids", record.returned_ids},
                        {"detail", record.detail}};
}

}  // namespace bulwark
