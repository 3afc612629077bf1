// The change feed on a real PostgreSQL cluster (issue #17 point 2): versions are gap-free and in
// commit order under concurrent writers on several connections, as a concurrent reader sees them;
// batches are bounded and carry the rows of one snapshot; the checker finds a deleted event; and
// LISTEN/NOTIFY hints reach a listener.
#include "storage/postgresql/change_feed.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "replication/replication_test_fixture.h"
#include "replication/version_checker.h"
#include "storage/postgresql/change_notify.h"

namespace bulwark {
namespace {

using ::bulwark::testing::IsOk;
using ::bulwark::testing::StatusIs;
using ::testing::ElementsAre;

class ChangeFeedTest : public ::bulwark::testing::ReplicationTest {
 protected:
  std::unique_ptr<ChangeFeed> OpenFeed() {
    auto feed = ChangeFeed::Open(conninfo_);
    EXPECT_THAT(feed, IsOk());
    return feed.ok() ? *std::move(feed) : nullptr;
  }
};

TEST_F(ChangeFeedTest, ConcurrentWritersGiveGapFreeCommitOrderedVersions) {
  constexpr int kWriters = 4;
  constexpr int kWritesEach = 20;
  auto feed = OpenFeed();
  ASSERT_NE(feed, nullptr);
  std::vector<std::unique_ptr<PostgresBackend>> backends;
  for (int w = 0; w < kWriters; ++w) backends.push_back(OpenBackend());
  std::atomic<int> writers_done{0};
  std::atomic<int> failures{0};
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      for (int i = 0; i < kWritesEach; ++i) {
        if (!Add(*backends[w], absl::StrCat("ns", (w + i) % 3), absl::StrCat("w", w, " i", i)).ok())
          ++failures;
      }
      ++writers_done;
    });
  }
  // A reader polling while they write, in small batches: it must never see a hole or go back.
  VersionChecker checker(VersionChecker::Mode::kWholeStore);
  std::vector<int64_t> ns0;
  int64_t after = 0;
  for (int round = 0; round < 100000; ++round) {
    const bool last = writers_done.load() == kWriters;
    auto batch = feed->ReadAfter(after, 7, nullptr);
    ASSERT_THAT(batch, IsOk());
    for (const FeedEvent& e : batch->events) {
      checker.Observe(e.seq, e.name_space);
      if (e.name_space == "ns0") ns0.push_back(e.seq);
    }
    ASSERT_GE(batch->through, after);
    after = batch->through;
    if (last && batch->events.empty()) break;
    if (batch->events.empty()) absl::SleepFor(absl::Milliseconds(1));
  }
  for (auto& t : writers) t.join();
  EXPECT_EQ(failures.load(), 0);
  const VersionReport& seen = checker.report();
  EXPECT_TRUE(seen.ok()) << (seen.problems.empty() ? "" : seen.problems[0]);
  EXPECT_EQ(seen.events, kWriters * kWritesEach);
  EXPECT_EQ(seen.last_version, kWriters * kWritesEach);
  auto whole = CheckStoreVersions(*feed, 10);
  ASSERT_THAT(whole, IsOk());
  EXPECT_TRUE(whole->ok());
  auto per_ns = CompareWithStore(*feed, "ns0", ns0, after);
  ASSERT_THAT(per_ns, IsOk());
  EXPECT_TRUE(per_ns->ok()) << (per_ns->problems.empty() ? "" : per_ns->problems[0]);
  EXPECT_GT(ns0.size(), 0u);
}

