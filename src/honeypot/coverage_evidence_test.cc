#include "honeypot/coverage_evidence.h"

#include <gtest/gtest.h>

#include <cmath>
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
