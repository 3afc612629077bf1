#include <absl/strings/str_format.h>

#include "detect/calibration.h"
#include "detect/detectors.h"

namespace bulwark {
namespace {

class ProactiveDetector final : public WriteDetector {
 public:
  ProactiveDetector(std::vector<std::vector<float>> probes, double uncalibrated_tau)
      : probes_(probes.size()),
        centroid_(ProbeCentroid(probes, probes.empty() ? 0 : probes.front().size())),
        uncalibrated_tau_(uncalibrated_tau) {}
  std::string_view name() const override { return "proactive"; }

  DetectorVerdict Evaluate(const WriteCandidate& c, const NamespaceState& state) const override {
    DetectorVerdict v{.by = this};
    v.calibrated = state.calibration != nullptr && state.calibration->proactive_tau.has_value();
    v.threshold = v.calibrated ? *state.calibration->proactive_tau : uncalibrated_tau_;
    v.score = probes_ == 0 ? 0 : ProactiveScore(c.embedding, centroid_);
    v.flagged = v.score > v.threshold;
    return v;
  }

  std::string Reason(const DetectorVerdict& v) const override {
    return absl::StrFormat(
        "proactive: mean similarity %.3f to %d generic probe queries exceeds %.3f (a broad anchor that would "
        "be "
        "retrieved for many unrelated queries)",
        v.score, probes_, v.threshold);
  }

  nlohmann::json Detail(const DetectorVerdict&) const override { return {{"probes", probes_}}; }

 private:
  size_t probes_;
  std::vector<float> centroid_;  // ProbeCentroid of the probes
  double uncalibrated_tau_;
};

}  // namespace

std::unique_ptr<WriteDetector> MakeProactiveDetector(std::vector<std::vector<float>> probe_embeddings,
                                                     double uncalibrated_tau) {
  return std::make_unique<ProactiveDetector>(std::move(probe_embeddings), uncalibrated_tau);
}

}  // namespace bulwark
