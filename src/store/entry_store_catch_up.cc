// EntryStore (see entry_store.h): following other processes' writes to the same store -- their
// history events re-index the entries they changed, at most every other_writers_check_ms -- and
// re-reading a keyring another process rotated.
#include <absl/strings/str_cat.h>
#include <absl/synchronization/mutex.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "core/ids.h"
#include "core/status_macros.h"
#include "core/strings.h"
#include "core/text_validation.h"
#include "provenance/keyring.h"
#include "provenance/signer.h"
#include "store/entry_keys.h"
#include "store/entry_store.h"
#include "store/namespace_index.h"

namespace bulwark {

void EntryStore::NoteOwnEvents() {
  for (int64_t seq : backend_->TakeInsertedEventSeqs()) {
    if (seq > seen_event_seq_) own_event_seqs_.insert(seq);
  }
  // Searches drain the set; a long run of writes without searches drains it here, so it stays small.
  constexpr size_t kMaxOwnEvents = 4096;
  if (own_event_seqs_.size() > kMaxOwnEvents) {
    if (auto s = CatchUpLocked(); !s.ok()) spdlog::warn("catching up with other writers: {}", s.ToString());
  }
}

void EntryStore::RefreshKeyring() {
  if (options_.keyring_path.empty()) return;
  const int64_t now = options_.env->NowMicros();
  int64_t due = next_keyring_check_us_.load(std::memory_order_relaxed);
  if (now < due || !next_keyring_check_us_.compare_exchange_strong(
                       due, now + int64_t{std::max(options_.other_writers_check_ms, 0)} * 1000)) {
    return;
  }
  struct stat st {};
  if (::stat(options_.keyring_path.c_str(), &st) != 0) return;
  const FileStamp stamp{.device = static_cast<uint64_t>(st.st_dev),
                        .inode = static_cast<uint64_t>(st.st_ino),
                        .mtime_ns = int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec,
                        .size = static_cast<int64_t>(st.st_size)};
  absl::MutexLock keyring_lock(&keyring_mu_);  // no write signs while the keyring changes
  absl::MutexLock lock(&mu_);
  if (stamp == keyring_stamp_) return;
  absl::StatusOr<Keyring> loaded = Keyring::Load(options_.keyring_path);
  if (!loaded.ok()) {
    spdlog::warn("the keyring changed but cannot be read again: {}", loaded.status().ToString());
    return;
  }
  keyring_stamp_ = stamp;
  if (loaded->newest_key_id() <= keyring_->newest_key_id()) return;  // nothing new (our own rotation)
  spdlog::info("signing key {} was added by another process; it now signs here too", loaded->newest_key_id());
  *keyring_ = *std::move(loaded);
}

bool EntryStore::ReloadKeyringIfGrown() {
  if (options_.keyring_path.empty()) return false;
  absl::StatusOr<Keyring> loaded = Keyring::Load(options_.keyring_path);
  if (!loaded.ok()) return false;
  absl::MutexLock keyring_lock(&keyring_mu_);
  absl::MutexLock lock(&mu_);
  if (loaded->newest_key_id() <= keyring_->newest_key_id()) return false;
  spdlog::info("signing key {} was added by another process; it now signs here too", loaded->newest_key_id());
  *keyring_ = *std::move(loaded);
  return true;
}

absl::Status EntryStore::WriteWithFreshKeyring(absl::FunctionRef<absl::Status()> write) {
  constexpr int kMaxAttempts = 3;  // each retry needs another rotation in between to fail again
  for (int attempt = 1;; ++attempt) {
    const uint32_t known = keyring_->newest_key_id();
    absl::Status status = write();
    if (!absl::IsDataLoss(status) || attempt == kMaxAttempts) return status;
    // Another thread's catch-up may have re-read the keyring since `known` was taken.
    ReloadKeyringIfGrown();
    if (keyring_->newest_key_id() <= known) return status;
  }
}

absl::Status EntryStore::CatchUpWithOtherWriters() {
  if (options_.other_writers_check_ms < 0) return absl::OkStatus();
  const int64_t now = options_.env->NowMicros();
  int64_t due = next_catch_up_us_.load(std::memory_order_relaxed);
  if (now < due) return absl::OkStatus();
  // One thread checks; the others search with the index as it is.
  if (!next_catch_up_us_.compare_exchange_strong(due,
                                                 now + int64_t{options_.other_writers_check_ms} * 1000)) {
    return absl::OkStatus();
  }
  auto last = backend_->LastEventSeq();
  if (!last.ok()) return last.status();
  {
    absl::ReaderMutexLock lock(&mu_);
    if (*last <= seen_event_seq_) return absl::OkStatus();
  }
  RefreshKeyring();  // what the other writers signed may name a key they rotated to
  absl::MutexLock lock(&mu_);
  return CatchUpLocked();
}

absl::StatusOr<int64_t> EntryStore::CatchUpNow() {
  BULWARK_ASSIGN_OR_RETURN(const int64_t last, backend_->LastEventSeq());
  {
    absl::ReaderMutexLock lock(&mu_);
    if (last <= seen_event_seq_) return seen_event_seq_;
  }
  RefreshKeyring();
  absl::MutexLock lock(&mu_);
  BULWARK_RETURN_IF_ERROR(CatchUpLocked());
  return seen_event_seq_;
}

absl::Status EntryStore::CatchUpLocked() {
  // A replica lists only its held namespaces' events; of the others, each namespace's newest seq.
  auto events =
      options_.hold_all_namespaces
          ? backend_->EventsAfter(seen_event_seq_)
          : backend_->HeldEventsAfter(seen_event_seq_, std::vector<std::string>(held_.begin(), held_.end()));
  if (!events.ok()) return events.status();
  // Each entry once, however many of its events are new.
  absl::flat_hash_set<std::pair<std::string, std::string>> changed;
  std::vector<const StorageBackend::EventRef*> order;
  int64_t last = seen_event_seq_;
  for (const StorageBackend::EventRef& e : *events) {
    last = std::max(last, e.seq);
    if (e.entry_id.empty()) {  // a namespace not held: known, nothing of it is read or kept
      known_namespaces_.insert(e.name_space);
      continue;
    }
    if (own_event_seqs_.contains(e.seq)) continue;  // this process's own write: indexed already
    if (changed.insert({e.name_space, e.entry_id}).second) order.push_back(&e);
  }
  for (const StorageBackend::EventRef* e : order) {
    BULWARK_RETURN_IF_ERROR(ReindexEntry(e->name_space, e->entry_id));  // retried at the next check
  }
  seen_event_seq_ = last;
  absl::erase_if(own_event_seqs_, [last](int64_t seq) { return seq <= last; });
  if (!order.empty()) spdlog::info("caught up with {} entries changed by another process", order.size());
  return absl::OkStatus();
}

absl::Status EntryStore::ReindexEntry(const std::string& name_space, const std::string& id) {
  if (!HoldsLocked(name_space)) {  // placed on other replicas: nothing of it is read or kept
    known_namespaces_.insert(name_space);
    return absl::OkStatus();
  }
  auto row = backend_->GetEntry(name_space, id);
  if (!row.ok()) return row.status();
  if (!row->has_value()) return absl::OkStatus();
  const StoredRow& r = **row;
  if (RolledBack(r)) {
    // Older than a version seen before: rolled back, not a new write. The index keeps what it had;
    // reads withhold the row (CheckRow).
    ReportBadRow(r.row_id, r.entry.id, r.entry.name_space, "rolled back to an older version");
    return absl::OkStatus();
  }
  UnindexRow(name_space, r.row_id);
  if (Indexable(r)) {
    IndexRow(r.row_id, r.entry);
  } else {
    ++changes_since_snapshot_;  // dropped (IndexRow counts the rest)
  }
  return absl::OkStatus();
}

}  // namespace bulwark
