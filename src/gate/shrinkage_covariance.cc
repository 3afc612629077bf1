// Ledoit-Wolf shrinkage (see shrinkage_covariance.h).
#include "gate/shrinkage_covariance.h"

#include <algorithm>

namespace bulwark {

ShrunkCovariance ShrinkCovariance(const Eigen::MatrixXd& x, double fixed_alpha) {
  const double n = static_cast<double>(x.rows());
  const Eigen::Index d = x.cols();
  ShrunkCovariance out;
  const Eigen::MatrixXd s = (x.transpose() * x) / n;
  out.nu = s.trace() / static_cast<double>(d);
  if (fixed_alpha >= 0) {
    out.alpha = std::min(1.0, fixed_alpha);
  } else {
    // delta = ||S - nu I||_F^2 / d; beta = (1 / (d n)) (sum_k ||x_k||^4 / n - ||S||_F^2), capped by delta.
    const double s_fro2 = s.squaredNorm();
    const double delta = (s_fro2 - 2.0 * out.nu * s.trace() + static_cast<double>(d) * out.nu * out.nu) / d;
    const Eigen::VectorXd row_norms2 = x.rowwise().squaredNorm();
    const double beta_raw = row_norms2.squaredNorm() / n;
    double beta = (beta_raw - s_fro2) / (static_cast<double>(d) * n);
    beta = std::min(beta, delta);
    out.alpha = (beta <= 0 || delta <= 0) ? 0.0 : beta / delta;
  }
  out.covariance = (1.0 - out.alpha) * s;
  out.covariance.diagonal().array() += out.alpha * out.nu;
  return out;
}

}  // namespace bulwark
