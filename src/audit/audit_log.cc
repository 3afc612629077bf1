// AuditLog implementation: a bounded in-memory queue drained by one writer thread that commits
// each batch in a single SQLite transaction (group commit). Records stay in the queue until their
// transaction has committed, so a failed write is retried and the queue's size is the whole
// memory cost. When the queue is full, Append waits for room (backpressure on the caller) for at
// most kMaxAppendWait, then drops the record and counts it; Flush reports drops.
#include "audit/audit_log.h"

#include <absl/strings/str_cat.h>
#include <absl/synchronization/mutex.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <deque>
#include <thread>

#include "audit/audit_chain.h"
#include "core/status_macros.h"
#include "core/strings.h"
#include "storage/sqlite/sqlite_audit_repository.h"
#include "storage/storage_opener.h"
#include "storage/store_layout.h"

namespace bulwark {
namespace {

constexpr size_t kMaxBatch = 4096;  // records per transaction: keeps the write lock short
constexpr auto kMaxAppendWait = std::chrono::seconds(1);
constexpr int kShutdownAttempts = 3;  // failed writes tolerated while closing before giving up

// Strings from callers may hold invalid UTF-8; replace it rather than let nlohmann throw.
std::string Dump(const nlohmann::json& value) {
  return value.dump(-1, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
}

// The scalar fields of a stored row.
AuditRecord DecodeScalars(const AuditRow& row) {
  AuditRecord r;
  r.seq = row.seq;
  r.at_us = row.at_us;
  r.principal = row.principal;
  r.session = row.session;
  r.name_space = row.name_space;
  r.operation = row.operation;
  r.query_hash = row.query_hash;
  return r;
}

// Decodes a stored row. Never fails: a column that does not decode is replaced and the damage is
// noted in `detail`.
AuditRecord DecodeRecord(const AuditRow& row) {
  AuditRecord r = DecodeScalars(row);
  nlohmann::json ids = nlohmann::json::parse(row.returned_ids, nullptr, /*allow_exceptions=*/false);
  bool ids_ok = ids.is_array() &&
                std::all_of(ids.begin(), ids.end(), [](const nlohmann::json& id) { return id.is_string(); });
  if (ids_ok) {
    for (const nlohmann::json& id : ids) r.returned_ids.push_back(id.get<std::string>());
  }
  r.detail = nlohmann::json::parse(row.detail, nullptr, /*allow_exceptions=*/false);
  if (r.detail.is_discarded()) r.detail = nlohmann::json{{"corrupt", "detail is not JSON"}};
  if (!ids_ok) r.detail = nlohmann::json{{"corrupt", "returned_ids is not a JSON array of strings"}};
  return r;
}

}  // namespace

class AuditLog::Impl {
 public:
  // `keyring` empty: records are written unsigned. `keyring_path` is where Verify reloads it.
  Impl(std::unique_ptr<AuditRepository> rows, std::chrono::milliseconds interval, size_t capacity,
       std::optional<Keyring> keyring, std::filesystem::path keyring_path)
      : rows_(std::move(rows)),
        interval_(absl::FromChrono(interval)),
        capacity_(capacity),
        batch_limit_(std::min(kMaxBatch, capacity)),
        keyring_(std::move(keyring)),
        keyring_path_(std::move(keyring_path)) {}

  ~Impl() {
    {
      absl::MutexLock lock(&mu_);
      stop_ = true;
    }
    work_cv_.SignalAll();
    space_cv_.SignalAll();
    if (writer_.joinable()) writer_.join();
  }

  void Start() {
    writer_ = std::thread([this] { Run(); });
  }

  void Append(AuditRecord record) {
    absl::MutexLock lock(&mu_);
    const absl::Time deadline = absl::Now() + absl::FromChrono(kMaxAppendWait);
    while (queue_.size() >= capacity_ && !stop_) {
      if (space_cv_.WaitWithDeadline(&mu_, deadline) && queue_.size() >= capacity_ && !stop_) {
        ++dropped_;  // still full after kMaxAppendWait
        return;
      }
    }
    queue_.push_back(std::move(record));
    ++appended_;
    if (queue_.size() == 1 || queue_.size() >= batch_limit_) work_cv_.Signal();
  }

