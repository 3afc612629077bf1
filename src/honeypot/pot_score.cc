// Exact top-k pot scores (see pot_score.h).
#include "honeypot/pot_score.h"

#include <algorithm>
#include <functional>
#include <limits>

namespace bulwark::honeypot {

Eigen::MatrixXf TopKScores(const RowMatrixXf& queries, const RowMatrixXf& items, int k) {
  constexpr Eigen::Index kBlock = 256;
  const Eigen::Index q = queries.rows();
  Eigen::MatrixXf out = Eigen::MatrixXf::Constant(q, k, -std::numeric_limits<float>::infinity());
  std::vector<float> row;
  for (Eigen::Index begin = 0; begin < q; begin += kBlock) {
    const Eigen::Index rows = std::min(kBlock, q - begin);
    const RowMatrixXf block = queries.middleRows(begin, rows) * items.transpose();
    for (Eigen::Index i = 0; i < rows; ++i) {
      row.assign(block.row(i).data(), block.row(i).data() + block.cols());
      const size_t take = std::min(row.size(), static_cast<size_t>(k));
      std::partial_sort(row.begin(), row.begin() + static_cast<std::ptrdiff_t>(take), row.end(),
                        std::greater<float>());
      for (size_t j = 0; j < take; ++j) out(begin + i, static_cast<Eigen::Index>(j)) = row[j];
    }
  }
  return out;
}

PotObservation HardPotScores(const RowMatrixXf& queries, const Eigen::MatrixXf& memory_top_k,
                             const RowMatrixXf& pots, int k) {
  const Eigen::Index q = queries.rows();
  PotObservation obs;
  obs.score.assign(static_cast<size_t>(q), 0.0);
  obs.pots_in_top_k.assign(static_cast<size_t>(q), 0);
  if (pots.rows() == 0 || q == 0) return obs;
  const Eigen::MatrixXf top_pots = TopKScores(queries, pots, k);
  for (Eigen::Index i = 0; i < q; ++i) {
    // Merge the two descending lists, memories first on ties, for k places.
    int m = 0, p = 0;
    double sum = 0;
    for (int place = 0; place < k; ++place) {
      const float pot = p < top_pots.cols() ? top_pots(i, p) : -std::numeric_limits<float>::infinity();
      const float mem =
          m < memory_top_k.cols() ? memory_top_k(i, m) : -std::numeric_limits<float>::infinity();
      if (pot > mem) {
        sum += pot;
        ++p;
      } else {
        ++m;
      }
    }
    obs.pots_in_top_k[static_cast<size_t>(i)] = p;
    obs.score[static_cast<size_t>(i)] = sum / k;
  }
  return obs;
}

}  // namespace bulwark::honeypot
