#include <absl/strings/str_format.h>

#include "detect/detectors.h"

namespace bulwark {
namespace {

// DetectorVerdict::values slots.
enum WatermarkSlot { kN, kGreen, kExpected, kPValue };

class WatermarkDetector final : public WriteDetector {
 public:
  WatermarkDetector(const WatermarkScheme* scheme, double z_threshold)
      : scheme_(scheme), z_threshold_(z_threshold) {}
  std::string_view name() const override { return "watermark"; }

  DetectorVerdict Evaluate(const WriteCandidate& c, const NamespaceState&) const override {
    const WatermarkScore s = scheme_->Score(c.text);
    DetectorVerdict v{.by = this, .score = s.z, .threshold = z_threshold_, .calibrated = true};
    v.flagged = !WatermarkScheme::Verifies(s, z_threshold_);
    v.values[kN] = static_cast<double>(s.n);
    v.values[kGreen] = static_cast<double>(s.green);
    v.values[kExpected] = s.expected;
    v.values[kPValue] = s.p_value;
    return v;
  }

  std::string Reason(const DetectorVerdict& v) const override {
    return absl::StrFormat(
        "watermark: z = %.2f is below %.2f (%d of %d %s green, p = %.3g): the text was not marked by a "
        "legitimate "
        "writer",
        v.score, v.threshold, static_cast<int>(v.values[kGreen]), static_cast<int>(v.values[kN]),
        scheme_->unit(), v.values[kPValue]);
  }

  nlohmann::json Detail(const DetectorVerdict& v) const override {
    nlohmann::json detail(nlohmann::json::value_t::object);
    detail["n"] = static_cast<size_t>(v.values[kN]);
    detail["green"] = static_cast<size_t>(v.values[kGreen]);
    detail["expected_green"] = v.values[kExpected];
    detail["p_value"] = v.values[kPValue];
    detail["gamma"] = scheme_->gamma();
    detail["scheme"] = scheme_->name();
    return detail;
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
