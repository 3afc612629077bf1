#include "detect/detector_registry.h"

#include <algorithm>

namespace bulwark {

#define BULWARK_DETECTOR(descriptor) const DetectorDescriptor& descriptor();
#include "detect/detector_list.inc"
#undef BULWARK_DETECTOR

absl::Status ConfigReader::Check(bool ok, const std::string& what) const {
  return ok ? absl::OkStatus() : absl::InvalidArgumentError(absl::StrCat("gate config: ", path_, what));
}

absl::Status ConfigReader::Finish() const {
  for (const auto& [key, value] : object_.items()) {
    if (std::find(seen_.begin(), seen_.end(), key) == seen_.end()) {
      return absl::InvalidArgumentError(absl::StrCat("gate config: unknown field ", path_, key));
    }
  }
  return absl::OkStatus();
}

DetectorRegistry::DetectorRegistry() {
  descriptors_ = {
#define BULWARK_DETECTOR(descriptor) &descriptor(),
#include <absl/synchronization/mutex.h>

#include "detect/detector_list.inc"
#undef BULWARK_DETECTOR
  };
}

DetectorRegistry& DetectorRegistry::Global() {
  static DetectorRegistry* registry = new DetectorRegistry();
  return *registry;
}

std::vector<const DetectorDescriptor*> DetectorRegistry::All() const {
  absl::MutexLock lock(&mu_);
  return descriptors_;
}

const DetectorDescriptor* DetectorRegistry::Find(std::string_view name) const {
  absl::MutexLock lock(&mu_);
  for (const DetectorDescriptor* d : descriptors_) {
    if (d->name == name) return d;
  }
  return nullptr;
}

absl::Status DetectorRegistry::Register(const DetectorDescriptor* descriptor) {
  if (descriptor == nullptr || descriptor->name.empty() || !descriptor->options || !descriptor->create) {
    return absl::InvalidArgumentError("detector registry: a detector needs a name, options and a factory");
  }
  if (descriptor->name == "target_fpr") {
    return absl::InvalidArgumentError(
        "detector registry: \"target_fpr\" is the gate configuration's own key");
  }
  if (descriptor->calibration &&
      !(descriptor->calibration->fit && descriptor->calibration->store && descriptor->calibration->load)) {
    return absl::InvalidArgumentError(absl::StrCat("detector registry: ", descriptor->name,
                                                   "'s calibration hook needs fit, store and load"));
  }
  absl::MutexLock lock(&mu_);
  for (const DetectorDescriptor* d : descriptors_) {
    if (d->name == descriptor->name) {
      return absl::AlreadyExistsError(
          absl::StrCat("detector registry: ", descriptor->name, " is registered"));
    }
  }
  descriptors_.push_back(descriptor);
  return absl::OkStatus();
}

void DetectorRegistry::Unregister(const DetectorDescriptor* descriptor) {
  absl::MutexLock lock(&mu_);
  descriptors_.erase(std::remove(descriptors_.begin(), descriptors_.end(), descriptor), descriptors_.end());
}

DetectorRegistration::DetectorRegistration(const DetectorDescriptor* descriptor)
    : descriptor_(descriptor), status_(DetectorRegistry::Global().Register(descriptor)) {}

DetectorRegistration::~DetectorRegistration() {
  if (status_.ok()) DetectorRegistry::Global().Unregister(descriptor_);
}

}  // namespace bulwark
