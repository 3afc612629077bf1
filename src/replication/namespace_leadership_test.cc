// NamespaceLeadership on a real PostgreSQL cluster (issue #17 point 2): a leader whose renewals
// stop (a paused process) past its lease has its late write refused by the fence, and the new
// leader's writes continue the version sequence with no gap and no fork; a leader whose renewal
// finds the epoch moved steps down.
#include "replication/namespace_leadership.h"

#include <absl/synchronization/mutex.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <vector>

#include "replication/follower.h"
#include "replication/replication_test_fixture.h"
#include "replication/version_checker.h"
#include "storage/postgresql/change_feed.h"

namespace bulwark {
namespace {

using ::bulwark::testing::IsOk;
using ::bulwark::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class NamespaceLeadershipTest : public ::bulwark::testing::ReplicationTest {
 protected:
  std::unique_ptr<NamespaceLeases> OpenLeases() {
    auto leases = NamespaceLeases::Open(conninfo_);
    EXPECT_THAT(leases, IsOk());
    return leases.ok() ? *std::move(leases) : nullptr;
  }
  static LeadershipOptions Short() {
    LeadershipOptions o;
    o.ttl = absl::Seconds(1);
    o.renew_every = absl::Milliseconds(200);
    return o;
  }
};

TEST_F(NamespaceLeadershipTest, APausedLeaderIsFencedAndTheSequenceContinuesWithoutAFork) {
  auto leases_a = OpenLeases();
  auto leases_b = OpenLeases();
  auto backend_b = OpenBackend();
  ASSERT_NE(backend_b, nullptr);
  // A follower holding the namespace applies the feed throughout the takeover.
  absl::Mutex mu;
  std::vector<int64_t> applied;
  FollowerOptions follow;
  follow.replica_id = "replica-c";
  follow.replicas = {"replica-a", "replica-b", "replica-c"};
  follow.copies = 3;
  follow.dimension = kDim;
  follow.poll_interval = absl::Milliseconds(100);
  follow.on_apply = [&](int64_t v, std::string_view) {
    absl::MutexLock lock(&mu);
    applied.push_back(v);
  };
  auto follower = Follower::Open(conninfo_, keyring_.get(), follow);
  ASSERT_THAT(follower, IsOk());
  auto a = NamespaceLeadership::Acquire(leases_a.get(), writer_.get(), "ns", "replica-a", Short());
  ASSERT_THAT(a, IsOk());
  EXPECT_EQ((*a)->epoch(), 1);
  auto v1 = Add(*writer_, "ns", "first, by a");
  ASSERT_THAT(v1, IsOk());
  absl::SleepFor(absl::Milliseconds(1300));  // past one ttl: only the renewals keep a leading
  EXPECT_TRUE((*a)->leading());
  auto v2 = Add(*writer_, "ns", "second, by a");
  ASSERT_THAT(v2, IsOk());

  (*a)->StopRenewingForTesting();            // a is paused ...
  absl::SleepFor(absl::Milliseconds(1200));  // ... past its lease
  auto b = NamespaceLeadership::Acquire(leases_b.get(), backend_b.get(), "ns", "replica-b", Short());
  ASSERT_THAT(b, IsOk());
  EXPECT_EQ((*b)->epoch(), 2);

  // a wakes up believing it leads; PostgreSQL refuses its write in the write transaction.
  EXPECT_TRUE((*a)->leading());
  const Entry late = MakeSigned("ns", "late write of a zombie leader");
  const HistoryEvent late_event = SignedEvent(late);
  auto refused = writer_->InsertEntries({&late, 1}, {&late_event, 1});
  EXPECT_THAT(refused, StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(refused.status().message(), HasSubstr("fenced"));
  auto v3 = Add(*backend_b, "ns", "third, by b");
  ASSERT_THAT(v3, IsOk());

  auto gone = backend_b->GetEntry("ns", late.id);
  ASSERT_THAT(gone, IsOk());
  EXPECT_FALSE(gone->has_value()) << "the refused write left nothing";
  auto feed = ChangeFeed::Open(conninfo_);
  ASSERT_THAT(feed, IsOk());
  auto history = (*feed)->ReadNamespaceAfter("ns", 0, 100, false);
  ASSERT_THAT(history, IsOk());
  std::vector<int64_t> versions;
  for (const FeedEvent& e : history->events) versions.push_back(e.seq);
  EXPECT_THAT(versions, ElementsAre(*v1, *v2, *v3));
  EXPECT_THAT(versions, ElementsAre(1, 2, 3)) << "gap-free: the new leader continues the sequence";
  auto whole = CheckStoreVersions(**feed);
  ASSERT_THAT(whole, IsOk());
  EXPECT_TRUE(whole->ok());
  EXPECT_EQ(whole->events, 3);
  ASSERT_THAT((*follower)->WaitForVersion("ns", *v3, absl::Now() + absl::Seconds(5)), IsOk());
  EXPECT_EQ((*follower)->index().size("ns"), 3u);
  EXPECT_FALSE((*follower)->index().Get("ns", late.id).has_value());
  absl::MutexLock lock(&mu);
  EXPECT_THAT(applied, ElementsAre(1, 2, 3)) << "the follower saw one sequence across the takeover";
}

TEST_F(NamespaceLeadershipTest, ARenewalThatFindsTheEpochMovedStepsDown) {
  auto leases = OpenLeases();
  std::atomic<int> step_downs{0};
  LeadershipOptions options = Short();
  options.ttl = absl::Seconds(5);
  options.on_step_down = [&](const absl::Status&) { ++step_downs; };
  auto a = NamespaceLeadership::Acquire(leases.get(), writer_.get(), "ns", "replica-a", options);
  ASSERT_THAT(a, IsOk());
  auto sql = pg::PgConnection::Open(conninfo_);
  ASSERT_THAT(sql, IsOk());
  // Another holder took the namespace (as an operator's forced takeover would).
  ASSERT_THAT((*sql)->Exec("UPDATE namespace_leases SET epoch = epoch + 1, holder = 'replica-x'"), IsOk());
  for (int i = 0; i < 100 && (*a)->leading(); ++i) absl::SleepFor(absl::Milliseconds(50));
  EXPECT_FALSE((*a)->leading());
  EXPECT_THAT((*a)->status(), StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_EQ(step_downs.load(), 1);
  EXPECT_THAT(Add(*writer_, "ns", "after stepping down"), StatusIs(absl::StatusCode::kFailedPrecondition))
      << "the fence stays: a stepped-down leader never writes unfenced";
}

TEST_F(NamespaceLeadershipTest, OneLeaderAtATimeAndStepDownHandsOver) {
  auto leases_a = OpenLeases();
  auto leases_b = OpenLeases();
  auto backend_b = OpenBackend();
  auto a = NamespaceLeadership::Acquire(leases_a.get(), writer_.get(), "ns", "replica-a", Short());
  ASSERT_THAT(a, IsOk());
  EXPECT_THAT(NamespaceLeadership::Acquire(leases_b.get(), backend_b.get(), "ns", "replica-b", Short()),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  ASSERT_THAT((*a)->StepDown(), IsOk());
  EXPECT_FALSE((*a)->leading());
  auto b = NamespaceLeadership::Acquire(leases_b.get(), backend_b.get(), "ns", "replica-b", Short());
  ASSERT_THAT(b, IsOk());
  EXPECT_EQ((*b)->epoch(), 2);
  LeadershipOptions bad = Short();
  bad.renew_every = bad.ttl;
  EXPECT_THAT(NamespaceLeadership::Acquire(leases_a.get(), writer_.get(), "other", "replica-a", bad),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace bulwark