  absl::Status Flush() {
    absl::MutexLock lock(&mu_);
    const uint64_t target = appended_;
    const uint64_t attempts_before = attempts_;
    if (committed_ < target) {
      flush_requested_ = true;
      work_cv_.Signal();
      while (committed_ < target && !(attempts_ > attempts_before && !last_error_.ok())) done_cv_.Wait(&mu_);
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
    absl::MutexLock lock(&mu_);
    return dropped_;
  }

  absl::Status WriteHealth() {
    absl::MutexLock lock(&mu_);
    return last_error_;
  }

  absl::StatusOr<std::vector<AuditRecord>> Query(const AuditQuery& query) {
    AuditFilter filter{query.principal, query.session,  query.name_space,
                       query.entry_id,  query.since_us, query.limit};
    BULWARK_ASSIGN_OR_RETURN(std::vector<AuditRow> rows, rows_->Query(filter));
    std::vector<AuditRecord> out;
    out.reserve(rows.size());
    for (const AuditRow& row : rows) out.push_back(DecodeRecord(row));
    return out;
  }

  // Walks every record in seq order (one snapshot of the log: the writer keeps committing
  // meanwhile) and checks the chain (audit_chain.h) with the keyring as it is on disk now (keys
  // rotated since this log opened included).
  absl::StatusOr<AuditVerification> Verify() {
    if (keyring_path_.empty()) {
      return absl::FailedPreconditionError("this audit log has no keyring: its records are not signed");
    }
    BULWARK_ASSIGN_OR_RETURN(const Keyring keyring, Keyring::Load(keyring_path_));
    AuditVerification out;
    std::string previous_tag;
    bool seen_signed = false;
    BULWARK_RETURN_IF_ERROR(rows_->Scan([&](const AuditRow& row) {
      ++out.records;
      if (!row.tag) {
        if (seen_signed) {
          out.bad.push_back({row.seq, "not signed, though records before it are (inserted by hand?)"});
        } else {
          ++out.unsigned_records;
        }
        previous_tag.clear();
        return absl::OkStatus();
      }
      seen_signed = true;
      const AuditRecord record = DecodeScalars(row);
      absl::StatusOr<std::string> expected =
          row.key_id > 0 && row.key_id <= kMaxKeyringKeys
              ? AuditRecordTag(keyring, {row.seq, record, row.returned_ids, row.detail}, row.key_id,
                               previous_tag)
              : absl::FailedPreconditionError(absl::StrCat("no signing key ", row.key_id));
      if (!expected.ok()) {
        out.bad.push_back({row.seq, std::string(expected.status().message())});
      } else if (*expected != *row.tag) {
        out.bad.push_back(
            {row.seq, "tag does not match: the record was changed, or a record before it was removed"});
      }
      previous_tag = *row.tag;
      return absl::OkStatus();
    }));
    return out;
  }

 private:
  // The writer thread: waits for records, lets a batch gather for up to one interval (less if a
  // Flush asks, the batch fills, or the log closes), commits it, and repeats.
  void Run() ABSL_LOCKS_EXCLUDED(mu_) {
    mu_.Lock();
    int failures = 0;
    while (true) {
      while (!stop_ && queue_.empty()) work_cv_.Wait(&mu_);
      if (queue_.empty()) {  // stop_ and nothing left to write
        flush_requested_ = false;
        mu_.Unlock();
        return;
      }
      // Let the batch gather for up to one interval.
      for (const absl::Time deadline = absl::Now() + interval_;
           !stop_ && !flush_requested_ && queue_.size() < batch_limit_;) {
        if (work_cv_.WaitWithDeadline(&mu_, deadline)) break;  // timed out
      }
      // Records stay queued until committed; deque::push_back keeps references to them valid.
      const size_t n = std::min(queue_.size(), kMaxBatch);
      std::vector<const AuditRecord*> batch;
      batch.reserve(n);
      for (size_t i = 0; i < n; ++i) batch.push_back(&queue_[i]);
      mu_.Unlock();  // the write runs unlocked; Append and Flush go on
      absl::Status status = WriteBatch(batch);
      mu_.Lock();
      ++attempts_;
      if (status.ok()) {
        queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(n));
        committed_ += n;
        last_error_ = absl::OkStatus();
        failures = 0;
        if (queue_.empty()) flush_requested_ = false;
        space_cv_.SignalAll();
        done_cv_.SignalAll();
        continue;
      }
      last_error_ = status;
      ++failures;
      done_cv_.SignalAll();
      if (stop_ && failures >= kShutdownAttempts) {
        std::fprintf(stderr, "bulwark: audit log closing with %zu unwritten records lost: %s\n",
                     queue_.size(), std::string(status.message()).c_str());
        dropped_ += queue_.size();
        queue_.clear();
        mu_.Unlock();
        return;
      }
      // Back off for an interval before retrying, so a broken disk does not spin this thread; a new
      // Flush (it has seen this failure) or closing the log retries at once.
      flush_requested_ = false;
      for (const absl::Time deadline = absl::Now() + interval_; !stop_ && !flush_requested_;) {
        if (work_cv_.WaitWithDeadline(&mu_, deadline)) break;  // timed out
      }
    }
  }

  // One transaction. With a keyring, each record gets the next seq and its chained tag: the chain
  // continues from the head of the log as the repository reads it under its write lock (another
  // process may have appended since).
  absl::Status WriteBatch(const std::vector<const AuditRecord*>& batch) {
    return rows_->Append([&](const AuditHead& head) -> absl::StatusOr<std::vector<AuditRow>> {
      std::vector<AuditRow> rows;
      rows.reserve(batch.size());
      int64_t seq = head.seq;
      std::string previous_tag = head.tag.value_or("");
      for (const AuditRecord* r : batch) {
        AuditRow row{0,
                     r->at_us,
                     r->principal,
                     r->session,
                     r->name_space,
                     r->operation,
                     r->query_hash,
                     Dump(nlohmann::json(r->returned_ids)),
                     Dump(r->detail)};
        if (keyring_) {
          row.seq = ++seq;
          row.key_id = keyring_->newest_key_id();
          BULWARK_ASSIGN_OR_RETURN(std::string tag,
                                   AuditRecordTag(*keyring_, {row.seq, *r, row.returned_ids, row.detail},
                                                  row.key_id, previous_tag));
          previous_tag = tag;
          row.tag = std::move(tag);
        }
        rows.push_back(std::move(row));
      }
      return rows;
    });
  }

