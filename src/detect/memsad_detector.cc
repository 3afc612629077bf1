// The memsad detector (MemSAD paper Sec. 4-5): its options, factory and calibration hook.
#include <absl/strings/str_cat.h>
#include <absl/strings/str_format.h>

#include <cmath>

#include "core/status_macros.h"
#include "detect/calibration.h"
#include "detect/detectors.h"
#include "detect/memsad.h"
#include "detect/query_history.h"

namespace bulwark {
namespace {

// DetectorVerdict::values slots.
enum MemsadSlot { kMode, kSMax, kSMean, kSComb, kHistorySize, kMu, kSigma, kKappa, kEta, kSBar, kHasVictim };

class MemsadDetector final : public WriteDetector {
 public:
  explicit MemsadDetector(MemsadOptions config) : config_(config) {}
  const DetectorDescriptor& descriptor() const override { return MemsadDescriptor(); }

  DetectorVerdict Evaluate(const WriteCandidate& c, const NamespaceState& state) const override {
    DetectorVerdict v{.by = this};
    const MemsadCalibration* cal =
        state.calibration ? state.calibration->Get<MemsadCalibration>(MemsadDescriptor()) : nullptr;
    // Before calibration only a near-copy of a recent query is flagged: s_max against a fixed bound.
    const MemsadMode mode = cal ? cal->mode : MemsadMode::kMax;
    MemsadScores scores;
    double s_bar = std::nan("");  // Lemma 8's benign ceiling for q*, the query c is most similar to
    if (state.history != nullptr) {
      state.history->Read([&](const QueryHistory::View& h) {
        scores = ScoreAgainstHistory(c.embedding, h);
        if (cal == nullptr || scores.argmax < 0) return;
        const auto victim = static_cast<size_t>(scores.argmax);
        // The history keeps each row's ceiling for the calibration's reference set; if it was
        // computed for another one (a calibration is being installed), scan the reference set.
        s_bar =
            h.reference() == &state.calibration->reference
                ? h.ceiling(victim)
                : BenignCeiling(std::span<const float>(h.row(victim), h.dim()), state.calibration->reference);
      });
    }
    v.score = scores.Get(mode);
    v.calibrated = cal != nullptr;
    v.threshold = cal ? cal->threshold() : config_.uncalibrated_max_threshold;
    v.flagged = scores.history_size > 0 && v.score > v.threshold;
    v.values[kMode] = static_cast<double>(mode);
    v.values[kSMax] = scores.s_max;
    v.values[kSMean] = scores.s_mean;
    v.values[kSComb] = scores.s_comb;
    v.values[kHistorySize] = static_cast<double>(scores.history_size);
    if (cal) {
      v.values[kMu] = cal->mu;
      v.values[kSigma] = cal->sigma;
      v.values[kKappa] = cal->kappa;
      v.values[kEta] = cal->eta;
      v.values[kSBar] = s_bar;
      v.values[kHasVictim] = scores.argmax >= 0;
    }
    return v;
  }

  std::string Reason(const DetectorVerdict& v) const override {
    return absl::StrFormat(
        "memsad: similarity to recent queries %.3f (%s, max %.3f, mean %.3f over %d queries) exceeds %s %.3f",
        v.score, ToString(ModeOf(v)), v.values[kSMax], v.values[kSMean],
        static_cast<int>(v.values[kHistorySize]),
        v.calibrated ? "the calibrated threshold mu + kappa*sigma =" : "the uncalibrated default",
        v.threshold);
  }

  nlohmann::json Detail(const DetectorVerdict& v) const override {
    nlohmann::json detail(nlohmann::json::value_t::object);
    detail["mode"] = ToString(ModeOf(v));
    detail["s_max"] = v.values[kSMax];
    detail["s_mean"] = v.values[kSMean];
    detail["s_comb"] = v.values[kSComb];
    detail["history_size"] = static_cast<size_t>(v.values[kHistorySize]);
    if (v.calibrated) {
      detail["mu"] = v.values[kMu];
      detail["sigma"] = v.values[kSigma];
      detail["kappa"] = v.values[kKappa];
      detail["eta"] = v.values[kEta];
      if (v.values[kHasVictim] != 0) {
        MemsadCalibration cal;
        cal.sigma = v.values[kSigma];
        cal.kappa = v.values[kKappa];
        cal.eta = v.values[kEta];
        const MemsadCertificate cert = CertifyDetection(v.values[kSMax], v.values[kSBar], cal);
        nlohmann::json& certificate = detail["certificate"] = nlohmann::json::object();
        certificate["holds"] = cert.holds;
        certificate["delta_s"] = cert.delta_s;
        certificate["s_bar"] = cert.s_bar;
        certificate["radius"] = cert.radius;
      }
    }
    return detail;
  }

 private:
  static MemsadMode ModeOf(const DetectorVerdict& v) {
    return static_cast<MemsadMode>(static_cast<int>(v.values[kMode]));
  }

