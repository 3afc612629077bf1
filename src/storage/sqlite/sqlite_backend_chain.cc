// SqliteBackend: the history chain (StorageBackend, "The history chain"; store/history_chain.h),
// and the metadata scans of the signed settings.
// Every append runs inside the caller's BEGIN IMMEDIATE transaction, so the newest event and the
// head it reads cannot change before it commits: SQLite's single writer orders the chain.
#include <absl/strings/str_cat.h>
#include <absl/synchronization/mutex.h>
#include <sqlite3.h>

#include <string>
#include <utility>

#include "core/hex.h"
#include "core/status_macros.h"
#include "storage/signed_meta_json.h"
#include "storage/sqlite/sqlite_backend.h"
#include "storage/sqlite/sqlite_event_rows.h"
#include "storage/sqlite/sqlite_schema.h"
#include "storage/sqlite/sqlite_util.h"

namespace bulwark {
namespace {

using sqlite_rows::DecodeEvent;
using sqlite_rows::kEventColumns;

// The newest event's seq and link, inside the caller's transaction, with `st` (kNewestLink).
constexpr char kNewestLink[] = "SELECT seq, link_key_id, link FROM history ORDER BY seq DESC LIMIT 1";
absl::StatusOr<std::pair<int64_t, HistoryLink>> ReadNewestLink(sqlite3* db, Statement& st) {
  ResetOnExit reset(st);
  const int rc = st.Step();
  if (rc == SQLITE_DONE) return std::pair<int64_t, HistoryLink>{0, {}};
  if (rc != SQLITE_ROW) return SqliteError(db, "read the newest history event");
  const int64_t key_id = st.Int(1);
  return std::pair<int64_t, HistoryLink>{
      st.Int(0), {key_id >= 0 && key_id <= UINT32_MAX ? static_cast<uint32_t>(key_id) : 0, st.Blob(2)}};
}

}  // namespace

absl::Status SqliteBackend::ScanMeta(
    std::string_view prefix, const std::function<absl::Status(std::string_view, std::string_view)>& visit) {
  absl::MutexLock lock(&mu_);
  // substr, not LIKE: a prefix may hold % or _.
  Statement st(db_, "SELECT key, value FROM meta WHERE substr(key, 1, length(?1)) = ?1 ORDER BY key");
  BULWARK_RETURN_IF_ERROR(st.status());
  st.Bind(1, prefix);
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) {
    BULWARK_RETURN_IF_ERROR(visit(st.TextView(0), st.TextView(1)));
  }
  return rc == SQLITE_DONE ? absl::OkStatus() : SqliteError(db_, "scan meta");
}

absl::Status SqliteBackend::DeleteMeta(std::string_view key) {
  absl::MutexLock lock(&mu_);
  Statement st(db_, "DELETE FROM meta WHERE key = ?");
  BULWARK_RETURN_IF_ERROR(st.status());
  st.Bind(1, key);
  return st.Run("delete meta");
}

void SqliteBackend::SetHistoryChain(const HistoryChainSigner* signer) {
  absl::MutexLock lock(&mu_);
  chain_ = signer;
  head_checked_ = false;
  committed_tail_.reset();
}

absl::StatusOr<std::optional<HistoryHead>> SqliteBackend::HeadLocked() {
  BULWARK_ASSIGN_OR_RETURN(Statement * cached, Cached(get_head_, "SELECT value FROM meta WHERE key = ?"));
  Statement& st = *cached;
  ResetOnExit reset(st);
  st.Bind(1, kHistoryHeadKey);
  const int rc = st.Step();
  if (rc == SQLITE_DONE) return std::optional<HistoryHead>();
  if (rc != SQLITE_ROW) return SqliteError(db_, "read the history head");
  const std::string_view text = st.TextView(0);
  if (!head_text_.empty() && text == head_text_) return std::optional<HistoryHead>(head_decoded_);
  BULWARK_ASSIGN_OR_RETURN(std::optional<HistoryHead> head, DecodeHistoryHead(text));
  if (head.has_value()) {
    head_text_ = std::string(text);
    head_decoded_ = *head;
    head_checked_ = false;
  }
  return head;
}

absl::Status SqliteBackend::PutHeadLocked(const HistoryHead& head) {
  const std::string json = EncodeHistoryHead(head);
  BULWARK_ASSIGN_OR_RETURN(
      Statement * cached,
      Cached(
          put_head_,
          "INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value"));
  Statement& st = *cached;
  ResetOnExit reset(st);
  st.Bind(1, kHistoryHeadKey);
  st.Bind(2, json);
  BULWARK_RETURN_IF_ERROR(st.Run("write the history head"));
  head_text_ = json;
  head_decoded_ = head;
  head_checked_ = true;  // signed here, by chain_
  return absl::OkStatus();
}

