#include "honeypot/coverage_evidence.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace bulwark::honeypot {
namespace {

std::unique_ptr<CoverageWindows> Windows(size_t window, size_t max_keys) {
  absl::StatusOr<std::unique_ptr<CoverageWindows>> w = CoverageWindows::Create({window, max_keys});
  EXPECT_TRUE(w.ok()) << w.status();
  return std::move(*w);
}

TEST(CoverageWindows, CountsIdsNotSeenBeforeByThisKeyOnly) {
  auto w = Windows(64, 16);
  const std::vector<int64_t> first = {1, 2, 3, 4}, second = {3, 4, 5, 5};
  EXPECT_EQ(w->Novel("alice", first), 4);
  EXPECT_EQ(w->Novel("alice", second), 1);  // 5 once: a round's duplicate counts once
  EXPECT_EQ(w->Novel("alice", second), 0);
  EXPECT_EQ(w->Novel("bob", second), 3);  // another principal has its own window
  EXPECT_EQ(w->size(), 2u);
}

TEST(CoverageWindows, WindowForgetsTheOldestIds) {
  auto w = Windows(4, 16);
  EXPECT_EQ(w->Novel("k", std::vector<int64_t>{1, 2, 3, 4}), 4);
  EXPECT_EQ(w->Novel("k", std::vector<int64_t>{5, 6}), 2);        // 1 and 2 fall out
  EXPECT_EQ(w->Novel("k", std::vector<int64_t>{3, 4, 5, 6}), 0);  // still in the window
  EXPECT_EQ(w->Novel("k", std::vector<int64_t>{1, 2}), 2);        // forgotten: new again
}

TEST(CoverageWindows, MemoryIsBoundedByMaxKeysDroppingTheLeastRecentlyUsed) {
  auto w = Windows(8, 8);
  for (int i = 0; i < 8; ++i) w->Novel("key" + std::to_string(i), std::vector<int64_t>{int64_t{i}});
  w->Novel("key0", std::vector<int64_t>{0});  // key0 is now the most recently used
  EXPECT_EQ(w->size(), 8u);
  for (int i = 8; i < 100; ++i) {
    w->Novel("key" + std::to_string(i), std::vector<int64_t>{int64_t{i}});
    EXPECT_LE(w->size(), 8u);
  }
  // key1 was dropped long ago: its id is new to it again.
  EXPECT_EQ(w->Novel("key1", std::vector<int64_t>{1}), 1);
  // The window of a key holds at most `window` ids whatever it is fed.
  auto small = Windows(2, 1);
  for (int64_t id = 0; id < 50; ++id) small->Novel("k", std::vector<int64_t>{id});
  EXPECT_EQ(small->Novel("k", std::vector<int64_t>{48, 49}), 0);
  EXPECT_EQ(small->Novel("k", std::vector<int64_t>{47}), 1);
}

TEST(CoverageWindows, RejectsOutOfRangeOptions) {
  EXPECT_FALSE(CoverageWindows::Create({0, 16}).ok());
  EXPECT_FALSE(CoverageWindows::Create({4097, 16}).ok());
  EXPECT_FALSE(CoverageWindows::Create({64, 0}).ok());
  EXPECT_FALSE(CoverageWindows::Create({64, (size_t{1} << 20) + 1}).ok());
}

TEST(SessionNovelty, MatchesAFreshWindowPerSession) {
  const std::vector<std::vector<int64_t>> rounds = {{1, 2, 3, 4}, {1, 2, 5, 6}, {7, 8, 9, 10}, {1, 2}};
  EXPECT_EQ(SessionNovelty(rounds, 64), (std::vector<int>{4, 2, 4, 0}));
  // A window of 6 ids has forgotten 1 and 2 by the last round... (4 + 2 + 4 = 10 ids recorded)
  EXPECT_EQ(SessionNovelty(rounds, 6), (std::vector<int>{4, 2, 4, 2}));
  // ... and it agrees with CoverageWindows fed the same rounds.
  auto w = Windows(6, 4);
  std::vector<int> live;
  for (const auto& r : rounds) live.push_back(w->Novel("s", r));
  EXPECT_EQ(live, SessionNovelty(rounds, 6));
}

TEST(CoverageCalibration, PositiveWhereAttacksAreMoreLikelyClampedToFloorAndCap) {
  // Benign rounds mostly revisit (n = 0, 1); attack rounds mostly bring 4 new memories.
  const std::vector<int> benign = {0, 0, 0, 1, 1, 2, 4, 0, 1, 0};
  const std::vector<int> attack = {4, 4, 4, 4, 3, 4, 4, 0, 4, 4};
  absl::StatusOr<CoverageCalibration> cal = CoverageCalibration::Fit(benign, attack, 4, /*cap=*/1.1,
                                                                     /*unseen_weight=*/0.5, /*floor=*/0);
  ASSERT_TRUE(cal.ok()) << cal.status();
  ASSERT_EQ(cal->table.llr.size(), 5u);
  EXPECT_DOUBLE_EQ(cal->Llr(4), 1.1);  // log(0.5 * (8.5/12.5) / (1.5/12.5) + 0.5) = 1.20 > cap
  EXPECT_DOUBLE_EQ(cal->Llr(0), 0.0);  // negative, floored at 0
  EXPECT_DOUBLE_EQ(cal->Llr(9), cal->Llr(4));
  EXPECT_DOUBLE_EQ(cal->Llr(-1), 0.0);
  // Without a floor the contaminated alternative bounds a round at log(rho).
  cal = CoverageCalibration::Fit(benign, attack, 4, 1.1, 0.5, /*floor=*/-20);
  ASSERT_TRUE(cal.ok());
  EXPECT_LT(cal->Llr(0), 0.0);
  EXPECT_GE(cal->Llr(0), std::log(0.5));
  // Jeffreys: p1(3) = 1.5 / 12.5, p0(3) = 0.5 / 12.5 -> log(0.5 * 3 + 0.5) = log 2.
  EXPECT_NEAR(cal->Llr(3), std::log(2.0), 1e-12);
  EXPECT_EQ(cal->ToJson()["benign_rounds"], 10);
  EXPECT_FALSE(CoverageCalibration::Fit(benign, attack, 4, 0).ok());
  EXPECT_FALSE(CoverageCalibration::Fit(benign, attack, 4, 1.1, 0.5, 0.1).ok());
  EXPECT_FALSE(CoverageCalibration::Fit({}, attack, 4).ok());
  EXPECT_FALSE(CoverageCalibration::Fit(benign, std::vector<int>{5}, 4).ok());
}

// The shape the built-in extractors produced on 300 memories (doc/REPRODUCTION.md, 2026-11-25):
// most attack rounds revisit (n = 0), benign rounds spread. The unconstrained table rewards the
// revisit; the monotone one cannot, so it gives no round any evidence.
TEST(CoverageCalibration, MonotoneTableGivesARevisitNothingEvenWhenExtractorsRevisit) {
  std::vector<int> benign, attack;
  const int benign_rounds[] = {52, 37, 35, 47, 45}, attack_rounds[] = {945, 106, 65, 21, 15};
  for (int n = 0; n <= 4; ++n) {
    benign.insert(benign.end(), benign_rounds[n], n);
    attack.insert(attack.end(), attack_rounds[n], n);
  }
  absl::StatusOr<CoverageCalibration> old = CoverageCalibration::Fit(benign, attack, 4, 1.1, 0.5, 0, false);
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_GT(old->Llr(0), 0.5);  // the reversed evidence of 2026-11-25
  EXPECT_EQ(old->Llr(4), 0.0);
  absl::StatusOr<CoverageCalibration> cal = CoverageCalibration::Fit(benign, attack, 4, 1.1, 0.5, 0);
  ASSERT_TRUE(cal.ok()) << cal.status();
  EXPECT_TRUE(cal->monotone);
  // Every count pools into one block: ratio 1, log((1 - rho) + rho) = 0.
  for (int n = 0; n <= 4; ++n) EXPECT_NEAR(cal->Llr(n), 0.0, 1e-12) << n;
  const std::vector<double> raw = MonotoneNoveltyLlr(benign, attack, 4, 0.5);
  for (double l : raw) EXPECT_NEAR(l, 0.0, 1e-12);
  EXPECT_EQ(cal->ToJson()["monotone"], true);
}

// Property over many random histograms: non-decreasing in n, llr[0] <= 0, within [floor, cap]
// after Fit, identical to the unconstrained table where that is already in order, and a pooled
// block's ratio is its pooled masses' (so p0 and p1 still sum to 1: sum p0 * exp-ratio = 1 at rho 0).
TEST(CoverageCalibration, MonotoneTableIsOrderedBoundedAndAnIsotonicPooling) {
  uint64_t state = 20261125;
  auto next = [&state](int bound) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int>((state >> 33) % static_cast<uint64_t>(bound));
  };
  for (int trial = 0; trial < 200; ++trial) {
    const int k_obs = 1 + next(8);
    const double rho = trial % 2 == 0 ? 0.0 : 0.5;
    std::vector<int> benign, attack;
    for (int i = 0, rounds = 1 + next(60); i < rounds; ++i) benign.push_back(next(k_obs + 1));
    for (int i = 0, rounds = 1 + next(60); i < rounds; ++i) attack.push_back(next(k_obs + 1));
    const std::vector<double> llr = MonotoneNoveltyLlr(benign, attack, k_obs, rho);
    ASSERT_EQ(llr.size(), static_cast<size_t>(k_obs) + 1);
    for (size_t n = 1; n < llr.size(); ++n) EXPECT_LE(llr[n - 1], llr[n] + 1e-12) << trial;
    EXPECT_LE(llr[0], 1e-12) << trial;
    if (rho == 0) {  // sum over n of p0(n) * r(n) = sum of p1 = 1 (pooling keeps the masses)
      std::vector<double> p0(llr.size(), 0.5);
      for (int n : benign) p0[static_cast<size_t>(n)] += 1;
      double mass = 0;
      for (size_t n = 0; n < llr.size(); ++n)
        mass += p0[n] / (static_cast<double>(benign.size()) + 0.5 * (k_obs + 1)) * std::exp(llr[n]);
      EXPECT_NEAR(mass, 1.0, 1e-9) << trial;
    }
    absl::StatusOr<CoverageCalibration> plain =
        CoverageCalibration::Fit(benign, attack, k_obs, 20, rho, -20, false);
    ASSERT_TRUE(plain.ok());
    if (std::is_sorted(plain->table.llr.begin(), plain->table.llr.end())) {
      for (size_t n = 0; n < llr.size(); ++n) EXPECT_NEAR(llr[n], plain->table.llr[n], 1e-9) << trial;
    }
    absl::StatusOr<CoverageCalibration> cal = CoverageCalibration::Fit(benign, attack, k_obs, 1.1, rho, 0);
    ASSERT_TRUE(cal.ok());
    EXPECT_EQ(cal->Llr(0), 0.0);
    for (int n = 0; n <= k_obs; ++n) {
      EXPECT_GE(cal->Llr(n), 0.0);
      EXPECT_LE(cal->Llr(n), 1.1);
      if (n > 0) EXPECT_LE(cal->Llr(n - 1), cal->Llr(n));
    }
  }
}

TEST(CoverageEvidence, CountsOnlyMemoryRowsWithIds) {
  absl::StatusOr<CoverageCalibration> cal =
      CoverageCalibration::Fit(std::vector<int>{0, 0, 1}, std::vector<int>{2, 2, 2}, 2, 1.1, 0, -20);
  ASSERT_TRUE(cal.ok());
  CoverageEvidence evidence(*cal, Windows(16, 4));
  const std::vector<RetrievedRow> first = {
      {0.9f, true, 7}, {0.8f, false, 1}, {0.7f, false, 2}, {0.6f, false, -1}};
  EXPECT_DOUBLE_EQ(evidence.Observe("p", first), cal->Llr(2));  // the pot and the id-less row skipped
  EXPECT_DOUBLE_EQ(evidence.Observe("p", first), cal->Llr(0));
  const std::vector<RetrievedRow> later = {{0.9f, false, 1}, {0.8f, false, 3}};
  EXPECT_DOUBLE_EQ(evidence.Observe("p", later), cal->Llr(1));
  EXPECT_NE(cal->Llr(0), cal->Llr(2));
}

}  // namespace
}  // namespace bulwark::honeypot
