// Namespace leases and fencing on a real PostgreSQL cluster (issue #17 point 2): racing holders,
// takeover of an expired lease, and writes of a stale holder refused by the backend's fence in
// the write transaction itself, changing nothing.
#include "storage/postgresql/namespace_lease.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "storage/postgresql/postgres_backend.h"
#include "storage/postgresql/testing/backend_contract_fixture.h"
#include "storage/postgresql/testing/pg_test_environment.h"
#include "testing/status_matchers.h"

namespace bulwark {
namespace {

using ::bulwark::testing::AddEvent;
using ::bulwark::testing::IsOk;
using ::bulwark::testing::MakeEntry;
using ::bulwark::testing::StatusIs;
using ::testing::HasSubstr;

constexpr absl::Duration kLong = absl::Seconds(60);
// Short enough to wait out in a test, long enough that the steps before the wait finish first
// even on a loaded machine.
constexpr absl::Duration kShort = absl::Seconds(1);

void WaitOut(absl::Duration ttl) { absl::SleepFor(ttl + absl::Milliseconds(150)); }

class NamespaceLeaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = ::bulwark::testing::NewPgTestDatabase();
    ASSERT_THAT(db, IsOk());
    conninfo_ = *db;
    a_ = OpenLeases();
    b_ = OpenLeases();
    ASSERT_NE(a_, nullptr);
    ASSERT_NE(b_, nullptr);
  }
  std::unique_ptr<NamespaceLeases> OpenLeases() {
    auto leases = NamespaceLeases::Open(conninfo_);
    EXPECT_THAT(leases, IsOk());
    return leases.ok() ? *std::move(leases) : nullptr;
  }
  std::unique_ptr<PostgresBackend> OpenBackend() {
    auto backend = PostgresBackend::Open(conninfo_, /*create=*/true);
    EXPECT_THAT(backend, IsOk());
    return backend.ok() ? *std::move(backend) : nullptr;
  }

  std::string conninfo_;
  std::unique_ptr<NamespaceLeases> a_;  // two replicas' connections
  std::unique_ptr<NamespaceLeases> b_;
};

