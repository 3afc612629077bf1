#include <absl/strings/str_format.h>

#include "detect/detectors.h"

namespace bulwark {
namespace {

class WatermarkDetector final : public WriteDetector {
 public:
  WatermarkDetector(const WatermarkScheme* scheme, double z_threshold) : scheme_(scheme), z_threshold_(z_threshold) {}
  std::string_view name() const override { return "watermark"; }

  DetectorVerdict Evaluate(const WriteCandidate& c) const override {
    const WatermarkScore s = scheme_->Score(c.text);
    DetectorVerdict v{.detector = "watermark", .score = s.z, .threshold = z_threshold_, .calibrated = true};
    v.flagged = s.z < z_threshold_;
    v.detail = {{"n", s.n}, {"green", s.green}, {"gamma", scheme_->gamma()}};
    if (v.flagged) {
      v.reason = absl::StrFormat(
          "watermark: z = %.2f is below %.2f (%d of %d characters green): the text was not marked by a legitimate "
          "writer",
          s.z, z_threshold_, s.green, s.n);
    }
    return v;
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
