#include "honeypot/pot_optimizer.h"

#include <gtest/gtest.h>

#include "honeypot/balanced_kmeans.h"
#include "honeypot/pot_score.h"
#include "honeypot/test_fixtures.h"

namespace bulwark::honeypot {
namespace {

using RowMatrixXd = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Central finite differences of the loss, in double, against the analytic gradient.
void CheckGradient(const PotOptimizerOptions& options, int pots) {
  const auto space = testing::MakeSyntheticSpace(12, 3, 40, 30, 20);
  auto obj = PotObjective::Create(space.attack, space.benign, space.memories, options);
  ASSERT_TRUE(obj.ok()) << obj.status();
  SeededCsprng rng(SeedFor(5, SeedDomain::kOptimizer));
  const std::vector<NceGroup> groups = obj->SampleGroups(6, rng);
  std::mt19937 gen(9);
  // Pots between the attack region and the memories, so that gates sit in their sensitive range.
  RowMatrixXd theta = (0.5 * testing::RandomUnit(pots, 12, gen) + space.attack.topRows(pots)).cast<double>();
  theta *= 1.7;  // non-unit norms exercise the 1/||theta|| factor
  RowMatrixXd grad;
  obj->Evaluate(theta, groups, &grad);
  ASSERT_EQ(grad.rows(), pots);
  const double h = 1e-6;
  double max_err = 0, max_abs = 0;
  for (Eigen::Index i = 0; i < theta.size(); ++i) {
    RowMatrixXd plus = theta, minus = theta;
    plus.data()[i] += h;
    minus.data()[i] -= h;
    const double fd =
        (obj->Evaluate(plus, groups, nullptr).total - obj->Evaluate(minus, groups, nullptr).total) / (2 * h);
    max_err = std::max(max_err, std::abs(fd - grad.data()[i]));
    max_abs = std::max(max_abs, std::abs(fd));
  }
  EXPECT_GT(max_abs, 1e-3) << "the check must see a gradient";
  EXPECT_LT(max_err, 1e-6 * std::max(1.0, max_abs)) << "max |fd - analytic| = " << max_err;
}

TEST(PotOptimizerTest, GradientMatchesFiniteDifferences) {
  PotOptimizerOptions options;
  options.group_size = 8;
  CheckGradient(options, 4);
}

TEST(PotOptimizerTest, GradientMatchesFiniteDifferencesOtherSettings) {
  PotOptimizerOptions options;
  options.group_size = 5;
  options.top_k = 2;
  options.gate_temperature = 0.1;
  options.nce_temperature = 0.2;
  options.diversity_weight = 2.0;
  CheckGradient(options, 6);
  options.diversity_weight = 0.5;
  CheckGradient(options, 1);  // a single pot: no diversity term
}

TEST(PotOptimizerTest, LossOfUnitPotsMatchesDefinition) {
  // Two pots, one group of two queries: recompute Eq. 10 by hand.
  PotOptimizerOptions options;
  options.group_size = 2;
  options.top_k = 1;
  RowMatrixXf mem(1, 2), att(1, 2), ben(1, 2), theta(2, 2);
  mem << 1, 0;
  att << 0, 1;
  ben << 0.6f, 0.8f;
  theta << 0, 1, 1, 0;
  auto obj = PotObjective::Create(att, ben, mem, options);
  ASSERT_TRUE(obj.ok()) << obj.status();
  const LossParts loss = obj->Evaluate(theta, {NceGroup{0, {0}}}, nullptr);
  auto sig = [](double x) { return 1 / (1 + std::exp(-x)); };
  // attack: c = 0; s = (1, 0). benign: c = 0.6; s = (0.8, 0.6).
  const double h_a = sig(1 / 0.02) * 1 + sig(0) * 0;
  const double h_b = sig(0.2 / 0.02) * 0.8 + sig(0) * 0.6;
  const double nce = -std::log(std::exp(h_a / 0.05) / (std::exp(h_a / 0.05) + std::exp(h_b / 0.05)));
  EXPECT_NEAR(loss.nce, nce, 1e-4);
  EXPECT_NEAR(loss.diversity, 0.0, 1e-7);  // orthogonal pots
  EXPECT_NEAR(loss.total, nce, 1e-4);
}

TEST(PotOptimizerTest, TrainingSeparatesAttackFromBenign) {
  const auto space = testing::MakeSyntheticSpace(32, 8, 400, 300, 200);
  auto init = BalancedKMeans(space.memories, {.clusters = 8, .seed = 1});
  ASSERT_TRUE(init.ok()) << init.status();
  PotOptimizerOptions options;
  options.steps = 300;
  options.seed = 1;
  auto r = TrainPots(space.attack, space.benign, space.memories, init->centroids, options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_LT(r->final_loss.total, r->initial_loss.total);
  EXPECT_GT(r->final_auroc, 0.95) << "initial " << r->initial_auroc << " attack pots " << r->attack_mean_pots
                                  << " benign rate " << r->benign_pot_rate << " loss "
                                  << r->initial_loss.total << " -> " << r->final_loss.total;
  EXPECT_GT(r->final_auroc, r->initial_auroc);
  EXPECT_GT(r->attack_mean_pots, 1.0);
  EXPECT_LT(r->benign_pot_rate, 0.05);
  EXPECT_EQ(r->loss_curve.size(), 30u);
  for (Eigen::Index j = 0; j < r->pots.rows(); ++j) EXPECT_NEAR(r->pots.row(j).norm(), 1.0f, 1e-5f);
  // The counts agree with the exact Eq. 9 evaluation.
  const PotObservation obs =
      HardPotScores(space.attack, TopKScores(space.attack, space.memories, 4), r->pots, 4);
  EXPECT_EQ(obs.pots_in_top_k, r->attack_pot_counts);
}

TEST(PotOptimizerTest, DeterministicForASeed) {
  const auto space = testing::MakeSyntheticSpace(16, 4, 100, 80, 40);
  auto init = BalancedKMeans(space.memories, {.clusters = 4, .seed = 2});
  ASSERT_TRUE(init.ok());
  PotOptimizerOptions options;
  options.steps = 20;
  options.seed = 77;
  auto a = TrainPots(space.attack, space.benign, space.memories, init->centroids, options);
  auto b = TrainPots(space.attack, space.benign, space.memories, init->centroids, options);
  options.seed = 78;
  auto c = TrainPots(space.attack, space.benign, space.memories, init->centroids, options);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_TRUE(a->pots == b->pots);
  EXPECT_EQ(a->loss_curve, b->loss_curve);
  EXPECT_FALSE(a->pots == c->pots);
}

TEST(PotOptimizerTest, GradientDescentAlsoLowersTheLoss) {
  const auto space = testing::MakeSyntheticSpace(16, 4, 100, 80, 40);
  auto init = BalancedKMeans(space.memories, {.clusters = 4, .seed = 2});
  ASSERT_TRUE(init.ok());
  PotOptimizerOptions options;
  options.method = PotOptimizerOptions::Method::kGradientDescent;
  options.learning_rate = 0.05;
  options.steps = 100;
  auto r = TrainPots(space.attack, space.benign, space.memories, init->centroids, options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_LT(r->final_loss.total, r->initial_loss.total);
}

TEST(PotOptimizerTest, RejectsBadInput) {
  const auto space = testing::MakeSyntheticSpace(8, 2, 10, 10, 10);
  PotOptimizerOptions options;
  EXPECT_FALSE(
      TrainPots(RowMatrixXf(0, 8), space.benign, space.memories, space.memories.topRows(2), options).ok());
  EXPECT_FALSE(TrainPots(space.attack, space.benign, space.memories, RowMatrixXf::Zero(2, 8), options).ok());
  EXPECT_FALSE(TrainPots(space.attack, space.benign, space.memories, RowMatrixXf::Ones(2, 7), options).ok());
  options.group_size = 1;
  EXPECT_EQ(TrainPots(space.attack, space.benign, space.memories, space.memories.topRows(2), options)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace bulwark::honeypot
