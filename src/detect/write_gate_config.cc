#include "detect/write_gate_config.h"

#include <absl/strings/str_cat.h>

#include "core/status_macros.h"

namespace bulwark {

absl::StatusOr<WriteGateConfig> WriteGateConfig::FromJson(const nlohmann::json& json) {
  static const nlohmann::json kEmpty = nlohmann::json::object();
  const nlohmann::json& root = json.is_null() ? kEmpty : json;
  if (!root.is_object()) return absl::InvalidArgumentError("gate config must be a JSON object");
  WriteGateConfig c;
  ConfigReader reader(root, "");
  for (const DetectorDescriptor* d : DetectorRegistry::Global().All()) {
    const auto it = root.find(d->name);
    if (it != root.end() && !it->is_object()) {
      return absl::InvalidArgumentError(absl::StrCat("gate config: ", d->name, " must be an object"));
    }
    nlohmann::json read_as_a_whole;  // marks the section as known; its keys are read below
    BULWARK_RETURN_IF_ERROR(reader.Get(d->name.c_str(), &read_as_a_whole));
    Detector& detector = c.detectors.emplace_back();
    detector.descriptor = d;
    detector.enabled = d->enabled_by_default;
    const nlohmann::json& section = it == root.end() ? kEmpty : *it;
    ConfigReader options(section, d->name + ".");
    BULWARK_RETURN_IF_ERROR(options.Get("enabled", &detector.enabled));
    BULWARK_ASSIGN_OR_RETURN(detector.options, d->options(options));
    BULWARK_RETURN_IF_ERROR(options.Finish());
  }
  BULWARK_RETURN_IF_ERROR(reader.Get("target_fpr", &c.target_fpr));
  BULWARK_RETURN_IF_ERROR(reader.Finish());
  BULWARK_RETURN_IF_ERROR(
      reader.Check(c.target_fpr >= 0 && c.target_fpr < 1, "target_fpr must be in [0, 1)"));
  return c;
}

nlohmann::json WriteGateConfig::ToJson() const {
  nlohmann::json j(nlohmann::json::value_t::object);
  for (const Detector& d : detectors) {
    nlohmann::json section = d.options.is_object() ? d.options : nlohmann::json::object();
    section["enabled"] = d.enabled;
    j[d.descriptor->name] = std::move(section);
  }
  j["target_fpr"] = target_fpr;
  return j;
}

const WriteGateConfig::Detector* WriteGateConfig::Find(const DetectorDescriptor& descriptor) const {
  for (const Detector& d : detectors) {
    if (d.descriptor == &descriptor) return &d;
  }
  return nullptr;
}

const nlohmann::json& WriteGateConfig::Options(const DetectorDescriptor& descriptor) const {
  static const nlohmann::json kNull;
  const Detector* d = Find(descriptor);
  return d ? d->options : kNull;
}

bool WriteGateConfig::Enabled(const DetectorDescriptor& descriptor) const {
  const Detector* d = Find(descriptor);
  return d ? d->enabled : descriptor.enabled_by_default;
}

}  // namespace bulwark
