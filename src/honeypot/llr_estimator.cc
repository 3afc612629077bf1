// LLR estimators (see llr_estimator.h).
#include "honeypot/llr_estimator.h"

#include <absl/status/status.h>
#include <absl/strings/str_cat.h>

#include <algorithm>
#include <cmath>

namespace bulwark::honeypot {
namespace {

// p1(n) / p0(n) made non-decreasing in n by pooling adjacent violators (CountCalibration::Fit's
// `monotone`): blocks of consecutive counts with their summed masses; a block whose ratio is above
// its successor's is merged with it.
std::vector<double> PooledRatios(const std::vector<double>& p0, const std::vector<double>& p1) {
  struct Block {
    double p1, p0;
    size_t width;
  };
  std::vector<Block> blocks;
  for (size_t n = 0; n < p0.size(); ++n) {
    blocks.push_back({p1[n], p0[n], 1});
    while (blocks.size() > 1) {
      const Block& b = blocks.back();
      Block& a = blocks[blocks.size() - 2];
      if (a.p1 * b.p0 <= b.p1 * a.p0) break;  // a.p1 / a.p0 <= b.p1 / b.p0: in order
      a = {a.p1 + b.p1, a.p0 + b.p0, a.width + b.width};
      blocks.pop_back();
    }
  }
  std::vector<double> ratios;
  for (const Block& b : blocks) {
    double ratio = b.p1 / b.p0;
    // The first block's ratio is <= 1 exactly (both pmfs sum to 1 and the ratios increase): keep
    // the summation's rounding from giving a revisit +2e-16 when everything pools into one block.
    if (&b == &blocks.front()) ratio = std::min(ratio, 1.0);
    ratios.insert(ratios.end(), b.width, ratio);
  }
  return ratios;
}

}  // namespace

int Observation::pot_count() const {
  int n = 0;
  for (const RetrievedRow& row : top) n += row.is_pot ? 1 : 0;
  return n;
}

std::string_view ToString(LlrEstimatorKind kind) {
  switch (kind) {
    case LlrEstimatorKind::kCount:
      return "count";
    case LlrEstimatorKind::kSimilarity:
      return "similarity";
    case LlrEstimatorKind::kGlobalSimilarity:
      return "global_similarity";
    case LlrEstimatorKind::kCountCalibrated:
      return "count_calibrated";
  }
  return "count";
}

absl::StatusOr<LlrEstimatorKind> ParseLlrEstimatorKind(std::string_view name) {
  for (LlrEstimatorKind k : {LlrEstimatorKind::kCount, LlrEstimatorKind::kSimilarity,
                             LlrEstimatorKind::kGlobalSimilarity, LlrEstimatorKind::kCountCalibrated}) {
    if (name == ToString(k)) return k;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown LLR estimator '", std::string(name),
                   "' (count | similarity | global_similarity | count_calibrated)"));
}

absl::StatusOr<CountCalibration> CountCalibration::Fit(std::span<const int> benign_counts,
                                                       std::span<const int> attack_counts, int k_obs,
                                                       double cap, double unseen_weight, bool monotone) {
  if (k_obs < 1 || k_obs > 64)
    return absl::InvalidArgumentError("count calibration: k_obs must be in [1, 64]");
  if (!(unseen_weight >= 0 && unseen_weight < 1))
    return absl::InvalidArgumentError("count calibration: unseen_weight must be in [0, 1)");
  if (benign_counts.empty() || attack_counts.empty()) {
    return absl::InvalidArgumentError("count calibration: needs benign and attack observations");
  }
  auto pmf = [k_obs](std::span<const int> counts) -> absl::StatusOr<std::vector<double>> {
    std::vector<double> c(static_cast<size_t>(k_obs) + 1, 0.5);  // Jeffreys: + 1/2 per cell
    for (int n : counts) {
      if (n < 0 || n > k_obs)
        return absl::InvalidArgumentError("count calibration: a count is outside [0, k_obs]");
      c[static_cast<size_t>(n)] += 1;
    }
    const double total = static_cast<double>(counts.size()) + 0.5 * (k_obs + 1);
    for (double& x : c) x /= total;
    return c;
  };
  absl::StatusOr<std::vector<double>> p0 = pmf(benign_counts);
  if (!p0.ok()) return p0.status();
  absl::StatusOr<std::vector<double>> p1 = pmf(attack_counts);
  if (!p1.ok()) return p1.status();
  std::vector<double> ratio = monotone ? PooledRatios(*p0, *p1) : std::vector<double>(p0->size());
  if (!monotone)
    for (size_t n = 0; n < ratio.size(); ++n) ratio[n] = (*p1)[n] / (*p0)[n];
  CountCalibration cal;
  for (double r : ratio) {
    double l = std::log((1 - unseen_weight) * r + unseen_weight);
    if (cap > 0) l = std::clamp(l, -cap, cap);
    cal.llr.push_back(l);
  }
  return cal;
}

