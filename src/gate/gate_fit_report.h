// How well each gate score separates benign from triggered queries on a labelled set (QOE Table
// 1): AUROC and the false positive rate at 95 % and 99 % true positive rate. Printed by
// `bulwark gate fit --report`.
#pragma once

#include <array>
#include <nlohmann/json.hpp>
#include <span>
#include <vector>

#include "gate/gate_model.h"

namespace bulwark {

// Area under the ROC curve: P[score(triggered) > score(benign)] + 0.5 P[tie] (Mann-Whitney U).
// NaN if either set is empty.
double Auroc(std::span<const double> benign, std::span<const double> triggered);

// The FPR at the highest threshold that still flags at least `tpr` of the triggered scores (flag
// = score >= threshold). NaN if either set is empty.
double FprAtTpr(std::span<const double> benign, std::span<const double> triggered, double tpr);

struct ScoreSeparation {
  GateScore score;
  double auroc = 0;
  double fpr_at_95_tpr = 0;
  double fpr_at_99_tpr = 0;
  double fpr_at_threshold = 0;  // benign flagged by the fitted threshold (score > threshold)
  double tpr_at_threshold = 0;  // triggered flagged by it
};

struct GateFitReport {
  int benign = 0;
  int triggered = 0;
  bool out_of_fold = false;             // scores of the fitting data, out of fold (no separate labelled set)
  std::vector<ScoreSeparation> scores;  // centroid, mahalanobis, and lda when fitted
};

// Scores per score kind: benign[k][i], triggered[k][j] (as GateFitDiagnostics holds them).
GateFitReport MakeGateFitReport(const GateModel& model,
                                const std::array<std::vector<double>, kGateScoreCount>& benign,
                                const std::array<std::vector<double>, kGateScoreCount>& triggered,
                                bool out_of_fold);

// Scores labelled embeddings with `model`, then MakeGateFitReport. Precondition: every vector has
// the model's dimension.
GateFitReport EvaluateGate(const GateModel& model, std::span<const std::vector<float>> benign,
                           std::span<const std::vector<float>> triggered);

nlohmann::json ToJson(const GateFitReport& report);

}  // namespace bulwark
