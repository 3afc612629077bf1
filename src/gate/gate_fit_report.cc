// ROC summaries of the gate's scores (see gate_fit_report.h).
#include "gate/gate_fit_report.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace bulwark {
namespace {

constexpr double kUndefinedRate = std::numeric_limits<double>::quiet_NaN();

double FractionAbove(std::span<const double> scores, double threshold) {
  if (scores.empty()) return kUndefinedRate;
  size_t n = 0;
  for (double s : scores) n += s > threshold ? 1 : 0;
  return static_cast<double>(n) / static_cast<double>(scores.size());
}

}  // namespace

double Auroc(std::span<const double> benign, std::span<const double> triggered) {
  if (benign.empty() || triggered.empty()) return kUndefinedRate;
  std::vector<double> b(benign.begin(), benign.end());
  std::sort(b.begin(), b.end());
  double wins = 0;
  for (double t : triggered) {
    const auto lo = std::lower_bound(b.begin(), b.end(), t);
    const auto hi = std::upper_bound(b.begin(), b.end(), t);
    wins += static_cast<double>(lo - b.begin()) + 0.5 * static_cast<double>(hi - lo);
  }
  return wins / (static_cast<double>(b.size()) * static_cast<double>(triggered.size()));
}

double FprAtTpr(std::span<const double> benign, std::span<const double> triggered, double tpr) {
  if (benign.empty() || triggered.empty()) return kUndefinedRate;
  std::vector<double> t(triggered.begin(), triggered.end());
  std::sort(t.begin(), t.end(), std::greater<>());
  // Flag at least ceil(tpr * n) triggered scores: the threshold is the ceil(tpr * n)-th highest.
  const size_t needed = std::clamp<size_t>(
      static_cast<size_t>(std::ceil(tpr * static_cast<double>(t.size()) - 1e-9)), 1, t.size());
  const double threshold = t[needed - 1];
  size_t flagged = 0;
  for (double s : benign) flagged += s >= threshold ? 1 : 0;
  return static_cast<double>(flagged) / static_cast<double>(benign.size());
}

GateFitReport MakeGateFitReport(const GateModel& model,
                                const std::array<std::vector<double>, kGateScoreCount>& benign,
                                const std::array<std::vector<double>, kGateScoreCount>& triggered,
                                bool out_of_fold) {
  GateFitReport report;
  report.benign = static_cast<int>(benign[0].size());
  report.triggered = static_cast<int>(triggered[0].size());
  report.out_of_fold = out_of_fold;
  for (GateScore g : {GateScore::kCentroid, GateScore::kMahalanobis, GateScore::kLda}) {
    if (g == GateScore::kLda && !model.has_lda()) continue;
    const int k = static_cast<int>(g);
    ScoreSeparation s{.score = g};
    s.auroc = Auroc(benign[k], triggered[k]);
    s.fpr_at_95_tpr = FprAtTpr(benign[k], triggered[k], 0.95);
    s.fpr_at_99_tpr = FprAtTpr(benign[k], triggered[k], 0.99);
    s.fpr_at_threshold = FractionAbove(benign[k], model.threshold(g));
    s.tpr_at_threshold = FractionAbove(triggered[k], model.threshold(g));
    report.scores.push_back(s);
  }
  return report;
}

GateFitReport EvaluateGate(const GateModel& model, std::span<const std::vector<float>> benign,
                           std::span<const std::vector<float>> triggered) {
  std::array<std::vector<double>, kGateScoreCount> b, t;
  for (const auto& z : benign) {
    const GateScores s = model.Score(z);
    for (int k = 0; k < kGateScoreCount; ++k) b[k].push_back(s.value[k]);
  }
  for (const auto& z : triggered) {
    const GateScores s = model.Score(z);
    for (int k = 0; k < kGateScoreCount; ++k) t[k].push_back(s.value[k]);
  }
  return MakeGateFitReport(model, b, t, /*out_of_fold=*/false);
}

nlohmann::json ToJson(const GateFitReport& report) {
  nlohmann::json scores = nlohmann::json::array();
  auto number = [](double x) { return std::isnan(x) ? nlohmann::json(nullptr) : nlohmann::json(x); };
  for (const ScoreSeparation& s : report.scores) {
    scores.push_back({{"score", ToString(s.score)},
                      {"auroc", number(s.auroc)},
                      {"fpr_at_95_tpr", number(s.fpr_at_95_tpr)},
                      {"fpr_at_99_tpr", number(s.fpr_at_99_tpr)},
                      {"fpr_at_threshold", number(s.fpr_at_threshold)},
                      {"tpr_at_threshold", number(s.tpr_at_threshold)}});
  }
  return {{"benign", report.benign},
          {"triggered", report.triggered},
          {"out_of_fold", report.out_of_fold},
          {"scores", scores}};
}

}  // namespace bulwark