absl::Status SqliteBackend::AppendEventsLocked(std::span<const HistoryEvent> events,
                                               std::span<const Entry> written) {
  if (events.empty()) return absl::OkStatus();
  BULWARK_ASSIGN_OR_RETURN(
      Statement * cached,
      Cached(insert_event_,
             "INSERT INTO history(seq, entry_id, namespace, event, actor, at_us, detail, "
             "key_id, tag, link_key_id, link, detail_ref) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)"));
  Statement& ins = *cached;
  ResetOnExit reset(ins);
  int64_t seq = 0;
  std::string previous;
  if (chain_ != nullptr) {
    BULWARK_ASSIGN_OR_RETURN(ChainTail tail, TailLocked());
    seq = tail.seq;
    previous = std::move(tail.link);
  }
  // An add's events follow its entries' order (add, perhaps quarantine, next add, ...): each event
  // is compared with the entry after the last one referenced only. An event that does not match
  // keeps its whole detail.
  size_t next_written = 0;
  for (const HistoryEvent& ev : events) {
    const int64_t ref_bits =
        next_written < written.size() ? sqlite_rows::DetailRefBits(ev, written[next_written]) : 0;
    if (ref_bits != 0) ++next_written;
    HistoryLink link;
    if (chain_ != nullptr) {
      // The link encodes the event's identity, not its detail or tag (LinkEncoding): no copy of those.
      HistoryEvent placed;
      placed.seq = ++seq;
      placed.entry_id = ev.entry_id;
      placed.name_space = ev.name_space;
      placed.event = ev.event;
      placed.actor = ev.actor;
      placed.at_us = ev.at_us;
      link = chain_->Link(placed, previous);
      ins.Bind(1, seq);
    }
    ins.Bind(2, ev.entry_id);
    ins.Bind(3, ev.name_space);
    ins.Bind(4, ev.event);
    ins.Bind(5, ev.actor);
    ins.Bind(6, ev.at_us);
    ins.Bind(7, sqlite_rows::StoredDetail(ev, ref_bits));
    ins.Bind(8, static_cast<int64_t>(ev.key_id));
    ins.BindBlob(9, ev.tag.data(), ev.tag.size());
    ins.Bind(10, static_cast<int64_t>(link.key_id));
    ins.BindBlob(11, link.link.data(), link.link.size());
    ins.Bind(12, ref_bits);
    BULWARK_RETURN_IF_ERROR(ins.Run("insert history event"));
    inserted_event_seqs_.push_back(sqlite3_last_insert_rowid(db_));
    ins.Reset();
    previous = std::move(link.link);
  }
  if (chain_ == nullptr) return absl::OkStatus();
  BULWARK_RETURN_IF_ERROR(PutHeadLocked(chain_->Head(seq, previous)));
  appended_tail_ = ChainTail{seq, std::move(previous)};
  return absl::OkStatus();
}

std::optional<uint32_t> SqliteBackend::DataVersionLocked() {
  unsigned int version = 0;
  if (sqlite3_file_control(db_, "main", SQLITE_FCNTL_DATA_VERSION, &version) != SQLITE_OK)
    return std::nullopt;
  return version;
}

absl::StatusOr<SqliteBackend::ChainTail> SqliteBackend::TailLocked() {
  // Inside the write transaction the version reflects every commit before it began.
  if (committed_tail_.has_value() && DataVersionLocked() == std::optional<uint32_t>(tail_version_)) {
    ChainTail tail = *std::move(committed_tail_);
    committed_tail_.reset();  // until this append commits
    return tail;
  }
  committed_tail_.reset();
  BULWARK_ASSIGN_OR_RETURN(Statement * newest_link, Cached(newest_link_, kNewestLink));
  absl::StatusOr<std::pair<int64_t, HistoryLink>> newest = ReadNewestLink(db_, *newest_link);
  if (!newest.ok()) return newest.status();
  absl::StatusOr<std::optional<HistoryHead>> head = HeadLocked();
  if (!head.ok()) return head.status();
  // Appending after a truncated tail (or under a replaced head) would sign the damage over.
  // The head's tag is checked unless it is the very text this connection wrote or checked.
  const bool matches = head->has_value()
                           ? (*head)->seq == newest->first && (*head)->link == newest->second.link &&
                                 (head_checked_ || chain_->CheckHead(**head).ok())
                           : newest->first == 0;
  if (!matches) {
    return absl::DataLossError(absl::StrCat(
        "the history chain's head does not name the newest event (", newest->first,
        "): events were deleted or the head was replaced; writes are refused (run `bulwark verify`)"));
  }
  if (head->has_value()) head_checked_ = true;  // head_text_ is the text just checked
  return ChainTail{newest->first, std::move(newest->second.link)};
}

