// Small numeric helpers shared by the MemPot units (src/honeypot): the row-major float matrix
// that holds embeddings (one L2-normalized vector per row, so cosine is the inner product), row
// normalisation, seeding the project's CSPRNG from a 64-bit seed with a per-use domain byte, and a
// uniform double drawn from it. Everything here is deterministic for a given seed.
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <span>
#include <vector>

#include "core/seeded_csprng.h"

namespace bulwark::honeypot {

using RowMatrixXf = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Domain bytes: different uses of one user seed draw independent streams.
enum class SeedDomain : uint8_t {
  kKMeans = 1,
  kOptimizer = 2,
  kPrivacySample = 3,
  kFit = 4,
  kOptimizerEval = 5,
  kCoverage = 6
};

// A CSPRNG seed from (seed, domain): the seed's 8 little-endian bytes, then the domain byte.
inline SeededCsprng::Seed SeedFor(uint64_t seed, SeedDomain domain) {
  SeededCsprng::Seed s{};
  for (int b = 0; b < 8; ++b) s[b] = static_cast<uint8_t>(seed >> (8 * b));
  s[8] = 0x4d;  // 'M' for MemPot
  s[9] = static_cast<uint8_t>(domain);
  return s;
}

// Uniform in [0, 1) with 53 random bits.
inline double UniformDouble(SeededCsprng& rng) {
  return static_cast<double>(rng.NextU64() >> 11) * 0x1.0p-53;
}

// Scales every row to unit L2 norm; a zero row stays zero.
inline void NormalizeRows(RowMatrixXf& m) {
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    const float n = m.row(i).norm();
    if (n > 0) m.row(i) /= n;
  }
}

// Copies equally long vectors into the rows of a matrix (0 x 0 for an empty list). Precondition:
// every vector has the same size.
inline RowMatrixXf ToMatrix(std::span<const std::vector<float>> rows) {
  if (rows.empty()) return RowMatrixXf(0, 0);
  RowMatrixXf m(static_cast<Eigen::Index>(rows.size()), static_cast<Eigen::Index>(rows[0].size()));
  for (size_t i = 0; i < rows.size(); ++i) {
    m.row(static_cast<Eigen::Index>(i)) =
        Eigen::Map<const Eigen::RowVectorXf>(rows[i].data(), static_cast<Eigen::Index>(rows[i].size()));
  }
  return m;
}

// P[pos > neg] + 1/2 P[pos == neg] over all pairs (the Mann-Whitney AUROC); 0.5 when either side
// is empty. O((n + m) log(n + m)).
double Auroc(std::span<const double> positives, std::span<const double> negatives);

}  // namespace bulwark::honeypot
