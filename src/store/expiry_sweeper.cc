#include "store/expiry_sweeper.h"

#include <absl/synchronization/mutex.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "core/status_macros.h"
#include "store/memory_store_impl.h"

namespace bulwark {

ExpirySweeper::ExpirySweeper(MemoryStore* store, Env* env, const Options& options)
    : store_(store), env_(env), options_(options) {}

ExpirySweeper::~ExpirySweeper() { Stop(); }

absl::StatusOr<SweepResult> ExpirySweeper::SweepOnce() {
  SweepResult result;
  EntryStore& entries = *store_->impl().entries;
  const int64_t now = env_->NowMicros();
  BULWARK_ASSIGN_OR_RETURN(auto expired, entries.backend().ExpiredEntries(now, std::max(1, options_.batch)));
  const EntryStore::StateChange purge{"purge", ~StateBit(State::kPurged), State::kPurged,
                                      nlohmann::json{{"reason", "expired"}}};
  for (const auto& [name_space, id] : expired) {
    if (options_.sweeps && !options_.sweeps(name_space)) continue;  // another replica's to purge
    absl::Status s = entries.Transition(name_space, id, kExpiryActor, purge);
    if (absl::IsFailedPrecondition(s) || absl::IsNotFound(s)) continue;  // purged by someone else
    if (absl::IsDataLoss(s) || absl::IsInvalidArgument(s)) {
      // A row that fails verification is not trusted to be expired; verify lists it.
      spdlog::warn("expiry sweep skipped entry {} of {}: {}", id, name_space, s.ToString());
      continue;
    }
    BULWARK_RETURN_IF_ERROR(s);
    ++result.purged;
  }
  BULWARK_ASSIGN_OR_RETURN(result.idempotency_deleted,
                           entries.backend().DeleteIdempotencyRecords(now - kIdempotencyRetentionUs));
  return result;
}

void ExpirySweeper::Start() {
  absl::MutexLock lock(&mu_);
  if (thread_.joinable()) return;
  stopping_ = false;
  thread_ = std::thread([this] { Run(); });
}

void ExpirySweeper::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();  // Run's Await sees stopping_
}

void ExpirySweeper::Run() {
  const absl::Duration interval = absl::Milliseconds(std::max(10, options_.interval_ms));
  mu_.Lock();
  while (!mu_.AwaitWithTimeout(absl::Condition(&stopping_), interval)) {
    mu_.Unlock();
    auto swept = SweepOnce();
    if (!swept.ok()) {
      spdlog::error("expiry sweep: {}", swept.status().ToString());
    } else if (swept->purged > 0) {
      spdlog::info("expiry sweep purged {} expired entries", swept->purged);
    }
    mu_.Lock();
  }
  mu_.Unlock();
}

}  // namespace bulwark
