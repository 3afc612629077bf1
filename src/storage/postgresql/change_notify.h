// ChangeNotifier and ChangeListener: the LISTEN/NOTIFY wake-up hint of the change feed (issue #17
// point 2; doc/scale-out.md, "Replication"). A writer, after its write transaction COMMITTED, notifies
// the channel with the namespace it changed; followers listening on the channel wake up and read
// the feed (change_feed.h) at once instead of at their next poll.
//
// The hint is never the feed. A NOTIFY is sent outside the write transaction, on purpose: a NOTIFY
// inside a transaction takes a database-wide lock at commit, serializing every writer. So a
// notification can be lost (the writer dies between commit and notify, the listener's connection
// drops, the server restarts) or arrive for a change the follower already read; a follower
// therefore polls the feed every poll interval whatever it hears, and a lost notification only
// delays it by at most that interval. A notification carries no data a follower trusts: only a
// namespace name, used to decide nothing but "read now".
#pragma once

#include <absl/container/flat_hash_set.h>
#include <absl/status/status.h>
#include <absl/status/statusor.h>
#include <absl/synchronization/mutex.h>
#include <absl/time/time.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "storage/postgresql/pg_connection.h"

namespace bulwark {

// The channel every store's writers notify (one store per database).
inline constexpr char kChangeChannel[] = "bulwark_changes";
// The most notifications one Wait returns (the rest stay queued for the next call).
inline constexpr size_t kMaxNotificationsPerWait = 1024;

class ChangeNotifier {
 public:
  // Connects. Unavailable if the server cannot be reached.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<ChangeNotifier>> Open(std::string_view conninfo);
  // Sends the hint "`name_space` changed" (pg_notify, in its own implicit transaction: call it
  // after the write committed, never inside it). InvalidArgument for an empty namespace or one
  // over 256 bytes; Unavailable if the connection is lost (the change is then seen by polling).
  [[nodiscard]] absl::Status Notify(std::string_view name_space);

 private:
  explicit ChangeNotifier(std::unique_ptr<pg::PgConnection> conn) : conn_(std::move(conn)) {}
  absl::Mutex mu_;
  std::unique_ptr<pg::PgConnection> conn_ ABSL_GUARDED_BY(mu_);
};

// The writers' side, off the write path: Hint only records the namespace (it never waits on the
// network), and a thread sends what was recorded at most once every `interval`, each namespace
// once per send (the research note: coalesce to one NOTIFY every ~10 ms per replica). At most
// kMaxPendingHints distinct namespaces wait; further ones are dropped until the next send (a
// dropped hint only delays followers until their poll). A lost connection is reopened at the
// next send.
class CoalescingNotifier {
 public:
  static constexpr size_t kMaxPendingHints = 4096;
  struct Stats {
    int64_t hints = 0;    // Hint calls with a valid namespace
    int64_t sent = 0;     // notifications sent
    int64_t dropped = 0;  // hints dropped (pending set full, or its send failed)
  };
  // Connects and starts the sending thread. Unavailable if the server cannot be reached;
  // InvalidArgument for an interval outside (0, 1 s].
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<CoalescingNotifier>> Start(
      std::string_view conninfo, absl::Duration interval = absl::Milliseconds(10));
  // Sends what is pending, then stops the thread.
  ~CoalescingNotifier();
  CoalescingNotifier(const CoalescingNotifier&) = delete;
  CoalescingNotifier& operator=(const CoalescingNotifier&) = delete;

  // Records "`name_space` changed" (call after the write committed). An empty or oversized
  // namespace is ignored.
  void Hint(std::string_view name_space);
  Stats stats() const;

 private:
  CoalescingNotifier(std::string conninfo, std::unique_ptr<ChangeNotifier> notifier, absl::Duration interval)
      : conninfo_(std::move(conninfo)), notifier_(std::move(notifier)), interval_(interval) {}
  void Run();
  // Sends `names` (reopening a lost connection first). Only the thread calls it.
  void Send(const absl::flat_hash_set<std::string>& names);

  const std::string conninfo_;
  std::unique_ptr<ChangeNotifier> notifier_;  // only the thread uses it; null: reopen at next send
  const absl::Duration interval_;
  mutable absl::Mutex mu_;
  absl::CondVar wake_;
  absl::flat_hash_set<std::string> pending_ ABSL_GUARDED_BY(mu_);
  Stats stats_ ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

class ChangeListener {
 public:
  // Connects and LISTENs on kChangeChannel. Unavailable if the server cannot be reached.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<ChangeListener>> Open(std::string_view conninfo);
  // Waits up to `timeout` for notifications; returns the namespaces notified (in arrival order,
  // each once, at most kMaxNotificationsPerWait), or an empty list when none came in time.
  // Unavailable once the connection is lost (the caller keeps polling the feed and may reopen).
  // Not thread-safe: one waiting thread.
  [[nodiscard]] absl::StatusOr<std::vector<std::string>> Wait(absl::Duration timeout);

 private:
  explicit ChangeListener(std::unique_ptr<pg::PgConnection> conn) : conn_(std::move(conn)) {}
  // Moves the notifications libpq has received into `out`; false if none.
  bool Drain(std::vector<std::string>* out);

  std::unique_ptr<pg::PgConnection> conn_;
};

}  // namespace bulwark
