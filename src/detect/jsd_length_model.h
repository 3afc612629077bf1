// The MemSAD+ score corrected for text length.
//
// MemSAD+ (paper Appendix R, Proposition 27) flags an entry whose character trigram distribution
// is far from the namespace's benign baseline: D_char(c) = JSD(p_c || p_0). A short text has few
// trigrams, so its empirical distribution is sparse and its JSD against any baseline is high
// whatever it says; a long one approaches the baseline. On the reference memories of data/corpora
// JSD falls with the log of the trigram count (Pearson r = -0.75 over 400 of the benign
// memories), so a raw-JSD threshold flags
// short benign notes and passes longer poisons: AUROC 0.44-0.48 for raw JSD on the `eval detect`
// corpus (below chance).
//
// The correction is a least-squares line on the reference set,
//   E[D_char | n trigrams] = intercept + slope * ln(n),
// and MemSAD+ scores the residual D_char(c) - E[D_char | n(c)]: how much farther from the
// baseline the entry is than benign text of its length. Its threshold is still set from the
// target FPR on the (leave-one-out) reference residuals. A model with slope 0 and intercept 0 is
// the raw JSD (calibrations stored before this correction load that way).
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <span>

namespace bulwark {

struct JsdLengthModel {
  double intercept = 0;
  double slope = 0;

  // intercept + slope * ln(max(trigrams, 1)).
  double Expected(size_t trigrams) const;
  double Residual(double jsd, size_t trigrams) const { return jsd - Expected(trigrams); }

  // Least squares of jsd[i] on ln(max(trigrams[i], 1)). With fewer than two distinct lengths the
  // slope is 0 and the intercept the mean. Precondition: equal, non-empty spans.
  static JsdLengthModel Fit(std::span<const size_t> trigrams, std::span<const double> jsd);

  nlohmann::json ToJson() const { return {{"intercept", intercept}, {"slope", slope}}; }
};

}  // namespace bulwark
