#include <absl/strings/str_format.h>

#include "detect/detectors.h"
#include "detect/memsad.h"

namespace bulwark {
namespace {

class MemsadDetector final : public WriteDetector {
 public:
  MemsadDetector(const DefenseState* state, WriteGateConfig::Memsad config) : state_(state), config_(config) {}
  std::string_view name() const override { return "memsad"; }

  DetectorVerdict Evaluate(const WriteCandidate& c) const override {
    DetectorVerdict v{.detector = "memsad"};
    const auto calibration = state_->Calibration(c.name_space);
    const MemsadCalibration* cal = calibration && calibration->memsad ? &*calibration->memsad : nullptr;
    // Before calibration only a near-copy of a recent query is flagged: s_max against a fixed bound.
    const MemsadMode mode = cal ? cal->mode : MemsadMode::kMax;
    MemsadScores scores;
    std::vector<float> victim;  // q*, the history query c is most similar to
    if (const QueryHistory* history = state_->FindHistory(c.name_space)) {
      history->Read([&](const float* const* rows, size_t count) {
        scores = ScoreAgainstHistory(c.embedding, rows, count, history->dim());
        if (scores.argmax >= 0) victim.assign(rows[scores.argmax], rows[scores.argmax] + history->dim());
      });
    }
    v.score = scores.Get(mode);
    v.calibrated = cal != nullptr;
    v.threshold = cal ? cal->threshold() : config_.uncalibrated_max_threshold;
    v.flagged = scores.history_size > 0 && v.score > v.threshold;
    v.detail = {{"mode", ToString(mode)},
                {"s_max", scores.s_max},
                {"s_mean", scores.s_mean},
                {"s_comb", scores.s_comb},
                {"history_size", scores.history_size}};
    if (cal) {
      v.detail["mu"] = cal->mu;
      v.detail["sigma"] = cal->sigma;
      v.detail["kappa"] = cal->kappa;
      v.detail["eta"] = cal->eta;
      if (!victim.empty()) {
        const MemsadCertificate cert = CertifyDetection(scores.s_max, victim, calibration->reference, *cal);
        v.detail["certificate"] = {{"holds", cert.holds}, {"delta_s", cert.delta_s}, {"s_bar", cert.s_bar},
                                   {"radius", cert.radius}};
      }
    }
    if (v.flagged) {
      v.reason = absl::StrFormat(
          "memsad: similarity to recent queries %.3f (%s, max %.3f, mean %.3f over %d queries) exceeds %s %.3f",
          v.score, ToString(mode), scores.s_max, scores.s_mean, scores.history_size,
          cal ? "the calibrated threshold mu + kappa*sigma =" : "the uncalibrated default", v.threshold);
    }
    return v;
  }

 private:
  const DefenseState* state_;
  WriteGateConfig::Memsad config_;
};

}  // namespace

std::unique_ptr<WriteDetector> MakeMemsadDetector(const DefenseState* state, const WriteGateConfig::Memsad& config) {
  return std::make_unique<MemsadDetector>(state, config);
}

}  // namespace bulwark
