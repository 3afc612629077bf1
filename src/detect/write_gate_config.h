// Configuration of the write gate: which detectors run and their options. Read from the store
// directory's gate.json (doc/write_gate.md) or set in StoreOptions; every field optional, unknown
// fields rejected. The sections are those of the registered detectors (detector_registry.h): each
// is {"enabled": bool, <the detector's options>}, read and validated by the detector's descriptor.
// Per-namespace calibration (NamespaceCalibration) overrides the pre-calibration defaults once
// `bulwark calibrate` has run.
#pragma once

#include <absl/status/statusor.h>

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "detect/detector_registry.h"

namespace bulwark {

struct WriteGateConfig {
  struct Detector {
    const DetectorDescriptor* descriptor = nullptr;
    bool enabled = true;
    nlohmann::json options;  // normalized by descriptor->options: every option with its value
  };
  // One per detector registered when FromJson ran, in registry order. Make configurations with
  // FromJson (FromJson(nullptr): the defaults); a default-constructed one has no sections, so a
  // gate made from it runs no detector (its options read as the detectors' defaults).
  std::vector<Detector> detectors;
  double target_fpr = 0.01;  // calibration default

  // InvalidArgument "gate config: ..." for a value of the wrong type or out of range, or an
  // unknown field (a section no registered detector has, or an option its detector lacks).
  static absl::StatusOr<WriteGateConfig> FromJson(const nlohmann::json& json);
  // Every section with every option, and target_fpr: FromJson(ToJson()) is this configuration.
  nlohmann::json ToJson() const;

  // The detector's section; nullptr when it was not registered when this configuration was read.
  const Detector* Find(const DetectorDescriptor& descriptor) const;
  // Its normalized options (null when Find is nullptr: the detector's defaults).
  const nlohmann::json& Options(const DetectorDescriptor& descriptor) const;
  bool Enabled(const DetectorDescriptor& descriptor) const;
};

}  // namespace bulwark
