// The memsad_plus detector (MemSAD paper Appendix R): its factory and calibration hook.
#include <absl/strings/str_format.h>

#include "core/status_macros.h"
#include "detect/calibration.h"
#include "detect/char_ngram_profile.h"
#include "detect/detectors.h"

namespace bulwark {
namespace {

// DetectorVerdict::values slots.
enum MemsadPlusSlot { kJsd, kExpectedJsd, kTrigrams };

// Scores the residual JSD(p_c || p_0) - E[JSD | n trigrams] (jsd_length_model.h).
class MemsadPlusDetector final : public WriteDetector {
 public:
  const DetectorDescriptor& descriptor() const override { return MemsadPlusDescriptor(); }

  DetectorVerdict Evaluate(const WriteCandidate& c, const NamespaceState& state) const override {
    DetectorVerdict v{.by = this};
    const MemsadPlusCalibration* cal =
        state.calibration ? state.calibration->Get<MemsadPlusCalibration>(MemsadPlusDescriptor()) : nullptr;
    if (cal == nullptr || !cal->baseline) return v;
    v.calibrated = true;
    size_t trigrams = 0;
    const double jsd = cal->baseline->JensenShannon(c.text, &trigrams);
    v.values[kJsd] = jsd;
    v.values[kExpectedJsd] = cal->length.Expected(trigrams);
    v.values[kTrigrams] = static_cast<double>(trigrams);
    v.score = jsd - v.values[kExpectedJsd];
    v.threshold = cal->threshold;
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

// Calibration: a pooled baseline of the whole reference set; each reference entry's JSD is taken
// against the baseline without it (leave one out), as a new benign write would see it. The length
// model is fitted on those JSDs and the threshold set on their residuals at the target FPR.
absl::StatusOr<CalibrationFit> FitMemsadPlus(const CalibrationInput& input, const WriteDetector*) {
  auto baseline = std::make_shared<CharNgramProfile>();
  for (const auto& t : input.reference_texts) baseline->Add(t);
  std::vector<double> jsd;
  std::vector<size_t> trigrams;
  for (const auto& t : input.reference_texts) {
    jsd.push_back(baseline->JensenShannonLeavingOut(t));
    trigrams.push_back(CharNgramProfile::TrigramCount(t));
  }
  MemsadPlusCalibration cal;
  cal.length = JsdLengthModel::Fit(trigrams, jsd);
  for (size_t i = 0; i < jsd.size(); ++i) jsd[i] = cal.length.Residual(jsd[i], trigrams[i]);
  cal.threshold = ThresholdAtFpr(jsd, input.target_fpr);
  cal.baseline = baseline;
  const double fpr = FractionAbove(jsd, cal.threshold);
  std::vector<uint8_t> flags = FlagsAbove(jsd, cal.threshold);
  return CalibrationFit{std::make_shared<FittedValue<MemsadPlusCalibration>>(std::move(cal)), fpr,
                        std::move(flags)};
}

// record["memsad_plus"] = {"threshold", "length_model"}; the baseline, with data, in
// record["baseline"] = {"texts", "counts"}.
void StoreMemsadPlus(const DetectorCalibration& fitted, bool with_data, nlohmann::json* record) {
  const auto& cal = static_cast<const FittedValue<MemsadPlusCalibration>&>(fitted).value;
  (*record)["memsad_plus"] = {{"threshold", cal.threshold}, {"length_model", cal.length.ToJson()}};
  if (with_data && cal.baseline) {
    (*record)["baseline"] = {{"texts", cal.baseline->texts()}, {"counts", cal.baseline->Serialize()}};
  }
}

absl::StatusOr<std::shared_ptr<const DetectorCalibration>> LoadMemsadPlus(const nlohmann::json& record) {
  MemsadPlusCalibration cal;
  const nlohmann::json& plus = record.at("memsad_plus");
  cal.threshold = plus.at("threshold").get<double>();
  // Absent in calibrations stored before the length correction: raw JSD (slope 0).
  if (plus.contains("length_model")) {
    cal.length.intercept = plus.at("length_model").at("intercept").get<double>();
    cal.length.slope = plus.at("length_model").at("slope").get<double>();
  }
  if (record.contains("baseline")) {
    BULWARK_ASSIGN_OR_RETURN(
        CharNgramProfile profile,
        CharNgramProfile::Deserialize(record.at("baseline").at("counts").get<std::string>(),
                                      record.at("baseline").at("texts").get<size_t>()));
    cal.baseline = std::make_shared<CharNgramProfile>(std::move(profile));
  }
  return std::make_shared<FittedValue<MemsadPlusCalibration>>(std::move(cal));
}

DetectorDescriptor MakeMemsadPlusDescriptor() {
  DetectorDescriptor d;
  d.name = "memsad_plus";  // needs a calibrated baseline; reports "uncalibrated" until then
  d.options = [](ConfigReader&) -> absl::StatusOr<nlohmann::json> { return nlohmann::json::object(); };
  d.create = [](const nlohmann::json&,
                const GateResources&) -> absl::StatusOr<std::unique_ptr<WriteDetector>> {
    return MakeMemsadPlusDetector();
  };
  d.calibration = CalibrationHook{.fit = FitMemsadPlus,
                                  .store = StoreMemsadPlus,
                                  .load = LoadMemsadPlus,
                                  .describe = [](const nlohmann::json& summary) {
                                    return absl::StrFormat("  memsad_plus: JSD threshold %.4f\n",
                                                           summary["threshold"].get<double>());
                                  }};
  return d;
}

}  // namespace

std::unique_ptr<WriteDetector> MakeMemsadPlusDetector() { return std::make_unique<MemsadPlusDetector>(); }

const DetectorDescriptor& MemsadPlusDescriptor() {
  static const DetectorDescriptor* descriptor = new DetectorDescriptor(MakeMemsadPlusDescriptor());
  return *descriptor;
}

}  // namespace bulwark
