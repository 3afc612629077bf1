#include <absl/strings/str_format.h>

#include "detect/detectors.h"

namespace bulwark {
namespace {

// DetectorVerdict::values slots.
enum Slot { kN, kGreen };

class WatermarkDetector final : public WriteDetector {
 public:
  WatermarkDetector(const WatermarkScheme* scheme, double z_threshold) : scheme_(scheme), z_threshold_(z_threshold) {}
  std::string_view name() const override { return "watermark"; }

  DetectorVerdict Evaluate(const WriteCandidate& c, const NamespaceState&) const override {
    const WatermarkScore s = scheme_->Score(c.text);
    DetectorVerdict v{.by = this, .score = s.z, .threshold = z_threshold_, .calibrated = true};
    v.flagged = s.z < z_threshold_;
    v.values[kN] = static_cast<double>(s.n);
    v.values[kGreen] = static_cast<double>(s.green);
    return v;
  }

  std::string Reason(const DetectorVerdict& v) const override {
    return absl::StrFormat(
        "watermark: z = %.2f is below %.2f (%d of %d characters green): the text was not marked by a legitimate "
        "writer",
        v.score, v.threshold, static_cast<int>(v.values[kGreen]), static_cast<int>(v.values[kN]));
  }

  nlohmann::json Detail(const DetectorVerdict& v) const override {
    return {{"n", static_cast<size_t>(v.values[kN])},
            {"green", static_cast<size_t>(v.values[kGreen])},
            {"gamma", scheme_->gamma()}};
  }

 private:
  const WatermarkScheme* scheme_;
  double z_threshold_;
};

}  // namespace

std::unique_ptr<WriteDetector> MakeWatermarkDetector(const WatermarkScheme* scheme, double z_threshold) {
  return std::make_unique<WatermarkDetector>(scheme, z_threshold);
}

}  // namespace bulwark
