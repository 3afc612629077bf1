// The proactive detector (MemSAD App. C): its options, factory and calibration hook.
#include <absl/strings/str_format.h>

#include "bulwark/embedder.h"
#include "core/status_macros.h"
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
  const DetectorDescriptor& descriptor() const override { return ProactiveDescriptor(); }

  DetectorVerdict Evaluate(const WriteCandidate& c, const NamespaceState& state) const override {
    DetectorVerdict v{.by = this};
    const double* tau = state.calibration ? state.calibration->Get<double>(ProactiveDescriptor()) : nullptr;
    v.calibrated = tau != nullptr;
    v.threshold = v.calibrated ? *tau : uncalibrated_tau_;
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

  const std::vector<float>& centroid() const { return centroid_; }

 private:
  size_t probes_;
  std::vector<float> centroid_;  // ProbeCentroid of the probes
  double uncalibrated_tau_;
};

// 16 probe queries over 8 subtopics of a personal assistant's memory (MemSAD App. C).
const std::vector<std::string>& DefaultProbes() {
  static const std::vector<std::string> probes = {
      // schedule and calendar
      "what is on my calendar this week",
      "when is my next meeting",
      // tasks and reminders
      "what do I need to do today",
      "remind me about my pending tasks",
      // preferences
      "what are my preferences",
      "what do I like and dislike",
      // people and contacts
      "who should I contact about this",
      "what do you know about my colleagues",
      // documents and files
      "where is the document I need",
      "find the file we discussed",
      // accounts and configuration
      "what are my account settings",
      "how is my system configured",
      // facts and knowledge
      "what should I know about this topic",
      "tell me the important facts",
      // past conversations
      "what did we talk about last time",
      "summarize our previous conversations",
  };
  return probes;
}

struct ProactiveOptions {
  std::vector<std::string> probes;  // empty: the 16 default probes (DefaultProbes())
  double uncalibrated_tau = 0.35;
};

absl::Status ReadProactiveOptions(ConfigReader& r, ProactiveOptions* o) {
  BULWARK_RETURN_IF_ERROR(r.Get("probes", &o->probes));
  BULWARK_RETURN_IF_ERROR(r.Get("uncalibrated_tau", &o->uncalibrated_tau));
  return r.Check(o->probes.size() <= 1000, "probes: at most 1000");
}

// Calibration: tau at the target FPR of the reference entries' scores against the gate's probes
// (or, without a gate instance, input.probes; neither: not calibrated).
absl::StatusOr<CalibrationFit> FitProactive(const CalibrationInput& input, const WriteDetector* instance) {
  std::vector<float> centroid;
  if (instance != nullptr) {
    centroid = static_cast<const ProactiveDetector*>(instance)->centroid();
  } else if (!input.probes.empty()) {
    centroid = ProbeCentroid(input.probes, input.reference_embeddings.front().size());
  } else {
    return CalibrationFit{};
  }
  std::vector<double> scores;
  for (const auto& e : input.reference_embeddings) scores.push_back(ProactiveScore(e, centroid));
  const double tau = ThresholdAtFpr(scores, input.target_fpr);
  return CalibrationFit{std::make_shared<FittedValue<double>>(tau), FractionAbove(scores, tau),
                        FlagsAbove(scores, tau)};
}

DetectorDescriptor MakeProactiveDescriptor() {
  DetectorDescriptor d;
  d.name = "proactive";
  d.options = [](ConfigReader& section) -> absl::StatusOr<nlohmann::json> {
    ProactiveOptions o;
    BULWARK_RETURN_IF_ERROR(ReadProactiveOptions(section, &o));
    return nlohmann::json{{"probes", o.probes}, {"uncalibrated_tau", o.uncalibrated_tau}};
  };
  d.create = [](const nlohmann::json& options,
                const GateResources& resources) -> absl::StatusOr<std::unique_ptr<WriteDetector>> {
    BULWARK_ASSIGN_OR_RETURN(const ProactiveOptions o, ParseDetectorOptions<ProactiveOptions>(
                                                           options, "proactive", ReadProactiveOptions));
    BULWARK_ASSIGN_OR_RETURN(std::vector<std::vector<float>> probes,
                             resources.embedder.EmbedBatch(o.probes.empty() ? DefaultProbes() : o.probes));
    return std::make_unique<ProactiveDetector>(std::move(probes), o.uncalibrated_tau);
  };
  d.calibration = CalibrationHook{
      .fit = FitProactive,
      .store =
          [](const DetectorCalibration& fitted, bool, nlohmann::json* record) {
            (*record)["proactive"] = {{"tau", static_cast<const FittedValue<double>&>(fitted).value}};
          },
      .load = [](const nlohmann::json& record) -> absl::StatusOr<std::shared_ptr<const DetectorCalibration>> {
        return std::make_shared<FittedValue<double>>(record.at("proactive").at("tau").get<double>());
      },
      .describe =
          [](const nlohmann::json& summary) {
            return absl::StrFormat("  proactive: tau %.4f\n", summary["tau"].get<double>());
          }};
  return d;
}

}  // namespace

const DetectorDescriptor& ProactiveDescriptor() {
  static const DetectorDescriptor* descriptor = new DetectorDescriptor(MakeProactiveDescriptor());
  return *descriptor;
}

}  // namespace bulwark
