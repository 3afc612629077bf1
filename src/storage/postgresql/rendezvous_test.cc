#include "storage/postgresql/rendezvous.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "testing/status_matchers.h"

namespace bulwark {
namespace {

using ::bulwark::testing::IsOk;
using ::bulwark::testing::StatusIs;
using ::testing::ElementsAre;

constexpr int kNamespaces = 10000;
constexpr size_t kCopies = 3;

std::vector<std::string> Replicas(int n) {
  std::vector<std::string> ids;
  for (int i = 0; i < n; ++i) ids.push_back("replica-" + std::to_string(i));
  return ids;
}

RendezvousPlacement MustCreate(std::vector<std::string> ids) {
  auto placement = RendezvousPlacement::Create(std::move(ids));
  EXPECT_THAT(placement, IsOk());
  return *std::move(placement);
}

std::string Ns(int i) { return "tenant-" + std::to_string(i); }

// `after` without `id`, keeping its order.
std::vector<std::string> Without(std::vector<std::string> after, const std::string& id) {
  after.erase(std::remove(after.begin(), after.end(), id), after.end());
  return after;
}

TEST(Rendezvous, RejectsBadReplicaLists) {
  EXPECT_THAT(RendezvousPlacement::Create({}), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(RendezvousPlacement::Create({"a", ""}), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(RendezvousPlacement::Create({"a", "b", "a"}), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(RendezvousPlacement::Create({std::string(kMaxReplicaIdBytes + 1, 'x')}),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(Rendezvous, DeterministicAndIndependentOfListOrder) {
  const RendezvousPlacement a = MustCreate({"r0", "r1", "r2", "r3", "r4"});
  const RendezvousPlacement b = MustCreate({"r3", "r0", "r4", "r2", "r1"});
  for (int i = 0; i < 1000; ++i) {
    const auto placed = a.Place(Ns(i), kCopies);
    ASSERT_EQ(placed.size(), kCopies);
    EXPECT_EQ(placed, a.Place(Ns(i), kCopies));
    EXPECT_EQ(placed, b.Place(Ns(i), kCopies));
    // Distinct replicas, and the R-prefix of a larger request (one ranking per namespace).
    EXPECT_EQ(std::set<std::string>(placed.begin(), placed.end()).size(), kCopies);
    const auto all = a.Place(Ns(i), 5);
    EXPECT_TRUE(std::equal(placed.begin(), placed.end(), all.begin()));
  }
  // Pinned (the value this code computed when written; XXH3 is specified bit for bit, so it is
  // the same on every machine and build): a change here moves every namespace of a deployed
  // cluster.
  EXPECT_THAT(a.Place("tenant-a", kCopies), ElementsAre("r2", "r4", "r1"));
}

TEST(Rendezvous, FewerReplicasThanCopiesPlacesOnAll) {
  const RendezvousPlacement p = MustCreate({"r0", "r1"});
  EXPECT_EQ(p.Place("ns", 3).size(), 2u);
  EXPECT_TRUE(p.Place("ns", 0).empty());
}

TEST(Rendezvous, BalancedOverTenThousandNamespaces) {
  const int n = 10;
  const RendezvousPlacement p = MustCreate(Replicas(n));
  std::map<std::string, int> held, led;
  for (int i = 0; i < kNamespaces; ++i) {
    const auto placed = p.Place(Ns(i), kCopies);
    ++led[placed.front()];
    for (const auto& id : placed) ++held[id];
  }
  // Expected R/N * 10k = 3000 copies and 1000 leaderships per replica; binomial standard
  // deviations about 46 and 30, so the bounds are 6.5 and 5 deviations wide.
  ASSERT_EQ(held.size(), static_cast<size_t>(n));
  int lo = kNamespaces, hi = 0;
  for (const auto& [id, count] : held) lo = std::min(lo, count), hi = std::max(hi, count);
  std::printf("copies per replica: min %d max %d (expected 3000)\n", lo, hi);
  for (const auto& [id, count] : held) {
    EXPECT_GE(count, 2700) << id;
    EXPECT_LE(count, 3300) << id;
    EXPECT_GE(led[id], 850) << id;
    EXPECT_LE(led[id], 1150) << id;
  }
}

TEST(Rendezvous, JoiningReplicaMovesOnlyTheNamespacesItTakes) {
  const RendezvousPlacement before = MustCreate(Replicas(10));
  const RendezvousPlacement after = MustCreate(Replicas(11));
  const std::string joined = "replica-10";
  int moved = 0;
  for (int i = 0; i < kNamespaces; ++i) {
    const auto old_set = before.Place(Ns(i), kCopies);
    const auto new_set = after.Place(Ns(i), kCopies);
    if (old_set == new_set) continue;
    ++moved;
    // Changed only by taking the new replica in; the others keep their order.
    auto kept = Without(new_set, joined);
    ASSERT_EQ(kept.size(), kCopies - 1) << Ns(i);
    EXPECT_TRUE(std::equal(kept.begin(), kept.end(), old_set.begin())) << Ns(i);
  }
  std::printf("a joining 11th replica moved %d of %d namespaces (expected 2727)\n", moved, kNamespaces);
  // Expected R/(N+1) = 3/11 of 10k = 2727 (standard deviation about 45).
  EXPECT_GE(moved, 2450);
  EXPECT_LE(moved, 3000);
}

TEST(Rendezvous, LeavingReplicaMovesOnlyTheNamespacesItHeld) {
  const RendezvousPlacement before = MustCreate(Replicas(10));
  std::vector<std::string> rest = Replicas(10);
  const std::string left = "replica-3";
  rest.erase(std::find(rest.begin(), rest.end(), left));
  const RendezvousPlacement after = MustCreate(rest);
  int moved = 0;
  for (int i = 0; i < kNamespaces; ++i) {
    const auto old_set = before.Place(Ns(i), kCopies);
    const auto new_set = after.Place(Ns(i), kCopies);
    const bool held = std::find(old_set.begin(), old_set.end(), left) != old_set.end();
    if (!held) {
      EXPECT_EQ(old_set, new_set) << Ns(i);
      continue;
    }
    ++moved;
    const auto kept = Without(old_set, left);
    EXPECT_TRUE(std::equal(kept.begin(), kept.end(), new_set.begin())) << Ns(i);
  }
  std::printf("a leaving replica moved %d of %d namespaces (expected 3000)\n", moved, kNamespaces);
  EXPECT_GE(moved, 2700);  // R/N = 3/10 of 10k expected
  EXPECT_LE(moved, 3300);
}

}  // namespace
}  // namespace bulwark
