// NamespaceLeadership (see the header).
#include "replication/namespace_leadership.h"

#include <absl/strings/str_cat.h>

#include <utility>

#include "core/status_macros.h"

namespace bulwark {
namespace {

// How long a lease answered at `sent` lasts by this replica's clock: the length the database
// granted, counted from when the request was sent, minus the margin.
absl::Time ValidUntil(const Lease& lease, absl::Time sent, absl::Duration margin) {
  return sent + absl::Microseconds(lease.expires_at_us - lease.as_of_us) - margin;
}

}  // namespace

absl::StatusOr<std::unique_ptr<NamespaceLeadership>> NamespaceLeadership::Acquire(NamespaceLeases* leases,
                                                                                  PostgresBackend* backend,
                                                                                  std::string_view name_space,
                                                                                  std::string_view holder,
                                                                                  LeadershipOptions options) {
  if (options.renew_every <= absl::ZeroDuration() || options.renew_every >= options.ttl) {
    return absl::InvalidArgumentError("leadership: renew_every must be in (0, ttl)");
  }
  const absl::Time sent = absl::Now();
  BULWARK_ASSIGN_OR_RETURN(Lease lease, leases->TryAcquire(name_space, holder, options.ttl));
  // Fence before anything can write as leader: from here every write of the namespace through
  // `backend` checks this epoch in its transaction.
  backend->SetFence(name_space, lease.epoch);
  std::unique_ptr<NamespaceLeadership> l(new NamespaceLeadership(
      leases, std::string(name_space), std::string(holder), lease, std::move(options)));
  {
    absl::MutexLock lock(&l->mu_);
    l->valid_until_ = ValidUntil(lease, sent, l->options_.clock_margin);
  }
  l->thread_ = std::thread([p = l.get()] { p->Run(); });
  return l;
}

NamespaceLeadership::NamespaceLeadership(NamespaceLeases* leases, std::string name_space, std::string holder,
                                         Lease lease, LeadershipOptions options)
    : leases_(leases),
      name_space_(std::move(name_space)),
      holder_(std::move(holder)),
      epoch_(lease.epoch),
      options_(std::move(options)) {}

NamespaceLeadership::~NamespaceLeadership() {
  StopRenewing();
  if (leading_) StepDown().IgnoreError();  // best effort: otherwise the lease expires
}

absl::Status NamespaceLeadership::status() const {
  absl::MutexLock lock(&mu_);
  return status_;
}

void NamespaceLeadership::StepDownFor(absl::Status why) {
  {
    absl::MutexLock lock(&mu_);
    if (!leading_) return;
    status_ = std::move(why);
    leading_ = false;
  }
  if (options_.on_step_down) options_.on_step_down(status());
}

absl::Status NamespaceLeadership::StepDown() {
  absl::Status released = leases_->Release(name_space_, holder_, epoch_);
  StepDownFor(absl::FailedPreconditionError(
      absl::StrCat("stepped down from namespace ", name_space_, " epoch ", epoch_)));
  return released;
}

void NamespaceLeadership::StopRenewing() {
  {
    absl::MutexLock lock(&mu_);
    stop_thread_ = true;  // wakes Run's Await
  }
  if (thread_.joinable()) thread_.join();
}

void NamespaceLeadership::RenewOnce() {
  const absl::Time sent = absl::Now();
  auto renewed = leases_->Renew(name_space_, holder_, epoch_, options_.ttl);
  if (renewed.ok()) {
    absl::MutexLock lock(&mu_);
    valid_until_ = ValidUntil(*renewed, sent, options_.clock_margin);
    return;
  }
  if (renewed.status().code() == absl::StatusCode::kFailedPrecondition) {
    StepDownFor(renewed.status());  // the epoch moved on or the lease expired
    return;
  }
  absl::Time valid_until;
  {
    absl::MutexLock lock(&mu_);
    valid_until = valid_until_;
  }
  if (absl::Now() >= valid_until) {
    StepDownFor(
        absl::UnavailableError(absl::StrCat("could not renew the lease of namespace ", name_space_,
                                            " before it may have expired: ", renewed.status().message())));
  }
}

void NamespaceLeadership::Run() {
  while (leading_) {
    {
      absl::MutexLock lock(&mu_);
      mu_.AwaitWithTimeout(absl::Condition(&stop_thread_), options_.renew_every);
      if (stop_thread_) return;
    }
    RenewOnce();
  }
}

}  // namespace bulwark
