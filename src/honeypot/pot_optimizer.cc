// Stage-1 pot training (see pot_optimizer.h).
#include "honeypot/pot_optimizer.h"

#include <absl/status/status.h>
#include <absl/strings/str_cat.h>

#include <algorithm>
#include <cmath>

#include "core/status_macros.h"
#include "honeypot/pot_score.h"

namespace bulwark::honeypot {
namespace {

template <typename Scalar>
using Mat = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename Scalar>
using Vec = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;

absl::Status CheckOptions(const PotOptimizerOptions& o) {
  auto bad = [](const char* what) {
    return absl::InvalidArgumentError(absl::StrCat("pot optimizer: ", what));
  };
  if (o.top_k < 1 || o.top_k > 64) return bad("top_k must be in [1, 64]");
  if (!(o.gate_temperature > 0) || !(o.nce_temperature > 0)) return bad("temperatures must be > 0");
  if (o.group_size < 2 || o.group_size > 1024) return bad("group_size must be in [2, 1024]");
  if (o.groups_per_step < 1 || o.groups_per_step > 4096) return bad("groups_per_step must be in [1, 4096]");
  if (!(o.diversity_weight >= 0) || !std::isfinite(o.diversity_weight))
    return bad("diversity_weight must be >= 0");
  if (!(o.learning_rate > 0) || !std::isfinite(o.learning_rate)) return bad("learning_rate must be > 0");
  if (o.steps < 0 || o.steps > 100000) return bad("steps must be in [0, 100000]");
  if (o.record_every < 1) return bad("record_every must be >= 1");
  return absl::OkStatus();
}

// The Adam update (Kingma & Ba 2015, Alg. 1) with beta1 0.9, beta2 0.999, eps 1e-8.
struct Adam {
  RowMatrixXf m, v;
  int t = 0;
  void Step(RowMatrixXf& theta, const RowMatrixXf& grad, double lr) {
    if (m.size() == 0) {
      m = RowMatrixXf::Zero(theta.rows(), theta.cols());
      v = m;
    }
    ++t;
    m = 0.9f * m + 0.1f * grad;
    v = 0.999f * v + 0.001f * grad.cwiseProduct(grad);
    const float c1 = static_cast<float>(1 - std::pow(0.9, t));
    const float c2 = static_cast<float>(1 - std::pow(0.999, t));
    theta.array() -= static_cast<float>(lr) * (m.array() / c1) / ((v.array() / c2).sqrt() + 1e-8f);
  }
};

}  // namespace

absl::StatusOr<PotObjective> PotObjective::Create(const RowMatrixXf& attack, const RowMatrixXf& benign,
                                                  const RowMatrixXf& memories,
                                                  const PotOptimizerOptions& options) {
  BULWARK_RETURN_IF_ERROR(CheckOptions(options));
  if (attack.rows() == 0 || benign.rows() == 0 || memories.rows() == 0) {
    return absl::InvalidArgumentError("pot optimizer: needs attack queries, benign queries and memories");
  }
  const Eigen::Index d = memories.cols();
  if (d == 0 || attack.cols() != d || benign.cols() != d) {
    return absl::InvalidArgumentError("pot optimizer: queries and memories differ in dimension");
  }
  if (!attack.allFinite() || !benign.allFinite() || !memories.allFinite()) {
    return absl::InvalidArgumentError("pot optimizer: a vector is not finite");
  }
  PotObjective obj;
  obj.options_ = options;
  obj.attack_count_ = static_cast<int>(attack.rows());
  obj.queries_.resize(attack.rows() + benign.rows(), d);
  obj.queries_ << attack, benign;
  obj.memory_top_k_ = TopKScores(obj.queries_, memories, options.top_k);
  return obj;
}

std::vector<NceGroup> PotObjective::SampleGroups(int count, SeededCsprng& rng) const {
  std::vector<NceGroup> groups(static_cast<size_t>(count));
  for (NceGroup& g : groups) {
    g.attack = static_cast<int>(rng.Uniform(static_cast<uint64_t>(attack_count_)));
    g.benign.resize(static_cast<size_t>(options_.group_size - 1));
    for (int& b : g.benign) b = static_cast<int>(rng.Uniform(static_cast<uint64_t>(benign_count())));
  }
  return groups;
}

template <typename Scalar>
LossParts PotObjective::EvaluateImpl(const Mat<Scalar>& theta, const std::vector<NceGroup>& groups,
                                     Mat<Scalar>* gradient) const {
  const Eigen::Index p = theta.rows();
  const Scalar k = static_cast<Scalar>(options_.top_k);
  const Scalar tau_g = static_cast<Scalar>(options_.gate_temperature);
  const Scalar tau_nce = static_cast<Scalar>(options_.nce_temperature);
  const Vec<Scalar> norms = theta.rowwise().norm();
  const Mat<Scalar> u = norms.cwiseInverse().asDiagonal() * theta;

  // The distinct queries of the batch, as local rows.
  std::vector<int> local(static_cast<size_t>(queries_.rows()), -1);
  std::vector<int> rows;
  auto add = [&](int row) {
    if (local[static_cast<size_t>(row)] < 0) {
      local[static_cast<size_t>(row)] = static_cast<int>(rows.size());
      rows.push_back(row);
    }
  };
  for (const NceGroup& g : groups) {
    add(g.attack);
    for (int b : g.benign) add(attack_count_ + b);
  }
  const Eigen::Index n = static_cast<Eigen::Index>(rows.size());
  Mat<Scalar> q(n, theta.cols());
  Vec<Scalar> c(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    q.row(i) = queries_.row(rows[static_cast<size_t>(i)]).template cast<Scalar>();
    c(i) = static_cast<Scalar>(memory_top_k_(rows[static_cast<size_t>(i)], options_.top_k - 1));
  }
  const Mat<Scalar> s = q * u.transpose();  // s_qj
  const Mat<Scalar> w =
      ((-(s.colwise() - c) / tau_g).array().exp() + Scalar(1)).inverse().matrix();  // sigmoid gate
  const Vec<Scalar> h = s.cwiseProduct(w).rowwise().sum() / k;

  // InfoNCE over the groups (Thm 1) and dL/dh.
  LossParts loss;
  Vec<Scalar> dh = Vec<Scalar>::Zero(n);
  const Scalar scale = Scalar(1) / (tau_nce * static_cast<Scalar>(groups.size()));
  std::vector<int> idx;
  std::vector<Scalar> z;
  for (const NceGroup& g : groups) {
    idx.assign(1, local[static_cast<size_t>(g.attack)]);
    for (int b : g.benign) idx.push_back(local[static_cast<size_t>(attack_count_ + b)]);
    z.resize(idx.size());
    Scalar zmax = -std::numeric_limits<Scalar>::infinity();
    for (size_t i = 0; i < idx.size(); ++i) zmax = std::max(zmax, z[i] = h(idx[i]) / tau_nce);
    Scalar sum = 0;
    for (Scalar zi : z) sum += std::exp(zi - zmax);
    const Scalar lse = zmax + std::log(sum);
    loss.nce += static_cast<double>(lse - z[0]);
    for (size_t i = 0; i < idx.size(); ++i) dh(idx[i]) += (std::exp(z[i] - lse) - (i == 0 ? 1 : 0)) * scale;
  }
  loss.nce /= static_cast<double>(groups.size());

  // Eq. 11 through the sum of the pots: sum_{i<j} u_i.u_j = (||sum u||^2 - sum ||u_i||^2) / 2.
  const Eigen::Matrix<Scalar, 1, Eigen::Dynamic> sum_u = u.colwise().sum();
  const double pairs = static_cast<double>(p) * static_cast<double>(p - 1);
  if (p > 1)
    loss.diversity = static_cast<double>(sum_u.squaredNorm() - u.rowwise().squaredNorm().sum()) / pairs;
  loss.total = loss.nce + options_.diversity_weight * loss.diversity;
  if (gradient == nullptr) return loss;

  const Mat<Scalar> dh_ds =
      (w + s.cwiseProduct(w).cwiseProduct((Scalar(1) - w.array()).matrix()) / tau_g) / k;
  Mat<Scalar> du = (dh.asDiagonal() * dh_ds).transpose() * q;  // P x d: dL/du_j
  if (p > 1) {
    const Scalar div_scale = static_cast<Scalar>(options_.diversity_weight * 2.0 / pairs);
    du += div_scale * ((-u).rowwise() + sum_u);
  }
  // Through the normalisation u = theta / ||theta||: remove the radial part, divide by the norm.
  const Vec<Scalar> radial = du.cwiseProduct(u).rowwise().sum();
  *gradient = norms.cwiseInverse().asDiagonal() * (du - radial.asDiagonal() * u);
  return loss;
}

LossParts PotObjective::Evaluate(const RowMatrixXf& theta, const std::vector<NceGroup>& groups,
                                 RowMatrixXf* gradient) const {
  return EvaluateImpl<float>(theta, groups, gradient);
}

LossParts PotObjective::Evaluate(const Mat<double>& theta, const std::vector<NceGroup>& groups,
                                 Mat<double>* gradient) const {
  return EvaluateImpl<double>(theta, groups, gradient);
}

namespace {

// Exact Eq. 9 scores -> AUROC and counts, attack rows first in `obj.queries()`.
void ScoreHard(const PotObjective& obj, const RowMatrixXf& pots, double* auroc, PotTrainingResult* fill) {
  const PotObservation obs = HardPotScores(obj.queries(), obj.memory_top_k(), pots, obj.options().top_k);
  const auto a = static_cast<std::ptrdiff_t>(obj.attack_count());
  *auroc = Auroc(std::span<const double>(obs.score).subspan(0, static_cast<size_t>(a)),
                 std::span<const double>(obs.score).subspan(static_cast<size_t>(a)));
  if (fill == nullptr) return;
  fill->attack_pot_counts.assign(obs.pots_in_top_k.begin(), obs.pots_in_top_k.begin() + a);
  fill->benign_pot_counts.assign(obs.pots_in_top_k.begin() + a, obs.pots_in_top_k.end());
  auto mean = [](const std::vector<int>& v) {
    double s = 0;
    for (int x : v) s += x;
    return v.empty() ? 0.0 : s / static_cast<double>(v.size());
  };
  fill->attack_mean_pots = mean(fill->attack_pot_counts);
  fill->benign_mean_pots = mean(fill->benign_pot_counts);
  const auto hit = std::count_if(fill->benign_pot_counts.begin(), fill->benign_pot_counts.end(),
                                 [](int x) { return x > 0; });
  fill->benign_pot_rate = static_cast<double>(hit) / static_cast<double>(fill->benign_pot_counts.size());
}

}  // namespace

absl::StatusOr<PotTrainingResult> TrainPots(const RowMatrixXf& attack, const RowMatrixXf& benign,
                                            const RowMatrixXf& memories, const RowMatrixXf& init,
                                            const PotOptimizerOptions& options) {
  absl::StatusOr<PotObjective> obj = PotObjective::Create(attack, benign, memories, options);
  if (!obj.ok()) return obj.status();
  if (init.rows() == 0 || init.cols() != memories.cols() || !init.allFinite() ||
      (init.rowwise().norm().array() <= 0).any()) {
    return absl::InvalidArgumentError(
        "pot optimizer: initial pots must be non-zero finite rows of dimension d");
  }
  PotTrainingResult result;
  RowMatrixXf theta = init;
  NormalizeRows(theta);

  // The fixed evaluation groups: each attack query (at most 1024, evenly strided) once.
  SeededCsprng eval_rng(SeedFor(options.seed, SeedDomain::kOptimizerEval));
  std::vector<NceGroup> eval_groups = obj->SampleGroups(std::min(obj->attack_count(), 1024), eval_rng);
  for (size_t i = 0; i < eval_groups.size(); ++i) {
    eval_groups[i].attack =
        static_cast<int>(i * static_cast<size_t>(obj->attack_count()) / eval_groups.size());
  }
  result.initial_loss = obj->Evaluate(theta, eval_groups, nullptr);
  ScoreHard(*obj, theta, &result.initial_auroc, nullptr);

  SeededCsprng rng(SeedFor(options.seed, SeedDomain::kOptimizer));
  Adam adam;
  RowMatrixXf grad;
  double window = 0;
  for (int step = 1; step <= options.steps; ++step) {
    const std::vector<NceGroup> groups = obj->SampleGroups(options.groups_per_step, rng);
    window += obj->Evaluate(theta, groups, &grad).total;
    if (options.method == PotOptimizerOptions::Method::kAdam) {
      adam.Step(theta, grad, options.learning_rate);
    } else {
      theta -= static_cast<float>(options.learning_rate) * grad;
    }
    NormalizeRows(theta);  // the unit-norm projection
    if (step % options.record_every == 0 || step == options.steps) {
      const int span = step % options.record_every == 0 ? options.record_every : step % options.record_every;
      result.loss_curve.push_back(window / span);
      window = 0;
    }
  }
  result.steps = options.steps;
  result.final_loss = obj->Evaluate(theta, eval_groups, nullptr);
  ScoreHard(*obj, theta, &result.final_auroc, &result);
  result.pots = std::move(theta);
  return result;
}

}  // namespace bulwark::honeypot
