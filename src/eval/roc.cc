// ROC analysis (see roc.h).
#include "eval/roc.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace bulwark::eval {
namespace {

double Sanitize(double score) { return std::isnan(score) ? -std::numeric_limits<double>::infinity() : score; }

std::vector<double> SortedDescending(std::span<const double> scores) {
  std::vector<double> sorted;
  sorted.reserve(scores.size());
  for (double s : scores) sorted.push_back(Sanitize(s));
  std::sort(sorted.begin(), sorted.end(), std::greater<>());
  return sorted;
}

}  // namespace

double Auroc(std::span<const double> positives, std::span<const double> negatives) {
  if (positives.empty() || negatives.empty()) return 0.5;
  std::vector<double> neg;
  neg.reserve(negatives.size());
  for (double s : negatives) neg.push_back(Sanitize(s));
  std::sort(neg.begin(), neg.end());
  double wins = 0;  // counts a tie as 1/2
  for (double raw : positives) {
    const double s = Sanitize(raw);
    const auto below = std::lower_bound(neg.begin(), neg.end(), s) - neg.begin();
    const auto not_above = std::upper_bound(neg.begin(), neg.end(), s) - neg.begin();
    wins += static_cast<double>(below) + 0.5 * static_cast<double>(not_above - below);
  }
  return wins / (static_cast<double>(positives.size()) * static_cast<double>(negatives.size()));
}

std::vector<RocPoint> RocCurve(std::span<const double> positives, std::span<const double> negatives) {
  const std::vector<double> pos = SortedDescending(positives);
  const std::vector<double> neg = SortedDescending(negatives);
  const double np = static_cast<double>(pos.size()), nn = static_cast<double>(neg.size());
  std::vector<RocPoint> curve;
  curve.push_back({0, 0, std::numeric_limits<double>::infinity()});
  size_t i = 0, j = 0;
  while (i < pos.size() || j < neg.size()) {
    const double threshold = (j >= neg.size() || (i < pos.size() && pos[i] >= neg[j])) ? pos[i] : neg[j];
    while (i < pos.size() && pos[i] >= threshold) ++i;
    while (j < neg.size() && neg[j] >= threshold) ++j;
    curve.push_back({nn > 0 ? j / nn : 0, np > 0 ? i / np : 0, threshold});
  }
  return curve;
}

double TprAtFpr(std::span<const RocPoint> curve, double max_fpr) {
  double best = 0;
  for (const RocPoint& p : curve) {
    if (p.fpr <= max_fpr + 1e-12) best = std::max(best, p.tpr);
  }
  return best;
}

double FprAtTpr(std::span<const RocPoint> curve, double min_tpr) {
  double best = 1;
  for (const RocPoint& p : curve) {
    if (p.tpr >= min_tpr - 1e-12) best = std::min(best, p.fpr);
  }
  return best;
}

}  // namespace bulwark::eval
