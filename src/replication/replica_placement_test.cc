// ReplicaPlacement over a fake store: with R = 2 of N = 3 a replica holds exactly the namespaces
// rendezvous hashing places on it (about 2/3), reads of the others go to their live holders in
// placement order, a read placed here or already forwarded is loaded and served here, and a dead
// replica's namespaces move to the survivors on the next reconcile (its leaders kept).
#include "replication/replica_placement.h"

#include <absl/container/flat_hash_set.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "storage/postgresql/rendezvous.h"

namespace bulwark {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// The namespaces held by one fake replica's store.
struct FakeStore {
  std::vector<std::string> known;
  absl::flat_hash_set<std::string> held;
  int loads = 0;
  PlacementHooks Hooks() {
    return {.hold =
                [this](std::string_view ns) {
                  if (held.insert(std::string(ns)).second) ++loads;
                  return absl::OkStatus();
                },
            .drop = [this](std::string_view ns) { held.erase(std::string(ns)); },
            .holds = [this](std::string_view ns) { return held.contains(std::string(ns)); },
            .known = [this] { return known; }};
  }
};

ReplicaInfo Replica(const std::string& id) { return {id + "/1", id, "http://" + id}; }

std::vector<std::string> Namespaces(int n) {
  std::vector<std::string> names;
  for (int i = 0; i < n; ++i) names.push_back("ns" + std::to_string(i));
  return names;
}

TEST(ReplicaPlacementTest, EachReplicaHoldsExactlyItsPlacedNamespaces) {
  const std::vector<ReplicaInfo> all = {Replica("r1"), Replica("r2"), Replica("r3")};
  auto rendezvous = RendezvousPlacement::Create({"r1", "r2", "r3"});
  ASSERT_TRUE(rendezvous.ok()) << rendezvous.status();
  size_t total_held = 0;
  for (const ReplicaInfo& self : all) {
    FakeStore store{.known = Namespaces(90)};
    ReplicaPlacement placement(self, 2, store.Hooks());
    placement.SetLive(all);
    auto counts = placement.Reconcile(nullptr);
    ASSERT_TRUE(counts.ok()) << counts.status();
    for (const std::string& ns : store.known) {
      const std::vector<std::string> holders = rendezvous->Place(ns, 2);
      const bool placed = std::find(holders.begin(), holders.end(), self.replica_id) != holders.end();
      EXPECT_EQ(store.held.contains(ns), placed) << self.replica_id << " " << ns;
    }
    EXPECT_EQ(counts->held, static_cast<int>(store.held.size()));
    EXPECT_GT(store.held.size(), 45u) << "about R/N = 2/3 of 90";
    EXPECT_LT(store.held.size(), 75u);
    total_held += store.held.size();
  }
  EXPECT_EQ(total_held, 180u) << "every namespace has exactly R = 2 copies";
}

TEST(ReplicaPlacementTest, ReadsOfOtherNamespacesGoToTheirHoldersInOrder) {
  const std::vector<ReplicaInfo> all = {Replica("r1"), Replica("r2"), Replica("r3")};
  FakeStore store{.known = Namespaces(30)};
  ReplicaPlacement placement(all[0], 2, store.Hooks());
  placement.SetLive(all);
  ASSERT_TRUE(placement.Reconcile(nullptr).ok());
  for (const std::string& ns : store.known) {
    const std::vector<ReplicaInfo> holders = placement.Holders(ns);
    ASSERT_EQ(holders.size(), 2u);
    const ReplicaPlacement::ReadRoute route = placement.RouteRead(ns, /*forwarded=*/false);
    if (placement.PlacedHere(ns)) {
      EXPECT_EQ(route.kind, ReplicaPlacement::ReadRoute::Kind::kLocal) << ns;
      continue;
    }
    ASSERT_EQ(route.kind, ReplicaPlacement::ReadRoute::Kind::kForward) << ns;
    EXPECT_THAT(route.urls, ElementsAre(holders[0].url, holders[1].url));
    // Forwarded once already: served here (loaded first), never sent on again.
    const int loads = store.loads;
    EXPECT_EQ(placement.RouteRead(ns, /*forwarded=*/true).kind, ReplicaPlacement::ReadRoute::Kind::kLocal);
    EXPECT_EQ(store.loads, loads + 1);
    store.held.erase(ns);
  }
}

TEST(ReplicaPlacementTest, ADeadReplicasNamespacesMoveToTheSurvivorsButLeadersKeepTheirs) {
  const std::vector<ReplicaInfo> all = {Replica("r1"), Replica("r2"), Replica("r3")};
  FakeStore store{.known = Namespaces(40)};
  ReplicaPlacement placement(all[0], 2, store.Hooks());
  placement.SetLive(all);
  ASSERT_TRUE(placement.Reconcile(nullptr).ok());
  ASSERT_LT(store.held.size(), 40u);
  // r3 dies: with N = 2 and R = 2 every namespace is placed on r1.
  placement.SetLive({all[0], all[1]});
  auto counts = placement.Reconcile(nullptr);
  ASSERT_TRUE(counts.ok()) << counts.status();
  EXPECT_EQ(store.held.size(), 40u);
  EXPECT_GT(counts->loaded, 0);
  EXPECT_THAT(placement.LiveIds(), ElementsAre("r1", "r2"));
  // r3 and a fourth replica join: r1 drops what moved away, except a namespace it leads.
  const std::vector<ReplicaInfo> four = {all[0], all[1], all[2], Replica("r4")};
  placement.SetLive(four);
  std::string led;
  for (const std::string& ns : store.known) {
    if (!placement.PlacedHere(ns)) led = ns;
  }
  ASSERT_FALSE(led.empty());
  counts = placement.Reconcile([&](std::string_view ns) { return ns == led; });
  ASSERT_TRUE(counts.ok()) << counts.status();
  EXPECT_GT(counts->dropped, 0);
  EXPECT_TRUE(store.held.contains(led)) << "a leader holds what it writes";
  for (const std::string& ns : store.known) {
    if (ns == led) continue;
    EXPECT_EQ(store.held.contains(ns), placement.PlacedHere(ns)) << ns;
  }
}

TEST(ReplicaPlacementTest, SelfIsAlwaysLiveAndAReadLoadsANamespacePlacedHere) {
  FakeStore store{.known = {"only"}};
  ReplicaPlacement placement(Replica("r1"), 1, store.Hooks());
  placement.SetLive({});  // the directory could not see this replica's heartbeat yet
  EXPECT_THAT(placement.LiveIds(), ElementsAre("r1"));
  EXPECT_TRUE(placement.PlacedHere("only"));
  EXPECT_THAT(store.held, IsEmpty());
  EXPECT_EQ(placement.RouteRead("only", false).kind, ReplicaPlacement::ReadRoute::Kind::kLocal);
  EXPECT_TRUE(store.held.contains("only")) << "a read of a namespace placed here loads it first";
}

}  // namespace
}  // namespace bulwark
