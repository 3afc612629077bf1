#include "detect/defense_state.h"

#include "core/strings.h"

namespace bulwark {

QueryHistory& DefenseState::History(std::string_view name_space) {
  {
    std::shared_lock lock(mu_);
    if (auto it = histories_.find(ToAbsl(name_space)); it != histories_.end()) return *it->second;
  }
  std::unique_lock lock(mu_);
  auto& slot = histories_[ToAbsl(name_space)];
  if (!slot) slot = std::make_unique<QueryHistory>(dim_, capacity_);
  return *slot;
}

const QueryHistory* DefenseState::FindHistory(std::string_view name_space) const {
  std::shared_lock lock(mu_);
  auto it = histories_.find(ToAbsl(name_space));
  return it == histories_.end() ? nullptr : it->second.get();
}

std::vector<std::string> DefenseState::HistoryNamespaces() const {
  std::shared_lock lock(mu_);
  std::vector<std::string> out;
  for (const auto& [name, history] : histories_) out.push_back(name);
  return out;
}

std::shared_ptr<const NamespaceCalibration> DefenseState::Calibration(std::string_view name_space) const {
  std::shared_lock lock(mu_);
  auto it = calibrations_.find(ToAbsl(name_space));
  return it == calibrations_.end() ? nullptr : it->second;
}

void DefenseState::SetCalibration(std::string_view name_space,
                                  std::shared_ptr<const NamespaceCalibration> calibration) {
  std::unique_lock lock(mu_);
  calibrations_[ToAbsl(name_space)] = std::move(calibration);
}

}  // namespace bulwark
