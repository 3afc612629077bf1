#include <absl/strings/str_format.h>

#include "detect/char_ngram_profile.h"
#include "detect/detectors.h"

namespace bulwark {
namespace {

class MemsadPlusDetector final : public WriteDetector {
 public:
  explicit MemsadPlusDetector(const DefenseState* state) : state_(state) {}
  std::string_view name() const override { return "memsad_plus"; }

  DetectorVerdict Evaluate(const WriteCandidate& c) const override {
    DetectorVerdict v{.detector = "memsad_plus"};
    const auto cal = state_->Calibration(c.name_space);
    if (!cal || !cal->baseline || !cal->memsad_plus_threshold) {
      v.detail = {{"status", "uncalibrated: no benign baseline for this namespace (run bulwark calibrate)"}};
      return v;
    }
    v.calibrated = true;
    v.score = cal->baseline->JensenShannon(CharNgramProfile::Distribution(c.text));
    v.threshold = *cal->memsad_plus_threshold;
    v.flagged = v.score > v.threshold;
    if (v.flagged) {
      v.reason = absl::StrFormat(
          "memsad_plus: character trigram divergence from the namespace's benign text %.3f exceeds %.3f", v.score,
          v.threshold);
    }
    return v;
  }

 private:
  const DefenseState* state_;
};

}  // namespace

std::unique_ptr<WriteDetector> MakeMemsadPlusDetector(const DefenseState* state) {
  return std::make_unique<MemsadPlusDetector>(state);
}

}  // namespace bulwark
