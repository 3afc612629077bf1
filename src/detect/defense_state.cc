#include "detect/defense_state.h"

#include <absl/synchronization/mutex.h>

#include "core/strings.h"

namespace bulwark {

DefenseState::Namespace& DefenseState::SlotLocked(std::string_view name_space) {
  Namespace& slot = namespaces_[ToAbsl(name_space)];
  if (!slot.history) slot.history = std::make_unique<QueryHistory>(dim_, capacity_);
  return slot;
}

QueryHistory& DefenseState::History(std::string_view name_space) {
  {
    absl::ReaderMutexLock lock(&mu_);
    if (auto it = namespaces_.find(ToAbsl(name_space)); it != namespaces_.end()) return *it->second.history;
  }
  absl::MutexLock lock(&mu_);
  return *SlotLocked(name_space).history;
}

const QueryHistory* DefenseState::FindHistory(std::string_view name_space) const {
  absl::ReaderMutexLock lock(&mu_);
  auto it = namespaces_.find(ToAbsl(name_space));
  return it == namespaces_.end() ? nullptr : it->second.history.get();
}

std::vector<std::string> DefenseState::HistoryNamespaces() const {
  absl::ReaderMutexLock lock(&mu_);
  std::vector<std::string> out;
  for (const auto& [name, ns] : namespaces_) out.push_back(name);
  return out;
}

std::shared_ptr<const NamespaceCalibration> DefenseState::Calibration(std::string_view name_space) const {
  absl::ReaderMutexLock lock(&mu_);
  auto it = namespaces_.find(ToAbsl(name_space));
  return it == namespaces_.end() ? nullptr : it->second.calibration;
}

void DefenseState::SetCalibration(std::string_view name_space,
                                  std::shared_ptr<const NamespaceCalibration> calibration) {
  absl::MutexLock serial(&set_calibration_mu_);
  QueryHistory* history;
  {
    absl::MutexLock lock(&mu_);
    Namespace& slot = SlotLocked(name_space);
    slot.calibration = calibration;
    history = slot.history.get();
  }
  // Outside the lock: O(|H| |R|) dot products. A write scored meanwhile sees the new calibration
  // with the old ceilings, which the memsad detector notices (View::reference()) and handles.
  std::shared_ptr<const QueryHistory::Reference> reference;
  if (calibration)
    reference = std::shared_ptr<const QueryHistory::Reference>(calibration, &calibration->reference);
  history->AttachReference(std::move(reference));
}

DefenseState::Snapshot DefenseState::Lookup(std::string_view name_space) const {
  absl::ReaderMutexLock lock(&mu_);
  auto it = namespaces_.find(ToAbsl(name_space));
  if (it == namespaces_.end()) return {};
  return {it->second.history.get(), it->second.calibration};
}

}  // namespace bulwark