TEST_F(NamespaceLeaseTest, BadArgumentsAreRefused) {
  EXPECT_THAT(a_->TryAcquire("", "a", kLong), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(a_->TryAcquire("ns", "", kLong), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(a_->TryAcquire("ns", std::string("a\0b", 3), kLong),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(a_->TryAcquire(std::string(kMaxLeaseNameBytes + 1, 'n'), "a", kLong),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(a_->TryAcquire("ns", "a", absl::ZeroDuration()), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(a_->TryAcquire("ns", "a", kMaxLeaseTtl + absl::Seconds(1)),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(a_->Renew("ns", "a", 0, kLong), StatusIs(absl::StatusCode::kInvalidArgument));
  auto current = a_->Current("ns");
  ASSERT_THAT(current, IsOk());
  EXPECT_FALSE(current->has_value()) << "refused calls leased nothing";
}

TEST_F(NamespaceLeaseTest, AcquireRenewReleaseAndCurrent) {
  auto none = a_->Current("ns");
  ASSERT_THAT(none, IsOk());
  EXPECT_FALSE(none->has_value());

  auto first = a_->TryAcquire("ns", "replica-a", kLong);
  ASSERT_THAT(first, IsOk());
  EXPECT_EQ(first->epoch, 1);
  EXPECT_TRUE(first->live());
  EXPECT_NEAR(first->expires_at_us - first->as_of_us, absl::ToInt64Microseconds(kLong), 100000);

  EXPECT_THAT(b_->TryAcquire("ns", "replica-b", kLong),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("replica-a")));
  // The holder's own TryAcquire renews with the same epoch; so does Renew.
  auto again = a_->TryAcquire("ns", "replica-a", kLong);
  ASSERT_THAT(again, IsOk());
  EXPECT_EQ(again->epoch, 1);
  auto renewed = a_->Renew("ns", "replica-a", 1, kLong);
  ASSERT_THAT(renewed, IsOk());
  EXPECT_EQ(renewed->epoch, 1);
  EXPECT_THAT(b_->Renew("ns", "replica-b", 1, kLong), StatusIs(absl::StatusCode::kFailedPrecondition));

  // Release keeps the epoch: the next holder gets 2 at once, never 1 again.
  ASSERT_THAT(a_->Release("ns", "replica-a", 1), IsOk());
  auto released = b_->Current("ns");
  ASSERT_THAT(released, IsOk());
  ASSERT_TRUE(released->has_value());
  EXPECT_FALSE((*released)->live());
  EXPECT_EQ((*released)->epoch, 1);
  auto second = b_->TryAcquire("ns", "replica-b", kLong);
  ASSERT_THAT(second, IsOk());
  EXPECT_EQ(second->epoch, 2);
  EXPECT_THAT(a_->Renew("ns", "replica-a", 1, kLong), StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(a_->Release("ns", "replica-a", 1), StatusIs(absl::StatusCode::kFailedPrecondition));
  auto now = a_->Current("ns");
  ASSERT_THAT(now, IsOk());
  EXPECT_EQ((*now)->holder, "replica-b") << "a refused Release changed nothing";
  EXPECT_TRUE((*now)->live());
}

TEST_F(NamespaceLeaseTest, ALostConnectionIsReopenedByTheNextCall) {
  auto held = a_->TryAcquire("ns", "replica-a", kLong);
  ASSERT_THAT(held, IsOk());
  // Every other session of this database ends, as when the server restarts or fails over.
  auto admin = pg::PgConnection::Open(conninfo_);
  ASSERT_THAT(admin, IsOk());
  ASSERT_THAT((*admin)->Exec("SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity "
                             "WHERE datname = current_database() AND pid <> pg_backend_pid() "
                             "AND backend_type = 'client backend'"),
              IsOk());
  // The call that meets the loss fails (nothing is known of its outcome); the next one reopens.
  EXPECT_THAT(a_->Renew("ns", "replica-a", held->epoch, kLong), StatusIs(absl::StatusCode::kUnavailable));
  auto renewed = a_->Renew("ns", "replica-a", held->epoch, kLong);
  ASSERT_THAT(renewed, IsOk());
  EXPECT_EQ(renewed->epoch, held->epoch);
  EXPECT_THAT(b_->Current("ns"), StatusIs(absl::StatusCode::kUnavailable));
  auto seen = b_->Current("ns");
  ASSERT_THAT(seen, IsOk());
  ASSERT_TRUE(seen->has_value());
  EXPECT_EQ((*seen)->holder, "replica-a");
}

TEST_F(NamespaceLeaseTest, TwoHoldersRaceAndExactlyOneWins) {
  constexpr int kRounds = 30;
  for (int round = 0; round < kRounds; ++round) {
    const std::string ns = "race-" + std::to_string(round);
    std::atomic<int> ready{0};
    absl::StatusOr<Lease> got_a = absl::UnknownError("not run");
    absl::StatusOr<Lease> got_b = absl::UnknownError("not run");
    auto race = [&](NamespaceLeases* leases, const char* holder, absl::StatusOr<Lease>* out) {
      ready.fetch_add(1);
      while (ready.load() < 2) std::this_thread::yield();
      *out = leases->TryAcquire(ns, holder, kLong);
    };
    std::thread ta(race, a_.get(), "replica-a", &got_a);
    std::thread tb(race, b_.get(), "replica-b", &got_b);
    ta.join();
    tb.join();
    ASSERT_NE(got_a.ok(), got_b.ok()) << ns << ": " << got_a.status() << " / " << got_b.status();
    const absl::StatusOr<Lease>& loser = got_a.ok() ? got_b : got_a;
    EXPECT_THAT(loser, StatusIs(absl::StatusCode::kFailedPrecondition)) << ns;
    const Lease& winner = got_a.ok() ? *got_a : *got_b;
    EXPECT_EQ(winner.epoch, 1) << ns;
    auto current = a_->Current(ns);
    ASSERT_THAT(current, IsOk());
    EXPECT_EQ((*current)->holder, winner.holder) << ns;
  }
}

TEST_F(NamespaceLeaseTest, ExpiredLeaseIsTakenOverWithAHigherEpoch) {
  auto first = a_->TryAcquire("ns", "replica-a", kShort);
  ASSERT_THAT(first, IsOk());
  EXPECT_THAT(b_->TryAcquire("ns", "replica-b", kLong), StatusIs(absl::StatusCode::kFailedPrecondition));
  WaitOut(kShort);
  auto taken = b_->TryAcquire("ns", "replica-b", kLong);
  ASSERT_THAT(taken, IsOk());
  EXPECT_EQ(taken->epoch, first->epoch + 1);
  // The old holder can neither renew nor take it back.
  EXPECT_THAT(a_->Renew("ns", "replica-a", first->epoch, kLong),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("replica-b")));
  EXPECT_THAT(a_->TryAcquire("ns", "replica-a", kLong), StatusIs(absl::StatusCode::kFailedPrecondition));
  // An expired lease of its own is taken again with a new epoch, not silently extended.
  auto short_b = b_->TryAcquire("other", "replica-b", kShort);
  ASSERT_THAT(short_b, IsOk());
  WaitOut(kShort);
  EXPECT_THAT(b_->Renew("other", "replica-b", short_b->epoch, kLong),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  auto retaken = b_->TryAcquire("other", "replica-b", kLong);
  ASSERT_THAT(retaken, IsOk());
  EXPECT_EQ(retaken->epoch, short_b->epoch + 1);
}

// A replica's view of one namespace: its lease and its backend, fenced with the lease's epoch.
class FencedWriteTest : public NamespaceLeaseTest {
 protected:
  void SetUp() override {
    NamespaceLeaseTest::SetUp();
    db_a_ = OpenBackend();
    db_b_ = OpenBackend();
    ASSERT_NE(db_a_, nullptr);
    ASSERT_NE(db_b_, nullptr);
  }
  absl::Status Insert(PostgresBackend& db, const std::string& id, const std::string& ns = "ns") {
    const Entry e = MakeEntry(id, ns);
    const HistoryEvent ev = AddEvent(e);
    return db.InsertEntries({&e, 1}, {&ev, 1}).status();
  }
  // Every kind of fenced write, by `db`; each must fail with FailedPrecondition.
  void ExpectAllWritesFenced(PostgresBackend& db) {
    EXPECT_THAT(Insert(db, "Z1"), StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("fenced")));
    Entry updated = MakeEntry("A1", "ns", "rewritten");
    updated.updated_at_us = 999;
    const HistoryEvent ev{0, "A1", "ns", "update", "alice", 999, {}};
    EXPECT_THAT(db.UpdateEntry(updated, 123, ev), StatusIs(absl::StatusCode::kFailedPrecondition));
    const Entry once = MakeEntry("Z2", "ns");
    const HistoryEvent once_ev = AddEvent(once);
    InsertClaim claim;
    claim.idempotency_key = "k1";
    EXPECT_THAT(db.InsertEntriesOnce({&once, 1}, {&once_ev, 1}, claim),
                StatusIs(absl::StatusCode::kFailedPrecondition));
    const std::vector<std::vector<float>> queries = {{1.0f, 0.0f}};
    EXPECT_THAT(db.SaveQueryHistory("ns", 0, queries, 0, /*replace=*/true),
                StatusIs(absl::StatusCode::kFailedPrecondition));
    EXPECT_THAT(db.PutCalibration("ns", "stale"), StatusIs(absl::StatusCode::kFailedPrecondition));
  }
  // What a fenced write must not change: the namespace's rows and texts, the history, the
  // query history and calibration.
  std::string Snapshot(PostgresBackend& db) {
    std::string out;
    EXPECT_THAT(db.ScanEntries("ns",
                               [&](const StoredRow& r) {
                                 out += r.entry.id + "=" + r.entry.text + ";";
                                 return absl::OkStatus();
                               }),
                IsOk());
    auto seq = db.LastEventSeq();
    EXPECT_THAT(seq, IsOk());
    out += "seq=" + std::to_string(seq.ok() ? *seq : -1) + ";";
    EXPECT_THAT(db.ScanCalibrations([&](std::string_view ns, std::string_view c) {
      out += std::string(ns) + ":" + std::string(c) + ";";
      return absl::OkStatus();
    }),
                IsOk());
    EXPECT_THAT(db.ScanQueryHistory([&](std::string_view ns, uint64_t seq, std::vector<float>) {
      out += "q:" + std::string(ns) + "@" + std::to_string(seq) + ";";
      return absl::OkStatus();
    }),
                IsOk());
    return out;
  }

  std::unique_ptr<PostgresBackend> db_a_;
  std::unique_ptr<PostgresBackend> db_b_;
};

TEST_F(FencedWriteTest, OldEpochIsRefusedAfterTakeoverAndChangesNothing) {
  auto lease_a = a_->TryAcquire("ns", "replica-a", kShort);
  ASSERT_THAT(lease_a, IsOk());
  db_a_->SetFence("ns", lease_a->epoch);
  ASSERT_THAT(Insert(*db_a_, "A1"), IsOk());
  ASSERT_THAT(db_a_->PutCalibration("ns", "from-a"), IsOk());
  const std::vector<std::vector<float>> queries = {{0.0f, 1.0f}};
  ASSERT_THAT(db_a_->SaveQueryHistory("ns", 5, queries, 0, /*replace=*/false), IsOk());

  WaitOut(kShort);
  auto lease_b = b_->TryAcquire("ns", "replica-b", kLong);
  ASSERT_THAT(lease_b, IsOk());
  ASSERT_EQ(lease_b->epoch, lease_a->epoch + 1);
  db_b_->SetFence("ns", lease_b->epoch);

  const std::string before = Snapshot(*db_b_);
  ExpectAllWritesFenced(*db_a_);
  EXPECT_EQ(Snapshot(*db_b_), before) << "a fenced write changed the store";
  EXPECT_THAT(db_a_->PutCalibration("ns", "x"),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("replica-b")));

  // The new holder writes; namespaces without a fence are not checked.
  EXPECT_THAT(Insert(*db_b_, "B1"), IsOk());
  EXPECT_THAT(db_b_->PutCalibration("ns", "from-b"), IsOk());
  EXPECT_THAT(Insert(*db_a_, "O1", "unleased"), IsOk());
  // A batch touching a fenced namespace is refused whole.
  const std::vector<Entry> mixed = {MakeEntry("M1", "unleased"), MakeEntry("M2", "ns")};
  const std::vector<HistoryEvent> mixed_ev = {AddEvent(mixed[0]), AddEvent(mixed[1])};
  EXPECT_THAT(db_a_->InsertEntries(mixed, mixed_ev), StatusIs(absl::StatusCode::kFailedPrecondition));
  auto m1 = db_b_->GetEntry("unleased", "M1");
  ASSERT_THAT(m1, IsOk());
  EXPECT_FALSE(m1->has_value());
  // Lifting the fence is the replica's own decision (single-replica mode); it is not a way past
  // a lease in a cluster, where every replica fences.
  db_a_->ClearFence("ns");
  EXPECT_THAT(Insert(*db_a_, "A9"), IsOk());
}

TEST_F(FencedWriteTest, HolderPausedPastItsTtlIsFencedWithoutATakeover) {
  auto lease = a_->TryAcquire("ns", "replica-a", kShort);
  ASSERT_THAT(lease, IsOk());
  db_a_->SetFence("ns", lease->epoch);
  ASSERT_THAT(Insert(*db_a_, "A1"), IsOk());
  // A SIGSTOP-like pause: the holder does nothing until its lease has expired by the database's
  // clock. Nobody took the namespace over, but the holder's writes are refused all the same.
  WaitOut(kShort);
  const std::string before = Snapshot(*db_a_);
  ExpectAllWritesFenced(*db_a_);
  EXPECT_EQ(Snapshot(*db_a_), before);
  // To write again it must take a new epoch.
  auto again = a_->TryAcquire("ns", "replica-a", kLong);
  ASSERT_THAT(again, IsOk());
  EXPECT_EQ(again->epoch, lease->epoch + 1);
  db_a_->SetFence("ns", again->epoch);
  EXPECT_THAT(Insert(*db_a_, "A2"), IsOk());
}

TEST_F(FencedWriteTest, TakeoverWaitsForAWriteThatPassedTheFence) {
  auto lease = a_->TryAcquire("ns", "replica-a", kShort);
  ASSERT_THAT(lease, IsOk());
  auto conn = pg::PgConnection::Open(conninfo_);
  ASSERT_THAT(conn, IsOk());
  std::atomic<bool> acquired{false};
  absl::StatusOr<Lease> taken = absl::UnknownError("not run");
  std::thread taker;
  {
    pg::PgTransaction txn(**conn);
    ASSERT_THAT(txn.status(), IsOk());
    ASSERT_THAT(CheckFence(**conn, Fence{"ns", lease->epoch}), IsOk());
    WaitOut(kShort);  // the lease expires while the write transaction is open
    taker = std::thread([&] {
      taken = b_->TryAcquire("ns", "replica-b", kLong);
      acquired.store(true);
    });
    absl::SleepFor(absl::Milliseconds(300));
    EXPECT_FALSE(acquired.load()) << "the takeover did not wait for the fenced transaction";
    EXPECT_THAT(txn.Commit(), IsOk());
  }
  taker.join();
  ASSERT_THAT(taken, IsOk());
  EXPECT_EQ(taken->epoch, lease->epoch + 1);
}

// A write whose connection is cut while its transaction is open fails with Unavailable (its
// outcome is the caller's to check, never acknowledged) and stores nothing; the backend's next call
// reconnects and the history stays gap-free.
TEST_F(FencedWriteTest, AWriteCutOffInItsTransactionFailsAndTheNextCallReconnects) {
  ASSERT_THAT(Insert(*db_a_, "A1"), IsOk());
  auto blocker = pg::PgConnection::Open(conninfo_);
  auto admin = pg::PgConnection::Open(conninfo_);
  ASSERT_THAT(blocker, IsOk());
  ASSERT_THAT(admin, IsOk());
  absl::Status cut = absl::UnknownError("not run");
  std::thread writer;
  {
    pg::PgTransaction held(**blocker);  // holds the writers' lock: the write waits inside its transaction
    ASSERT_THAT(held.status(), IsOk());
    ASSERT_THAT((*blocker)->Exec("SELECT last_seq FROM history_counter WHERE id = 1 FOR UPDATE"), IsOk());
    writer = std::thread([&] { cut = Insert(*db_a_, "B1"); });
    bool terminated = false;
    for (int i = 0; i < 200 && !terminated; ++i) {  // at most about 10 s
      auto killed = (*admin)->Query(
          "SELECT count(pg_terminate_backend(pid, 5000)) FROM pg_stat_activity WHERE datname = "
          "current_database() "
          "AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()");
      ASSERT_THAT(killed, IsOk());
      terminated = killed->Int(0, 0) > 0;
      if (!terminated) absl::SleepFor(absl::Milliseconds(50));
    }
    EXPECT_TRUE(terminated) << "the write never waited for the lock";
    writer.join();
  }
  EXPECT_THAT(cut, StatusIs(absl::StatusCode::kUnavailable));
  ASSERT_THAT(Insert(*db_a_, "C1"), IsOk()) << "the next call reconnects";
  auto b1 = db_a_->GetEntry("ns", "B1");
  ASSERT_THAT(b1, IsOk());
  EXPECT_FALSE(b1->has_value()) << "nothing of the cut-off write is stored";
  auto events = db_a_->EventsAfter(0);
  ASSERT_THAT(events, IsOk());
  ASSERT_EQ(events->size(), 2u);
  EXPECT_EQ((*events)[0].seq, 1);
  EXPECT_EQ((*events)[1].seq, 2);
  EXPECT_EQ((*events)[1].entry_id, "C1");
}

}  // namespace
}  // namespace bulwark