  const std::unique_ptr<AuditRepository> rows_;  // thread-safe
  const absl::Duration interval_;
  const size_t capacity_;                 // most records queued (written or not) at once
  const size_t batch_limit_;              // a batch this large is written without waiting for the interval
  const std::optional<Keyring> keyring_;  // signs new records (read by the writer thread only)
  const std::filesystem::path keyring_path_;  // empty: unsigned log

  absl::Mutex mu_;
  absl::CondVar work_cv_;                               // writer: records arrived, Flush asked, or stop
  absl::CondVar space_cv_;                              // Append: the queue has room
  absl::CondVar done_cv_;                               // Flush: a write attempt finished
  std::deque<AuditRecord> queue_ ABSL_GUARDED_BY(mu_);  // oldest first; the first records may be in flight
  uint64_t appended_ ABSL_GUARDED_BY(mu_) = 0;          // records ever accepted by Append
  uint64_t committed_ ABSL_GUARDED_BY(mu_) = 0;         // records ever committed (a prefix of those appended)
  uint64_t attempts_ ABSL_GUARDED_BY(mu_) = 0;          // write attempts finished
  uint64_t dropped_ ABSL_GUARDED_BY(mu_) = 0;           // records refused by a full queue, or lost at close
  uint64_t dropped_reported_ ABSL_GUARDED_BY(mu_) = 0;  // dropped_ as last reported by Flush
  absl::Status last_error_ ABSL_GUARDED_BY(mu_);        // outcome of the last write attempt
  bool flush_requested_ ABSL_GUARDED_BY(mu_) = false;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread writer_;
};

AuditLog::AuditLog(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
AuditLog::~AuditLog() = default;

std::filesystem::path AuditDatabaseFor(const std::filesystem::path& store_db) {
  return StoreLayout::ForDatabase(store_db).audit_database();
}

absl::StatusOr<std::unique_ptr<AuditLog>> AuditLog::Open(std::unique_ptr<AuditRepository> rows,
                                                         int flush_interval_ms, size_t queue_capacity,
                                                         const std::filesystem::path& keyring_path) {
  if (rows == nullptr) return absl::InvalidArgumentError("AuditLog needs a repository");
  if (flush_interval_ms < 1 || flush_interval_ms > 60'000) {
    return absl::InvalidArgumentError("flush_interval_ms must be 1 to 60000");
  }
  if (queue_capacity < 1 || queue_capacity > 10'000'000) {
    return absl::InvalidArgumentError("queue_capacity must be 1 to 10000000");
  }
  std::optional<Keyring> keyring;
  if (!keyring_path.empty()) {
    BULWARK_ASSIGN_OR_RETURN(Keyring loaded, Keyring::Load(keyring_path));
    keyring = std::move(loaded);
  }
  auto impl = std::make_unique<Impl>(std::move(rows), std::chrono::milliseconds(flush_interval_ms),
                                     queue_capacity, std::move(keyring), keyring_path);
  impl->Start();
  return std::unique_ptr<AuditLog>(new AuditLog(std::move(impl)));
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
  BULWARK_ASSIGN_OR_RETURN(std::unique_ptr<AuditRepository> rows,
                           OpenSqliteAuditRepository(db_path, /*create=*/false));
  return Open(std::move(rows), flush_interval_ms, queue_capacity, keyring_path);
}

absl::StatusOr<std::unique_ptr<AuditLog>> AuditLog::OpenForStore(const std::filesystem::path& store_db,
                                                                 int flush_interval_ms, size_t queue_capacity,
                                                                 std::filesystem::path keyring_path) {
  std::error_code ec;
  const StoreLayout layout = StoreLayout::ForDatabase(store_db);
  if (!layout.is_postgres() && !std::filesystem::exists(store_db, ec)) {
    return absl::NotFoundError(absl::StrCat("no store database at ", store_db.string()));
  }
  if (keyring_path.empty() && layout.is_postgres()) {
    return absl::InvalidArgumentError(
        "the audit log of a PostgreSQL store needs its keyring file (--keyring)");
  }
  if (keyring_path.empty()) {
    keyring_path = layout.keyring();
    if (!std::filesystem::exists(keyring_path, ec)) keyring_path.clear();
  }
  BULWARK_ASSIGN_OR_RETURN(std::unique_ptr<AuditRepository> rows, OpenAuditRepository(layout.dir().string()));
  return Open(std::move(rows), flush_interval_ms, queue_capacity, keyring_path);
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
