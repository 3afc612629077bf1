// ROC analysis of a detector's scores (DESIGN 4.8): AUROC as the Mann–Whitney statistic, the ROC
// curve, TPR at a fixed FPR and FPR at a fixed TPR. Convention throughout: a higher score means
// "more likely positive" and an item is flagged when score >= threshold.
#pragma once

#include <span>
#include <vector>

namespace bulwark::eval {

// P[score(pos) > score(neg)] + 1/2 P[score(pos) == score(neg)] over all positive/negative pairs
// (Mann–Whitney U / (n_pos n_neg)); equals the trapezoid area under RocCurve. 0.5 when either
// set is empty. NaN scores are treated as -infinity (never flagged).
double Auroc(std::span<const double> positives, std::span<const double> negatives);

struct RocPoint {
  double fpr = 0;
  double tpr = 0;
  double threshold = 0;  // flag when score >= threshold; +infinity for the (0, 0) point
};

// The ROC curve: (0, 0) first, then one point per distinct score in descending order, ending at
// (1, 1). Tied positive and negative scores give one diagonal step. With an empty class its
// rates are reported as 0.
std::vector<RocPoint> RocCurve(std::span<const double> positives, std::span<const double> negatives);

// The highest TPR of any threshold whose FPR is <= max_fpr (0 if none, e.g. max_fpr < 0).
double TprAtFpr(std::span<const RocPoint> curve, double max_fpr);
// The lowest FPR of any threshold whose TPR is >= min_tpr (1 if none).
double FprAtTpr(std::span<const RocPoint> curve, double min_tpr);

}  // namespace bulwark::eval
