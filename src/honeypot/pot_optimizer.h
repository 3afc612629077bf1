// Stage 1 of MemPot (Sec. 4.1, Eq. 9-11): trains the honeypot vectors u_j = theta_j / ||theta_j||
// so that attack queries retrieve them and benign queries do not, by minimising
//   L_pot = L_NCE,K(h) + lambda_div L_div                                         (Eq. 10)
//   L_div = 2 / (P (P - 1)) sum_{i<j} s(u_i, u_j)                                 (Eq. 11)
// where L_NCE,K is the InfoNCE loss of Thm 1 over groups of one attack query and K - 1 benign
// queries. The paper's score g_k (Eq. 9) is piecewise constant in which pots enter the top k, so a
// pot outside every top k gets no gradient; we use its soft relaxation (research/mempot.md 2.2):
//   c_k(q) = the k-th largest cosine of q with the memories (fixed: memories do not move)
//   s_j = q.u_j,  w_j = sigmoid((s_j - c_k(q)) / tau_g),  h(q) = (1/k) sum_j w_j s_j
// with logits h / tau_nce. As tau_g -> 0, h -> g_k up to pots displacing each other. Gradients are
// analytic (PotObjective::Evaluate), the optimiser is Adam or plain gradient descent, and after
// every step each theta_j is projected back to the unit sphere. Mini-batches of groups are drawn
// from the seeded CSPRNG: a run is deterministic for a seed.
#pragma once

#include <absl/status/statusor.h>

#include <cstdint>
#include <vector>

#include "honeypot/pot_math.h"

namespace bulwark::honeypot {

struct PotOptimizerOptions {
  enum class Method { kAdam, kGradientDescent };

  int top_k = 4;                   // k of Eq. 9, the monitor's k_obs; 1 .. 64
  double gate_temperature = 0.02;  // tau_g of the soft top-k gate, > 0
  double nce_temperature = 0.05;   // tau_nce, logits h / tau_nce, > 0
  int group_size = 32;             // K of Thm 1: 1 attack + K - 1 benign queries; 2 .. 1024
  int groups_per_step = 64;        // mini-batch size in groups; 1 .. 4096
  double diversity_weight = 0.1;   // lambda_div (the paper's beta in Eq. 10), >= 0
  double learning_rate = 1e-2;     // > 0
  int steps = 600;                 // 0 .. 100000
  Method method = Method::kAdam;
  int record_every = 10;  // one loss-curve point per this many steps, >= 1
  uint64_t seed = 0;
};

// One InfoNCE group: a row of the attack matrix and group_size - 1 rows of the benign matrix.
struct NceGroup {
  int attack = 0;
  std::vector<int> benign;
};

struct LossParts {
  double nce = 0;        // mean over groups of -log softmax(positive)
  double diversity = 0;  // L_div (Eq. 11); 0 for a single pot
  double total = 0;      // nce + diversity_weight * diversity
};

// The objective of Eq. 10 with the soft gate, on fixed training data. Holds the normalised
// queries and each query's threshold c_k(q).
class PotObjective {
 public:
  // `attack` and `benign` queries and `memories` are rows of unit vectors of one dimension d.
  // Errors: InvalidArgument for an empty attack or benign set, no memories, mismatched
  // dimensions, a non-finite value or an option outside its range.
  [[nodiscard]] static absl::StatusOr<PotObjective> Create(const RowMatrixXf& attack,
                                                           const RowMatrixXf& benign,
                                                           const RowMatrixXf& memories,
                                                           const PotOptimizerOptions& options);

  // The loss of `theta` (P x d, any non-zero rows) on `groups` and, if `gradient` is not null, its
  // gradient with respect to theta (resized to P x d). Eq. 10 with the soft gate; the gradient
  // per group with softmax weights pi_i over the logits:
  //   dL/dh_i = (pi_i - [i = positive]) / (tau_nce |groups|)
  //   dh/ds_j = (1/k) (w_j + s_j w_j (1 - w_j) / tau_g)
  //   ds_j/dtheta_j = (q - s_j u_j) / ||theta_j||
  //   dL_div/du_i = 2 / (P (P - 1)) sum_{j != i} u_j, projected the same way.
  // Precondition: group indices in range, theta rows non-zero.
  LossParts Evaluate(const RowMatrixXf& theta, const std::vector<NceGroup>& groups,
                     RowMatrixXf* gradient) const;
  // The same in double precision (for finite-difference checks).
  LossParts Evaluate(const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>& theta,
                     const std::vector<NceGroup>& groups,
                     Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>* gradient) const;

  // `count` groups drawn uniformly (attack index, then group_size - 1 benign indices with
  // replacement) from `rng`.
  std::vector<NceGroup> SampleGroups(int count, SeededCsprng& rng) const;

  const PotOptimizerOptions& options() const { return options_; }
  const RowMatrixXf& queries() const { return queries_; }  // attack rows, then benign rows
  // The k best memory cosines per row of queries(), descending (Q x k); c_k(q) is the last column.
  const Eigen::MatrixXf& memory_top_k() const { return memory_top_k_; }
  int attack_count() const { return attack_count_; }
  int benign_count() const { return static_cast<int>(queries_.rows()) - attack_count_; }

 private:
  PotObjective() = default;
  template <typename Scalar>
  LossParts EvaluateImpl(
      const Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>& theta,
      const std::vector<NceGroup>& groups,
      Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>* gradient) const;

  PotOptimizerOptions options_;
  RowMatrixXf queries_;
  Eigen::MatrixXf memory_top_k_;
  int attack_count_ = 0;
};

struct PotTrainingResult {
  RowMatrixXf pots;                // P x d, unit rows
  std::vector<double> loss_curve;  // mean mini-batch total loss per record_every steps
  LossParts initial_loss;          // on a fixed evaluation set of groups (one per attack query,
  LossParts final_loss;            //   at most 1024), before and after training
  double initial_auroc = 0.5;      // AUROC of the exact g_k (Eq. 9) attack vs benign queries,
  double final_auroc = 0.5;        //   before and after training
  double attack_mean_pots = 0;     // mean |T_k(q) ∩ P| over attack / benign queries, after
  double benign_mean_pots = 0;
  double benign_pot_rate = 0;          // fraction of benign queries with at least one pot in T_k
  std::vector<int> attack_pot_counts;  // |T_k(q) ∩ P| per attack / benign query, after training
  std::vector<int> benign_pot_counts;
  int steps = 0;
};

// Trains P = init.rows() pots from `init` (e.g. the balanced k-means centroids; rows are
// normalised first). Errors: those of PotObjective::Create; InvalidArgument if init is empty, has
// the wrong dimension, or a zero or non-finite row.
[[nodiscard]] absl::StatusOr<PotTrainingResult> TrainPots(const RowMatrixXf& attack,
                                                          const RowMatrixXf& benign,
                                                          const RowMatrixXf& memories,
                                                          const RowMatrixXf& init,
                                                          const PotOptimizerOptions& options);

}  // namespace bulwark::honeypot
