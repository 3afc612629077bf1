// The watermark detector (DESIGN 4.5): its options and factory. The scheme it verifies is the
// gate's (WriteGate::watermark()), built from these options and the store's watermark key.
#include <absl/strings/str_cat.h>
#include <absl/strings/str_format.h>

#include <cmath>

#include "core/status_macros.h"
#include "detect/detectors.h"

namespace bulwark {
namespace {

// DetectorVerdict::values slots.
enum WatermarkSlot { kN, kGreen, kExpected, kPValue };

class WatermarkDetector final : public WriteDetector {
 public:
  WatermarkDetector(const WatermarkScheme* scheme, double z_threshold)
      : scheme_(scheme), z_threshold_(z_threshold) {}
  const DetectorDescriptor& descriptor() const override { return WatermarkDescriptor(); }

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

absl::Status ReadWatermarkOptions(ConfigReader& r, WatermarkOptions* o) {
  std::string scheme = std::string(ToString(o->scheme));
  for (auto s :
       {r.Get("scheme", &scheme), r.Get("gamma", &o->gamma), r.Get("z_threshold", &o->z_threshold)}) {
    BULWARK_RETURN_IF_ERROR(s);
  }
  auto parsed = ParseWatermarkKind(scheme);
  BULWARK_RETURN_IF_ERROR(r.Check(
      parsed.ok(), absl::StrCat("scheme must be \"lexical\" or \"character\", not \"", scheme, "\"")));
  o->scheme = *parsed;
  BULWARK_RETURN_IF_ERROR(r.Check(o->gamma > 0 && o->gamma < 1, "gamma must be in (0, 1)"));
  return r.Check(o->scheme != WatermarkKind::kCharacter ||
                     (std::lround(o->gamma * 95) >= 1 && std::lround(o->gamma * 95) <= 94),
                 "gamma: the character scheme needs round(gamma * 95) in 1 to 94");
}

DetectorDescriptor MakeWatermarkDescriptor() {
  DetectorDescriptor d;
  d.name = "watermark";
  d.enabled_by_default = false;  // only for deployments whose writers all mark their text
  d.flags = FlagSide::kBelow;    // unmarked text has a low z-score
  d.needs_writer_marks = true;
  d.options = [](ConfigReader& section) -> absl::StatusOr<nlohmann::json> {
    WatermarkOptions o;
    BULWARK_RETURN_IF_ERROR(ReadWatermarkOptions(section, &o));
    return nlohmann::json{{"scheme", ToString(o.scheme)}, {"gamma", o.gamma}, {"z_threshold", o.z_threshold}};
  };
  d.create = [](const nlohmann::json& options,
                const GateResources& resources) -> absl::StatusOr<std::unique_ptr<WriteDetector>> {
    BULWARK_ASSIGN_OR_RETURN(const WatermarkOptions o, ParseWatermarkOptions(options));
    return std::make_unique<WatermarkDetector>(&resources.watermark, o.z_threshold);
  };
  return d;
}

}  // namespace

absl::StatusOr<WatermarkOptions> ParseWatermarkOptions(const nlohmann::json& options) {
  return ParseDetectorOptions<WatermarkOptions>(options, "watermark", ReadWatermarkOptions);
}

const DetectorDescriptor& WatermarkDescriptor() {
  static const DetectorDescriptor* descriptor = new DetectorDescriptor(MakeWatermarkDescriptor());
  return *descriptor;
}

}  // namespace bulwark
