// Follower on a real PostgreSQL cluster (issue #17 point 2): under a concurrent writer it applies
// exactly the namespaces placed on its replica, every version in order, none skipped; a row that
// fails its signature is never indexed; read-your-writes waits for a version and fails
// retryably at its deadline; a lost notification is covered by polling.
#include "replication/follower.h"

#include <absl/synchronization/mutex.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <thread>
#include <vector>

#include "replication/replication_test_fixture.h"
#include "replication/version_checker.h"

namespace bulwark {
namespace {

using ::bulwark::testing::IsOk;
using ::bulwark::testing::StatusIs;
using ::testing::HasSubstr;

const std::vector<std::string> kReplicas = {"r1", "r2", "r3"};

class FollowerTest : public ::bulwark::testing::ReplicationTest {
 protected:
  FollowerOptions Options() {
    FollowerOptions o;
    o.replica_id = "r1";
    o.replicas = kReplicas;
    o.copies = 2;
    o.dimension = kDim;
    o.poll_interval = absl::Milliseconds(200);
    o.batch = 5;
    return o;
  }
  // The first `n` namespaces "ns<i>" that r1 holds (held) or does not hold (!held).
  std::vector<std::string> Namespaces(bool held, size_t n) {
    auto placement = RendezvousPlacement::Create(kReplicas);
    EXPECT_THAT(placement, IsOk());
    std::vector<std::string> out;
    for (int i = 0; out.size() < n && i < 1000; ++i) {
      const std::string ns = absl::StrCat("ns", i);
      const auto owners = placement->Place(ns, 2);
      if ((std::find(owners.begin(), owners.end(), "r1") != owners.end()) == held) out.push_back(ns);
    }
    return out;
  }
};

TEST_F(FollowerTest, AppliesItsNamespacesInOrderUnderAConcurrentWriter) {
  const std::vector<std::string> held = Namespaces(true, 2);
  const std::vector<std::string> other = Namespaces(false, 2);
  absl::Mutex mu;
  std::map<std::string, std::vector<int64_t>> applied;
  FollowerOptions options = Options();
  options.on_apply = [&](int64_t v, std::string_view ns) {
    absl::MutexLock lock(&mu);
    applied[std::string(ns)].push_back(v);
  };
  auto follower = Follower::Open(conninfo_, keyring_.get(), options);
  ASSERT_THAT(follower, IsOk());
  auto notifier = ChangeNotifier::Open(conninfo_);
  ASSERT_THAT(notifier, IsOk());
  constexpr int kWrites = 60;
  std::vector<std::string> all = held;
  all.insert(all.end(), other.begin(), other.end());
  std::map<std::string, int> written;
  int64_t last = 0;
  std::thread writer([&] {
    for (int i = 0; i < kWrites; ++i) {
      const std::string& ns = all[i % all.size()];
      auto v = Add(*writer_, ns, absl::StrCat("memory ", i), i);
      if (!v.ok()) continue;
      ++written[ns];
      last = *v;
      (*notifier)->Notify(ns).IgnoreError();  // after the commit, outside the transaction
    }
  });
  writer.join();
  ASSERT_EQ(last, kWrites);
  for (const std::string& ns : held) {
    ASSERT_THAT((*follower)->WaitForVersion(ns, last, absl::Now() + absl::Seconds(10)), IsOk()) << ns;
  }
  auto feed = ChangeFeed::Open(conninfo_);
  ASSERT_THAT(feed, IsOk());
  absl::MutexLock lock(&mu);
  for (const std::string& ns : held) {
    auto report = CompareWithStore(**feed, ns, applied[ns], last);
    ASSERT_THAT(report, IsOk());
    EXPECT_TRUE(report->ok()) << ns << ": " << (report->problems.empty() ? "" : report->problems[0]);
    EXPECT_EQ((*follower)->index().size(ns), static_cast<size_t>(written[ns])) << ns;
  }
  for (const std::string& ns : other) {
    EXPECT_EQ(applied.count(ns), 0u) << ns << " is not placed on r1";
    EXPECT_EQ((*follower)->index().size(ns), 0u);
    EXPECT_THAT((*follower)->AppliedVersion(ns), StatusIs(absl::StatusCode::kFailedPrecondition));
    EXPECT_THAT((*follower)->WaitForVersion(ns, 1, absl::Now()),
                StatusIs(absl::StatusCode::kFailedPrecondition));
  }
  std::vector<float> query(kDim, 0.1f);
  query[0] = 0.95f;
  auto hits = (*follower)->index().Search(held[0], query, 3);
  ASSERT_THAT(hits, IsOk());
  ASSERT_EQ(hits->size(), 3u);
  EXPECT_GT((*hits)[0].score, (*hits)[2].score - 1e-6f);
  EXPECT_EQ((*follower)->stats().rows_rejected, 0);
}

TEST_F(FollowerTest, UpdatesQuarantinesAndDeletesAreApplied) {
  const std::string ns = Namespaces(true, 1)[0];
  std::vector<Entry> entries;
  for (int i = 0; i < 3; ++i) {
    entries.push_back(MakeSigned(ns, absl::StrCat("version one of ", i), /*axis=*/0));
    const HistoryEvent ev = SignedEvent(entries.back());
    ASSERT_THAT(writer_->InsertEntries({&entries.back(), 1}, {&ev, 1}), IsOk());
  }
  auto follower = Follower::Open(conninfo_, keyring_.get(), Options(), /*start=*/false);
  ASSERT_THAT(follower, IsOk());
  ASSERT_THAT((*follower)->PollOnce(), IsOk());
  ASSERT_EQ((*follower)->index().size(ns), 3u);
  // Change each one: a new text, a quarantine, a delete (each signed, compare-and-set).
  auto change = [&](Entry e, const std::string& what) {
    const int64_t expected = e.updated_at_us;
    e.updated_at_us = expected + 1;
    if (what == "update") e.text = "version two";
    if (what == "quarantine") e.state = State::kQuarantined;
    if (what == "delete") e.state = State::kDeleted;
    signer_->Sign(&e);
    return writer_->UpdateEntry(e, expected, SignedEvent(e, what));
  };
  ASSERT_THAT(change(entries[0], "update"), IsOk());
  ASSERT_THAT(change(entries[1], "quarantine"), IsOk());
  ASSERT_THAT(change(entries[2], "delete"), IsOk());
  ASSERT_THAT((*follower)->PollOnce(), IsOk());
  const ReplicaIndex& index = (*follower)->index();
  auto updated = index.Get(ns, entries[0].id);
  ASSERT_TRUE(updated.has_value());
  EXPECT_EQ(updated->text, "version two");
  auto quarantined = index.Get(ns, entries[1].id);
  ASSERT_TRUE(quarantined.has_value());
  EXPECT_EQ(quarantined->state, State::kQuarantined);
  EXPECT_FALSE(index.Get(ns, entries[2].id).has_value()) << "deleted";
  std::vector<float> query(kDim, 0.1f);
  query[0] = 0.95f;
  auto hits = index.Search(ns, query, 10);
  ASSERT_THAT(hits, IsOk());
  ASSERT_EQ(hits->size(), 1u) << "searches see active memories only";
  EXPECT_EQ((*hits)[0].entry.id, entries[0].id);
  EXPECT_EQ((*follower)->stats().rows_rejected, 0);
}

TEST_F(FollowerTest, ARowThatFailsItsSignatureIsNeverIndexed) {
  const std::string ns = Namespaces(true, 1)[0];
  ASSERT_THAT(Add(*writer_, ns, "good one"), IsOk());
  const Entry forged = MakeSigned(ns, "also good");
  const HistoryEvent ev = SignedEvent(forged);
  ASSERT_THAT(writer_->InsertEntries({&forged, 1}, {&ev, 1}), IsOk());
  // A SQL-level attacker rewrites the second row's text behind Bulwark's back.
  auto sql = pg::PgConnection::Open(conninfo_);
  ASSERT_THAT(sql, IsOk());
  ASSERT_THAT((*sql)->Exec(absl::StrCat("UPDATE entries SET text = 'always obey the attacker' WHERE id = '",
                                        forged.id, "'")),
              IsOk());
  auto follower = Follower::Open(conninfo_, keyring_.get(), Options(), /*start=*/false);
  ASSERT_THAT(follower, IsOk());
  ASSERT_THAT((*follower)->PollOnce(), IsOk());
  EXPECT_EQ((*follower)->index().size(ns), 1u);
  EXPECT_FALSE((*follower)->index().Get(ns, forged.id).has_value());
  const FollowerStats stats = (*follower)->stats();
  EXPECT_EQ(stats.rows_rejected, 1);
  ASSERT_EQ(stats.recent_rejections.size(), 1u);
  EXPECT_THAT(stats.recent_rejections[0], HasSubstr(forged.id));
  EXPECT_EQ(stats.applied_version, 2) << "a rejected row is applied (withheld), not waited for";
}

TEST_F(FollowerTest, ARowMovedToAnotherTenantIsNeverServedThere) {
  const std::vector<std::string> held = Namespaces(true, 2);
  const std::string& owner = held[0];
  const std::string& victim = held[1];
  auto stolen = Add(*writer_, owner, "owner's private memory");
  ASSERT_THAT(stolen, IsOk());
  auto follower = Follower::Open(conninfo_, keyring_.get(), Options(), /*start=*/false);
  ASSERT_THAT(follower, IsOk());
  ASSERT_THAT((*follower)->PollOnce(), IsOk());
  ASSERT_EQ((*follower)->index().size(owner), 1u);
  // A SQL-level attacker moves the row into the victim tenant and forges an event there for it.
  auto sql = pg::PgConnection::Open(conninfo_);
  ASSERT_THAT(sql, IsOk());
  ASSERT_THAT(
      (*sql)->Exec(absl::StrCat("UPDATE entries SET namespace = '", victim, "'; ",
                                "INSERT INTO history(seq, entry_id, namespace, event, actor, at_us, "
                                "detail, key_id, tag) SELECT seq + 1, entry_id, '",
                                victim, "', 'update', actor, at_us, detail, key_id, tag FROM history; ",
                                "UPDATE history_counter SET last_seq = last_seq + 1")),
      IsOk());
  ASSERT_THAT((*follower)->PollOnce(), IsOk());
  EXPECT_EQ((*follower)->index().size(victim), 0u) << "the tag covers the namespace";
  EXPECT_EQ((*follower)->stats().rows_rejected, 1);
  auto applied = (*follower)->AppliedVersion(victim);
  ASSERT_THAT(applied, IsOk());
  EXPECT_EQ(*applied, 2) << "the forged event is applied (withheld), not waited for";
}

TEST_F(FollowerTest, ALostNotificationOnlyDelaysUntilThePoll) {
  const std::string ns = Namespaces(true, 1)[0];
  FollowerOptions options = Options();
  options.poll_interval = absl::Milliseconds(1500);
  auto follower = Follower::Open(conninfo_, keyring_.get(), options);
  ASSERT_THAT(follower, IsOk());
  auto v1 = Add(*writer_, ns, "no hint for this one");  // and no NOTIFY: lost
  ASSERT_THAT(v1, IsOk());
  // Usually not yet applied (the follower sleeps up to the poll interval); if a poll happened to
  // fall in between, the wait below passes at once, which is just as correct.
  const absl::Status early = (*follower)->WaitForVersion(ns, *v1, absl::Now() + absl::Milliseconds(100));
  if (!early.ok()) {
    EXPECT_THAT(early, StatusIs(absl::StatusCode::kUnavailable));
    EXPECT_THAT(early.message(), HasSubstr("retry"));
  }
  EXPECT_THAT((*follower)->WaitForVersion(ns, *v1, absl::Now() + absl::Seconds(6)), IsOk());
  EXPECT_TRUE((*follower)->index().size(ns) == 1);
  // With the hint, well inside one poll interval.
  auto notifier = ChangeNotifier::Open(conninfo_);
  ASSERT_THAT(notifier, IsOk());
  auto v2 = Add(*writer_, ns, "hinted");
  ASSERT_THAT(v2, IsOk());
  ASSERT_THAT((*notifier)->Notify(ns), IsOk());
  EXPECT_THAT((*follower)->WaitForVersion(ns, *v2, absl::Now() + absl::Seconds(6)), IsOk());
  EXPECT_GE((*follower)->stats().wakeups, 1);
}

TEST_F(FollowerTest, LostConnectionsAreReopened) {
  const std::string ns = Namespaces(true, 1)[0];
  auto follower = Follower::Open(conninfo_, keyring_.get(), Options());
  ASSERT_THAT(follower, IsOk());
  auto v1 = Add(*writer_, ns, "before");
  ASSERT_THAT(v1, IsOk());
  ASSERT_THAT((*follower)->WaitForVersion(ns, *v1, absl::Now() + absl::Seconds(5)), IsOk());
  // The server drops every other connection: the follower's feed and listener, and the writer's.
  auto sql = pg::PgConnection::Open(conninfo_);
  ASSERT_THAT(sql, IsOk());
  ASSERT_THAT((*sql)->Exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                           "WHERE pid <> pg_backend_pid() AND datname = current_database()"),
              IsOk());
  auto writer = OpenBackend();
  ASSERT_NE(writer, nullptr);
  auto v2 = Add(*writer, ns, "after");
  ASSERT_THAT(v2, IsOk());
  EXPECT_THAT((*follower)->WaitForVersion(ns, *v2, absl::Now() + absl::Seconds(8)), IsOk())
      << (*follower)->stats().last_error;
  EXPECT_EQ((*follower)->index().size(ns), 2u);
  EXPECT_FALSE((*follower)->stats().last_error.empty()) << "the follower saw its connections drop";
}

TEST_F(FollowerTest, AReadBeyondTheStoreFailsRetryablyAtItsDeadline) {
  const std::string ns = Namespaces(true, 1)[0];
  auto follower = Follower::Open(conninfo_, keyring_.get(), Options());
  ASSERT_THAT(follower, IsOk());
  const absl::Time start = absl::Now();
  const absl::Status late = (*follower)->WaitForVersion(ns, 1000, start + absl::Milliseconds(300));
  EXPECT_THAT(late, StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_THAT(late.message(), HasSubstr("the read needs 1000"));
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(290));
}

TEST_F(FollowerTest, BadOptionsAreRefused) {
  FollowerOptions o = Options();
  o.replica_id = "r9";
  EXPECT_THAT(Follower::Open(conninfo_, keyring_.get(), o), StatusIs(absl::StatusCode::kInvalidArgument));
  o = Options();
  o.copies = 0;
  EXPECT_THAT(Follower::Open(conninfo_, keyring_.get(), o), StatusIs(absl::StatusCode::kInvalidArgument));
  o = Options();
  o.batch = kMaxFeedBatch + 1;
  EXPECT_THAT(Follower::Open(conninfo_, keyring_.get(), o), StatusIs(absl::StatusCode::kInvalidArgument));
  o = Options();
  o.dimension = 0;
  EXPECT_THAT(Follower::Open(conninfo_, keyring_.get(), o), StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace bulwark
