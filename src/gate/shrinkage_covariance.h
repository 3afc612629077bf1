// Shrinkage covariance for the query gate (QOE Sec. 3.2). With d = 384 and a few hundred benign
// queries the sample covariance S has rank < d and no inverse; the shrunk estimate
//   Sigma = (1 - alpha) S + alpha nu I,   nu = tr(S) / d
// is positive definite for any alpha > 0. alpha is chosen by the Ledoit-Wolf formula (Ledoit &
// Wolf 2004, "A well-conditioned estimator for large-dimensional covariance matrices", Eq. 14),
// computed as scikit-learn's ledoit_wolf_shrinkage does, unless the caller fixes it.
#pragma once

#include <Eigen/Dense>

namespace bulwark {

struct ShrunkCovariance {
  Eigen::MatrixXd covariance;  // d x d, symmetric
  double alpha = 0;            // shrinkage intensity in [0, 1]
  double nu = 0;               // tr(S) / d, the target's scale
};

// `centered` holds one sample per row (n x d) with its mean already subtracted; S = X^T X / n (the
// maximum-likelihood normalization Ledoit-Wolf uses). `fixed_alpha` in [0, 1] overrides the
// Ledoit-Wolf choice; a negative value asks for it. Precondition: n >= 1.
ShrunkCovariance ShrinkCovariance(const Eigen::MatrixXd& centered, double fixed_alpha = -1);

}  // namespace bulwark