nlohmann::json CountCalibration::ToJson() const { return {{"llr", llr}}; }

absl::StatusOr<CountCalibration> CountCalibration::FromJson(const nlohmann::json& j) {
  const auto bad =
      absl::InvalidArgumentError("count calibration: expected {\"llr\": [2..65 finite numbers]}");
  if (!j.is_object() || j.size() != 1 || !j.contains("llr") || !j["llr"].is_array()) return bad;
  const nlohmann::json& a = j["llr"];
  if (a.size() < 2 || a.size() > 65) return bad;
  CountCalibration cal;
  for (const nlohmann::json& x : a) {
    if (!x.is_number() || !std::isfinite(x.get<double>())) return bad;
    cal.llr.push_back(x.get<double>());
  }
  return cal;
}

absl::Status ValidateLlrOptions(const LlrOptions& o) {
  if (!(o.count_epsilon > 0) || !std::isfinite(o.count_epsilon) || !(o.similarity_epsilon > 0) ||
      !std::isfinite(o.similarity_epsilon)) {
    return absl::InvalidArgumentError("LLR: epsilons must be finite and > 0");
  }
  if (o.global_k < 1 || o.global_k > 64)
    return absl::InvalidArgumentError("LLR: global_k must be in [1, 64]");
  if (o.kind == LlrEstimatorKind::kCountCalibrated && o.calibration.llr.size() < 2) {
    return absl::InvalidArgumentError("LLR: count_calibrated needs a calibration table");
  }
  return absl::OkStatus();
}

double CountLlr(int pots, int non_pots, double epsilon) {
  return std::log((pots + epsilon) / (non_pots + epsilon));
}

double SimilarityLlr(std::span<const RetrievedRow> top, double epsilon) {
  double pot = 0, other = 0;
  for (const RetrievedRow& row : top) (row.is_pot ? pot : other) += std::max(0.0f, row.score);
  return std::log((pot + epsilon) / (other + epsilon));
}

double GlobalSimilarityLlr(std::span<const float> pot_scores, std::span<const float> memory_scores, int k,
                           double epsilon) {
  auto mean_top = [k](std::span<const float> s) {
    double sum = 0;
    for (size_t i = 0; i < s.size() && i < static_cast<size_t>(k); ++i) sum += std::max(0.0f, s[i]);
    return sum / k;
  };
  return std::log((mean_top(pot_scores) + epsilon) / (mean_top(memory_scores) + epsilon));
}

double ObservationLlr(const Observation& obs, const LlrOptions& options) {
  return PotLlr(obs, options) + obs.text_llr;
}

double PotLlr(const Observation& obs, const LlrOptions& options) {
  switch (options.kind) {
    case LlrEstimatorKind::kCount: {
      const int pots = obs.pot_count();
      return CountLlr(pots, static_cast<int>(obs.top.size()) - pots, options.count_epsilon);
    }
    case LlrEstimatorKind::kSimilarity:
      return SimilarityLlr(obs.top, options.similarity_epsilon);
    case LlrEstimatorKind::kGlobalSimilarity:
      return GlobalSimilarityLlr(obs.global_pot_scores, obs.global_memory_scores, options.global_k,
                                 options.similarity_epsilon);
    case LlrEstimatorKind::kCountCalibrated: {
      const size_t n = std::min(static_cast<size_t>(obs.pot_count()), options.calibration.llr.size() - 1);
      return options.calibration.llr[n];
    }
  }
  return 0;
}

}  // namespace bulwark::honeypot