absl::Status SqliteBackend::ScanHistoryChain(
    const std::function<absl::Status(const HistoryEvent&, const HistoryLink&)>& visit) {
  absl::MutexLock lock(&mu_);
  Statement st(db_, absl::StrCat("SELECT ", kEventColumns, ", link_key_id, link FROM history ORDER BY seq"));
  BULWARK_RETURN_IF_ERROR(st.status());
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) {
    const int64_t key_id = st.Int(sqlite_rows::kEventColumnCount);
    const HistoryLink link{key_id >= 0 && key_id <= UINT32_MAX ? static_cast<uint32_t>(key_id) : 0,
                           st.Blob(sqlite_rows::kEventColumnCount + 1)};
    BULWARK_RETURN_IF_ERROR(visit(DecodeEvent(st), link));
  }
  return rc == SQLITE_DONE ? absl::OkStatus() : SqliteError(db_, "scan the history chain");
}

absl::StatusOr<std::optional<HistoryHead>> SqliteBackend::HistoryChainHead() {
  absl::MutexLock lock(&mu_);
  return HeadLocked();
}

absl::StatusOr<std::pair<int64_t, HistoryLink>> SqliteBackend::NewestLink() {
  absl::MutexLock lock(&mu_);
  BULWARK_ASSIGN_OR_RETURN(Statement * newest_link, Cached(newest_link_, kNewestLink));
  return ReadNewestLink(db_, *newest_link);
}

absl::StatusOr<int64_t> SqliteBackend::LinkEventsFromBeforeTheChain() {
  absl::MutexLock lock(&mu_);
  if (chain_ == nullptr) return absl::FailedPreconditionError("no history chain signer");
  auto marker = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) -> absl::StatusOr<std::optional<int64_t>> {
    Statement st(db_, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = ?");
    BULWARK_RETURN_IF_ERROR(st.status());
    st.Bind(1, kUnlinkedHistoryMarker);
    const int rc = st.Step();
    if (rc == SQLITE_DONE) return std::nullopt;
    if (rc != SQLITE_ROW) return SqliteError(db_, "read the chain upgrade marker");
    return st.Int(0);
  };
  auto seen = marker();  // almost every open finds none and takes no write lock for it
  if (!seen.ok()) return seen.status();
  if (!seen->has_value()) return 0;
  Transaction txn(db_);
  if (!txn.status().ok()) return txn.status();
  auto marked = marker();  // again under the write lock: another process may have linked them
  if (!marked.ok()) return marked.status();
  if (!marked->has_value()) return 0;
  Statement st(db_, absl::StrCat("SELECT ", kEventColumns, " FROM history WHERE seq <= ? ORDER BY seq"));
  BULWARK_RETURN_IF_ERROR(st.status());
  st.Bind(1, **marked);
  Statement update(db_, "UPDATE history SET link_key_id = ?, link = ? WHERE seq = ?");
  BULWARK_RETURN_IF_ERROR(update.status());
  int64_t linked = 0;
  int64_t last_seq = 0;
  std::string previous;
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) {
    const HistoryEvent ev = DecodeEvent(st);
    HistoryLink link = chain_->Link(ev, previous);
    update.Bind(1, static_cast<int64_t>(link.key_id));
    update.BindBlob(2, link.link.data(), link.link.size());
    update.Bind(3, ev.seq);
    BULWARK_RETURN_IF_ERROR(update.Run("link history event"));
    update.Reset();
    previous = std::move(link.link);
    last_seq = ev.seq;
    ++linked;
  }
  if (rc != SQLITE_DONE) return SqliteError(db_, "read the events to link");
  if (linked > 0) {
    BULWARK_RETURN_IF_ERROR(PutHeadLocked(chain_->Head(last_seq, previous)));
  }
  BULWARK_RETURN_IF_ERROR(bulwark::DeleteMeta(db_, kUnlinkedHistoryMarker));
  BULWARK_RETURN_IF_ERROR(txn.Commit());
  return linked;
}

}  // namespace bulwark
