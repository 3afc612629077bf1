#include <absl/strings/str_format.h>

#include "detect/char_ngram_profile.h"
#include "detect/detectors.h"

namespace bulwark {
namespace {

// DetectorVerdict::values slots.
enum MemsadPlusSlot { kJsd, kExpectedJsd, kTrigrams };

// Scores the residual JSD(p_c || p_0) - E[JSD | n trigrams] (jsd_length_model.h).
class MemsadPlusDetector final : public WriteDetector {
 public:
  std::string_view name() const override { return "memsad_plus"; }

  DetectorVerdict Evaluate(const WriteCandidate& c, const NamespaceState& state) const override {
    DetectorVerdict v{.by = this};
    const NamespaceCalibration* cal = state.calibration;
    if (cal == nullptr || !cal->baseline || !cal->memsad_plus_threshold) return v;
    v.calibrated = true;
    size_t trigrams = 0;
    const double jsd = cal->baseline->JensenShannon(c.text, &trigrams);
    v.values[kJsd] = jsd;
    v.values[kExpectedJsd] = cal->memsad_plus_length.Expected(trigrams);
    v.values[kTrigrams] = static_cast<double>(trigrams);
    v.score = jsd - v.values[kExpectedJsd];
    v.threshold = *cal->memsad_plus_threshold;
    v.flagged = v.score > v.threshold;
    return v;
  }

  std::string Reason(const DetectorVerdict& v) const override {
    return absl::StrFormat(
        "memsad_plus: character trigram divergence from the namespace's benign text %.3f is %.3f above that "
        "of "
        "benign text of its length (%.3f), more than %.3f",
        v.values[kJsd], v.score, v.values[kExpectedJsd], v.threshold);
  }

  nlohmann::json Detail(const DetectorVerdict& v) const override {
    if (!v.calibrated) {
      return {{"status", "uncalibrated: no benign baseline for this namespace (run bulwark calibrate)"}};
    }
    return {{"jsd", v.values[kJsd]},
            {"expected_jsd", v.values[kExpectedJsd]},
            {"trigrams", static_cast<size_t>(v.values[kTrigrams])}};
  }
};

}  // namespace

std::unique_ptr<WriteDetector> MakeMemsadPlusDetector() { return std::make_unique<MemsadPlusDetector>(); }

}  // namespace bulwark
