// The time-bounded cache of fitted gates (see gate_registry.h).
#include "gate/gate_registry.h"

#include <absl/synchronization/mutex.h>

#include "core/status_macros.h"
#include "core/strings.h"

namespace bulwark {

absl::StatusOr<std::shared_ptr<const StoredGate>> GateRegistry::Get(std::string_view name_space) {
  const int64_t now = env_->NowMicros();
  {
    absl::MutexLock lock(&mu_);
    auto it = cache_.find(ToAbsl(name_space));
    if (it != cache_.end() && now - it->second.loaded_at_us < ttl_us_) return it->second.gate;
  }
  auto loaded = store_->Load(name_space);  // outside the lock: a slow read must not stall other namespaces
  BULWARK_RETURN_IF_ERROR(loaded.status());
  std::shared_ptr<const StoredGate> gate =
      loaded->has_value() ? std::make_shared<const StoredGate>(**std::move(loaded)) : nullptr;
  absl::MutexLock lock(&mu_);
  cache_[std::string(name_space)] = {gate, now};
  return gate;
}

void GateRegistry::Invalidate(std::string_view name_space) {
  absl::MutexLock lock(&mu_);
  cache_.erase(ToAbsl(name_space));
}

}  // namespace bulwark