  MemsadOptions config_;
};

absl::Status ReadMemsadOptions(ConfigReader& r, MemsadOptions* o) {
  std::string mode = std::string(ToString(o->mode));
  for (auto s :
       {r.Get("history_capacity", &o->history_capacity), r.Get("mode", &mode), r.Get("kappa", &o->kappa),
        r.Get("delta", &o->delta), r.Get("uncalibrated_max_threshold", &o->uncalibrated_max_threshold),
        r.Get("recalibrate_every", &o->recalibrate_every),
        r.Get("recalibrate_window", &o->recalibrate_window)}) {
    BULWARK_RETURN_IF_ERROR(s);
  }
  BULWARK_ASSIGN_OR_RETURN(o->mode, ParseMemsadMode(mode));
  for (auto s : {r.Check(o->history_capacity >= 1 && o->history_capacity <= 100'000,
                         "history_capacity must be 1 to 100000"),
                 r.Check(o->kappa > 0, "kappa must be positive"),
                 r.Check(o->delta > 0 && o->delta < 1, "delta must be in (0, 1)"),
                 r.Check(o->recalibrate_window >= 2, "recalibrate_window must be at least 2")}) {
    BULWARK_RETURN_IF_ERROR(s);
  }
  return absl::OkStatus();
}

nlohmann::json ToJson(const MemsadOptions& o) {
  return {{"history_capacity", o.history_capacity},
          {"mode", ToString(o.mode)},
          {"kappa", o.kappa},
          {"delta", o.delta},
          {"uncalibrated_max_threshold", o.uncalibrated_max_threshold},
          {"recalibrate_every", o.recalibrate_every},
          {"recalibrate_window", o.recalibrate_window}};
}

// Calibration (MemSAD Sec. 5, Theorem 11): mu and sigma of the reference entries' scores
// s(c; H) against the history, in the configured mode.
absl::StatusOr<CalibrationFit> FitMemsad(const CalibrationInput& input, const WriteDetector*) {
  const size_t dim = input.history.front().size();
  std::vector<const float*> rows;
  for (const auto& q : input.history) rows.push_back(q.data());
  std::vector<double> scores;
  for (const auto& e : input.reference_embeddings) {
    scores.push_back(ScoreAgainstHistory(e, rows.data(), rows.size(), dim).Get(input.mode));
  }
  BULWARK_ASSIGN_OR_RETURN(MemsadCalibration memsad,
                           CalibrateMemsad(scores, input.mode, input.kappa, input.delta));
  // Composite calibration (issue #14 point 5): when mu + kappa sigma flags more than the
  // detector's share of the target FPR, kappa is raised to the smallest value that does not (a
  // larger kappa keeps Lemma 8 and Theorem 11 as they are, for that kappa).
  if (FractionAbove(scores, memsad.threshold()) > input.target_fpr && memsad.sigma > 0) {
    const double at_fpr = ThresholdAtFpr(scores, input.target_fpr);
    BULWARK_ASSIGN_OR_RETURN(
        memsad,
        CalibrateMemsad(scores, input.mode, std::max(input.kappa, (at_fpr - memsad.mu) / memsad.sigma + 1e-9),
                        input.delta));
  }
  memsad.triggered = input.triggered;
  const double fpr = FractionAbove(scores, memsad.threshold());
  return CalibrationFit{std::make_shared<FittedValue<MemsadCalibration>>(memsad), fpr,
                        FlagsAbove(scores, memsad.threshold())};
}

std::string DescribeMemsad(const nlohmann::json& m) {
  return absl::StrCat(
      absl::StrFormat("  memsad (%s%s): mu %.4f  sigma %.4f  N %d  kappa %.2f  threshold %.4f\n",
                      m["mode"].get<std::string>(), m["triggered"].get<bool>() ? ", triggered" : "",
                      m["mu"].get<double>(), m["sigma"].get<double>(), m["n"].get<int>(),
                      m["kappa"].get<double>(), m["threshold"].get<double>()),
      absl::StrFormat("  Theorem 11 tolerance eta = %.4f (delta %.2f): |tau_N - tau*| <= eta w.p. >= %.2f\n",
                      m["eta"].get<double>(), m["delta"].get<double>(), 1 - m["delta"].get<double>()));
}

DetectorDescriptor MakeMemsadDescriptor() {
  DetectorDescriptor d;
  d.name = "memsad";
  d.options = [](ConfigReader& section) -> absl::StatusOr<nlohmann::json> {
    MemsadOptions o;
    BULWARK_RETURN_IF_ERROR(ReadMemsadOptions(section, &o));
    return ToJson(o);
  };
  d.create = [](const nlohmann::json& options,
                const GateResources&) -> absl::StatusOr<std::unique_ptr<WriteDetector>> {
    BULWARK_ASSIGN_OR_RETURN(const MemsadOptions o, ParseMemsadOptions(options));
    return std::make_unique<MemsadDetector>(o);
  };
  d.calibration = CalibrationHook{
      .fit = FitMemsad,
      .store =
          [](const DetectorCalibration& fitted, bool, nlohmann::json* record) {
            (*record)["memsad"] = static_cast<const FittedValue<MemsadCalibration>&>(fitted).value.ToJson();
          },
      .load = [](const nlohmann::json& record) -> absl::StatusOr<std::shared_ptr<const DetectorCalibration>> {
        BULWARK_ASSIGN_OR_RETURN(MemsadCalibration m, MemsadCalibration::FromJson(record.at("memsad")));
        return std::make_shared<FittedValue<MemsadCalibration>>(m);
      },
      .describe = DescribeMemsad};
  return d;
}

}  // namespace

absl::StatusOr<MemsadOptions> ParseMemsadOptions(const nlohmann::json& options) {
  return ParseDetectorOptions<MemsadOptions>(options, "memsad", ReadMemsadOptions);
}

const DetectorDescriptor& MemsadDescriptor() {
  static const DetectorDescriptor* descriptor = new DetectorDescriptor(MakeMemsadDescriptor());
  return *descriptor;
}

}  // namespace bulwark
