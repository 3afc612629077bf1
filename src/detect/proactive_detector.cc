#include <absl/strings/str_format.h>

#include "detect/calibration.h"
#include "detect/detectors.h"

namespace bulwark {
namespace {

class ProactiveDetector final : public WriteDetector {
 public:
  ProactiveDetector(const DefenseState* state, std::vector<std::vector<float>> probes, double uncalibrated_tau)
      : state_(state), probes_(std::move(probes)), uncalibrated_tau_(uncalibrated_tau) {}
  std::string_view name() const override { return "proactive"; }

  DetectorVerdict Evaluate(const WriteCandidate& c) const override {
    DetectorVerdict v{.detector = "proactive"};
    const auto cal = state_->Calibration(c.name_space);
    v.calibrated = cal && cal->proactive_tau;
    v.threshold = v.calibrated ? *cal->proactive_tau : uncalibrated_tau_;
    v.score = ProactiveScore(c.embedding, probes_);
    v.flagged = v.score > v.threshold;
    v.detail = {{"probes", probes_.size()}};
    if (v.flagged) {
      v.reason = absl::StrFormat(
          "proactive: mean similarity %.3f to %d generic probe queries exceeds %.3f (a broad anchor that would be "
          "retrieved for many unrelated queries)",
          v.score, probes_.size(), v.threshold);
    }
    return v;
  }

 private:
  const DefenseState* state_;
  std::vector<std::vector<float>> probes_;
  double uncalibrated_tau_;
};

}  // namespace

std::unique_ptr<WriteDetector> MakeProactiveDetector(const DefenseState* state,
                                                     std::vector<std::vector<float>> probe_embeddings,
                                                     double uncalibrated_tau) {
  return std::make_unique<ProactiveDetector>(state, std::move(probe_embeddings), uncalibrated_tau);
}

}  // namespace bulwark
