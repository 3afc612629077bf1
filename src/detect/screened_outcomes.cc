#include "detect/screened_outcomes.h"

#include <absl/synchronization/mutex.h>

#include "core/strings.h"

namespace bulwark {

ScreenedOutcomes::ScreenedOutcomes(WriteDefenses* defenses) : defenses_(defenses) {
  defenses_->SetScreenObserver([this](const Entry& entry, const GateOutcome& outcome) {
    absl::MutexLock lock(&mu_);
    outcomes_[entry.id] = outcome;
  });
}

ScreenedOutcomes::~ScreenedOutcomes() { defenses_->SetScreenObserver(nullptr); }

std::optional<GateOutcome> ScreenedOutcomes::Find(std::string_view entry_id) const {
  absl::MutexLock lock(&mu_);
  auto it = outcomes_.find(ToAbsl(entry_id));
  if (it == outcomes_.end()) return std::nullopt;
  return it->second;
}

}  // namespace bulwark
