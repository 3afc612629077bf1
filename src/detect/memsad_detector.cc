#include <absl/strings/str_format.h>

#include <cmath>

#include "detect/detectors.h"
#include "detect/memsad.h"

namespace bulwark {
namespace {

// DetectorVerdict::values slots.
enum MemsadSlot { kMode, kSMax, kSMean, kSComb, kHistorySize, kMu, kSigma, kKappa, kEta, kSBar, kHasVictim };

class MemsadDetector final : public WriteDetector {
 public:
  explicit MemsadDetector(WriteGateConfig::Memsad config) : config_(config) {}
  std::string_view name() const override { return "memsad"; }

  DetectorVerdict Evaluate(const WriteCandidate& c, const NamespaceState& state) const override {
    DetectorVerdict v{.by = this};
    const MemsadCalibration* cal =
        state.calibration && state.calibration->memsad ? &*state.calibration->memsad : nullptr;
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

  WriteGateConfig::Memsad config_;
};

}  // namespace

std::unique_ptr<WriteDetector> MakeMemsadDetector(const WriteGateConfig::Memsad& config) {
  return std::make_unique<MemsadDetector>(config);
}

}  // namespace bulwark