TEST_F(ChangeFeedTest, BatchesAreBoundedAndCarryTheRowsAsked) {
  std::vector<int64_t> a, b;
  for (int i = 0; i < 5; ++i) {
    auto v = Add(*writer_, "a", absl::StrCat("a", i));
    ASSERT_THAT(v, IsOk());
    a.push_back(*v);
    if (i < 3) {
      auto w = Add(*writer_, "b", absl::StrCat("b", i));
      ASSERT_THAT(w, IsOk());
      b.push_back(*w);
    }
  }
  auto feed = OpenFeed();
  ASSERT_NE(feed, nullptr);
  auto first = feed->ReadAfter(0, 3, [](std::string_view ns) { return ns == "a"; });
  ASSERT_THAT(first, IsOk());
  ASSERT_EQ(first->events.size(), 3u);
  EXPECT_EQ(first->through, 3) << "a full batch vouches for its own events only";
  for (const FeedEvent& e : first->events) {
    EXPECT_EQ(e.row.has_value(), e.name_space == "a") << e.seq;
    if (e.row) {
      EXPECT_EQ(e.row->entry.id, e.entry_id);
    }
    EXPECT_EQ(e.event, "add");
  }
  auto only_b = feed->ReadNamespaceAfter("b", 0, 10, true);
  ASSERT_THAT(only_b, IsOk());
  std::vector<int64_t> got;
  for (const FeedEvent& e : only_b->events) {
    got.push_back(e.seq);
    ASSERT_TRUE(e.row.has_value());
    EXPECT_THAT(signer_->Verify(e.row->entry), IsOk());
  }
  EXPECT_EQ(got, b);
  EXPECT_EQ(only_b->through, 8) << "a short batch is complete up to the snapshot's newest version";
  auto after_b = feed->ReadNamespaceAfter("b", b.back(), 10, false);
  ASSERT_THAT(after_b, IsOk());
  EXPECT_TRUE(after_b->events.empty());
  auto last = feed->LastSeq();
  ASSERT_THAT(last, IsOk());
  EXPECT_EQ(*last, 8);
  EXPECT_THAT(feed->ReadAfter(-1, 3, nullptr), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(feed->ReadAfter(0, 0, nullptr), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(feed->ReadAfter(0, kMaxFeedBatch + 1, nullptr), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST_F(ChangeFeedTest, TheCheckerFindsAnEventDeletedInTheDatabase) {
  for (int i = 0; i < 5; ++i) ASSERT_THAT(Add(*writer_, "a", absl::StrCat("a", i)), IsOk());
  auto feed = OpenFeed();
  ASSERT_NE(feed, nullptr);
  auto clean = CheckStoreVersions(*feed);
  ASSERT_THAT(clean, IsOk());
  EXPECT_TRUE(clean->ok());
  auto sql = pg::PgConnection::Open(conninfo_);
  ASSERT_THAT(sql, IsOk());
  ASSERT_THAT((*sql)->Exec("DELETE FROM history WHERE seq = 3"), IsOk());
  auto broken = CheckStoreVersions(*feed, 2);
  ASSERT_THAT(broken, IsOk());
  EXPECT_EQ(broken->gaps, 1);
  EXPECT_THAT(broken->problems, ElementsAre("versions 3..3 are missing"));
}

TEST_F(ChangeFeedTest, NotificationsWakeAListener) {
  auto listener = ChangeListener::Open(conninfo_);
  ASSERT_THAT(listener, IsOk());
  auto notifier = ChangeNotifier::Open(conninfo_);
  ASSERT_THAT(notifier, IsOk());
  auto quiet = (*listener)->Wait(absl::Milliseconds(50));
  ASSERT_THAT(quiet, IsOk());
  EXPECT_TRUE(quiet->empty());
  ASSERT_THAT((*notifier)->Notify("team-a"), IsOk());
  ASSERT_THAT((*notifier)->Notify("team-a"), IsOk());
  ASSERT_THAT((*notifier)->Notify("team-b"), IsOk());
  std::vector<std::string> heard;
  for (int i = 0; i < 50 && heard.size() < 2; ++i) {
    auto got = (*listener)->Wait(absl::Milliseconds(100));
    ASSERT_THAT(got, IsOk());
    for (auto& ns : *got) {
      if (std::find(heard.begin(), heard.end(), ns) == heard.end()) heard.push_back(ns);
    }
  }
  EXPECT_THAT(heard, ElementsAre("team-a", "team-b"));
  EXPECT_THAT((*notifier)->Notify(""), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT((*notifier)->Notify(std::string(257, 'n')), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST_F(ChangeFeedTest, HintsAreCoalescedOffTheWritePath) {
  auto listener = ChangeListener::Open(conninfo_);
  ASSERT_THAT(listener, IsOk());
  EXPECT_THAT(CoalescingNotifier::Start(conninfo_, absl::ZeroDuration()),
              StatusIs(absl::StatusCode::kInvalidArgument));
  {
    auto notifier = CoalescingNotifier::Start(conninfo_, absl::Milliseconds(50));
    ASSERT_THAT(notifier, IsOk());
    const absl::Time start = absl::Now();
    for (int i = 0; i < 300; ++i) (*notifier)->Hint(absl::StrCat("team-", i % 3));
    (*notifier)->Hint("");  // ignored
    EXPECT_LT(absl::Now() - start, absl::Milliseconds(200)) << "Hint never waits on the network";
    std::vector<std::string> heard;
    for (int i = 0; i < 50 && heard.size() < 3; ++i) {
      auto got = (*listener)->Wait(absl::Milliseconds(100));
      ASSERT_THAT(got, IsOk());
      for (auto& ns : *got) {
        if (std::find(heard.begin(), heard.end(), ns) == heard.end()) heard.push_back(ns);
      }
    }
    std::sort(heard.begin(), heard.end());
    EXPECT_THAT(heard, ElementsAre("team-0", "team-1", "team-2"));
    const CoalescingNotifier::Stats stats = (*notifier)->stats();
    EXPECT_EQ(stats.hints, 300);
    EXPECT_LE(stats.sent, 30) << "300 hints in one window are a few notifications";
    EXPECT_EQ(stats.dropped, 0);
    (*notifier)->Hint("last-one");  // pending when the notifier goes: sent on destruction
  }
  bool heard_last = false;
  for (int i = 0; i < 50 && !heard_last; ++i) {
    auto got = (*listener)->Wait(absl::Milliseconds(100));
    ASSERT_THAT(got, IsOk());
    heard_last = std::find(got->begin(), got->end(), "last-one") != got->end();
  }
  EXPECT_TRUE(heard_last);
}

}  // namespace
}  // namespace bulwark
