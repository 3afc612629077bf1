#include <absl/strings/str_format.h>

#include "detect/char_ngram_profile.h"
#include "detect/detectors.h"

namespace bulwark {
namespace {

class MemsadPlusDetector final : public WriteDetector {
 public:
  std::string_view name() const override { return "memsad_plus"; }

  DetectorVerdict Evaluate(const WriteCandidate& c, const NamespaceState& state) const override {
    DetectorVerdict v{.by = this};
    const NamespaceCalibration* cal = state.calibration;
    if (cal == nullptr || !cal->baseline || !cal->memsad_plus_threshold) return v;
    v.calibrated = true;
    v.score = cal->baseline->JensenShannon(c.text);
    v.threshold = *cal->memsad_plus_threshold;
    v.flagged = v.score > v.threshold;
    return v;
  }

  std::string Reason(const DetectorVerdict& v) const override {
    return absl::StrFormat(
        "memsad_plus: character trigram divergence from the namespace's benign text %.3f exceeds %.3f", v.score,
        v.threshold);
  }

  nlohmann::json Detail(const DetectorVerdict& v) const override {
    if (!v.calibrated) {
      return {{"status", "uncalibrated: no benign baseline for this namespace (run bulwark calibrate)"}};
    }
    return nlohmann::json::object();
  }
};

}  // namespace

std::unique_ptr<WriteDetector> MakeMemsadPlusDetector() { return std::make_unique<MemsadPlusDetector>(); }

}  // namespace bulwark
