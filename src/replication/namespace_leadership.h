// NamespaceLeadership: this replica's leadership of one namespace (issue #17 point 2;
// doc/scale-out.md, "Replication"). It takes the namespace's lease (storage/postgresql/
// namespace_lease.h), fences the backend's writes of the namespace with the lease's epoch
// (PostgresBackend::SetFence: every write transaction then checks the epoch in PostgreSQL), and
// renews the lease from a thread every `renew_every`.
//
// Stepping down. A renewal that finds the epoch moved on or the lease expired
// (FailedPrecondition) steps down at once; a renewal that cannot reach the database steps down
// once the lease may have expired by this replica's clock, counted conservatively from when the
// last successful renewal was SENT (namespace_lease.h, "What a holder may assume"). After
// stepping down, leading() is false, status() says why, and `on_step_down` runs (the server
// stops accepting the namespace's writes). The fence is deliberately left in place with the old
// epoch: clearing it would let this process write the namespace unfenced; with it, every write
// is refused by PostgreSQL.
//
// Safety never rests on this class's clock or thread: a paused leader (SIGSTOP, a GC pause)
// wakes up still believing it leads, and its writes are refused by the fence in the write
// transaction itself.
//
// Thread-safe.
#pragma once

#include <absl/status/status.h>
#include <absl/status/statusor.h>
#include <absl/synchronization/mutex.h>
#include <absl/time/time.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "storage/postgresql/namespace_lease.h"
#include "storage/postgresql/postgres_backend.h"

namespace bulwark {

struct LeadershipOptions {
  absl::Duration ttl = absl::Seconds(10);
  absl::Duration renew_every = absl::Seconds(3);  // well under ttl
  // Subtracted from the lease's length when this replica judges expiry by its own clock.
  absl::Duration clock_margin = absl::Milliseconds(200);
  std::function<void(const absl::Status& why)> on_step_down;  // may be empty; runs on the renewal thread
};

class NamespaceLeadership {
 public:
  // Takes the lease of `name_space` for `holder`, fences `backend` with its epoch and starts the
  // renewal thread. `leases` and `backend` are not owned and must outlive this object.
  // FailedPrecondition if another holder's lease is live; InvalidArgument for renew_every not in
  // (0, ttl); the lease table's errors.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<NamespaceLeadership>> Acquire(
      NamespaceLeases* leases, PostgresBackend* backend, std::string_view name_space, std::string_view holder,
      LeadershipOptions options);
  // Stops renewing and releases the lease if still leading (the next leader gets epoch + 1 at
  // once); the fence stays.
  ~NamespaceLeadership();
  NamespaceLeadership(const NamespaceLeadership&) = delete;
  NamespaceLeadership& operator=(const NamespaceLeadership&) = delete;

  const std::string& name_space() const { return name_space_; }
  int64_t epoch() const { return epoch_; }
  bool leading() const { return leading_.load(); }
  // OK while leading; afterwards why it stepped down.
  absl::Status status() const;
  // Releases the lease now and steps down (status() then says so). The lease's error if the
  // release failed (the lease then simply expires).
  [[nodiscard]] absl::Status StepDown();

  // Tests: stops the renewal thread without stepping down, as a paused process would.
  void StopRenewingForTesting() { StopRenewing(); }

 private:
  void StopRenewing();  // joins the renewal thread
  NamespaceLeadership(NamespaceLeases* leases, std::string name_space, std::string holder, Lease lease,
                      LeadershipOptions options);
  void Run();  // the renewal thread
  // Renews once; steps down when it must (see the file comment).
  void RenewOnce();
  void StepDownFor(absl::Status why);

  NamespaceLeases* const leases_;
  const std::string name_space_;
  const std::string holder_;
  const int64_t epoch_;
  const LeadershipOptions options_;

  mutable absl::Mutex mu_;
  absl::Status status_ ABSL_GUARDED_BY(mu_);
  absl::Time valid_until_ ABSL_GUARDED_BY(mu_);  // by this replica's clock, conservatively
  bool stop_thread_ ABSL_GUARDED_BY(mu_) = false;
  std::atomic<bool> leading_{true};
  std::thread thread_;
};

}  // namespace bulwark
