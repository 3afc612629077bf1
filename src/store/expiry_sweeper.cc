#include "store/expiry_sweeper.h"

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
  std::lock_guard<std::mutex> lock(mu_);
  if (thread_.joinable()) return;
  stopping_ = false;
  thread_ = std::thread([this] { Run(); });
}

void ExpirySweeper::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ExpirySweeper::Run() {
  const auto interval = std::chrono::milliseconds(std::max(10, options_.interval_ms));
  std::unique_lock<std::mutex> lock(mu_);
  while (!wake_.wait_for(lock, interval, [this] { return stopping_; })) {
    lock.unlock();
    auto swept = SweepOnce();
    if (!swept.ok()) {
      spdlog::error("expiry sweep: {}", swept.status().ToString());
    } else if (swept->purged > 0) {
      spdlog::info("expiry sweep purged {} expired entries", swept->purged);
    }
    lock.lock();
  }
}

}  // namespace bulwark
