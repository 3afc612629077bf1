// Tests for AuditLog: concurrent appends all land with their fields intact, every filter selects
// exactly the right records (entry ids that are prefixes of each other included), limits are
// enforced, records survive reopen and destruction, and the bounded queue applies backpressure,
// drops with a report when the disk is stuck, and retries after a failed write; OpenForStore keeps
// the log in its own file beside the store's and moves records of the older layout into it.
#include "audit/audit_log.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <thread>

#include "core/hex.h"
#include "storage/sqlite/raw_sql.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"

namespace bulwark {
namespace {

using ::bulwark::testing::IsOk;

using ::testing::ElementsAre;

AuditRecord MakeRecord(std::string principal, std::string session, std::string name_space,
                       std::vector<std::string> ids, int64_t at_us = 1000) {
  AuditRecord r;
  r.at_us = at_us;
  r.principal = std::move(principal);
  r.session = std::move(session);
  r.name_space = std::move(name_space);
  r.operation = "search";
  r.query_hash = Sha256Hex(r.principal + r.session);
  r.returned_ids = std::move(ids);
  return r;
}

// A raw connection to the same file, as another process would have.
class RawDb {
 public:
  explicit RawDb(const std::filesystem::path& path) {
    auto file = RawSqlFile::Open(path, /*create=*/true);
    EXPECT_TRUE(file.ok()) << file.status();
    if (file.ok()) file_ = *std::move(file);
  }
  bool Exec(const char* sql) { return file_ != nullptr && file_->Exec(sql).ok(); }
  int64_t Count() {
    if (file_ == nullptr) return -1;
    auto rows = file_->Query("SELECT count(*) FROM audit");
    return rows.ok() && rows->size() == 1 ? SqlInt((*rows)[0][0]) : -1;
  }

 private:
  std::unique_ptr<RawSqlFile> file_;
};

class AuditLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RawDb db(db_path_);
    ASSERT_TRUE(db.Exec("PRAGMA journal_mode=WAL"));
  }

  std::unique_ptr<AuditLog> OpenLog(int flush_interval_ms = 20,
                                    size_t capacity = AuditLog::kDefaultQueueCapacity) {
    auto log = AuditLog::Open(db_path_, flush_interval_ms, capacity);
    EXPECT_TRUE(log.ok()) << log.status();
    return log.ok() ? *std::move(log) : nullptr;
  }

  std::vector<AuditRecord> Find(AuditLog& log, AuditQuery query) {
    query.limit = 10000;
    auto found = log.Query(query);
    EXPECT_TRUE(found.ok()) << found.status();
    return found.ok() ? *std::move(found) : std::vector<AuditRecord>();
  }

  static std::vector<std::string> Sessions(const std::vector<AuditRecord>& records) {
    std::vector<std::string> out;
    for (const AuditRecord& r : records) out.push_back(r.session);
    return out;
  }

  testing::TempDir dir_;
  std::filesystem::path db_path_ = dir_ / "bulwark.db";
};

TEST_F(AuditLogTest, ConcurrentAppendsAreAllWrittenWithTheirFields) {
  auto log = OpenLog();
  ASSERT_NE(log, nullptr);
  constexpr int kThreads = 4, kPerThread = 300;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&log, t] {
      for (int i = 0; i < kPerThread; ++i) {
        AuditRecord r =
            MakeRecord("p" + std::to_string(t), "s" + std::to_string(t) + "-" + std::to_string(i),
                       "ns" + std::to_string(t % 2),
                       {"e" + std::to_string(t) + "_" + std::to_string(i), "shared"}, 1'000'000 * t + i);
        r.query_hash = Sha256Hex("query " + std::to_string(t) + " " + std::to_string(i));
        r.detail = {{"t", t}, {"i", i}, {"decision", "allow"}};
        log->Append(std::move(r));
      }
    });
  }
  for (std::thread& th : threads) th.join();
  ASSERT_THAT(log->Flush(), IsOk());

  std::vector<AuditRecord> all = Find(*log, {});
  ASSERT_EQ(all.size(), static_cast<size_t>(kThreads * kPerThread));
  std::map<std::pair<int, int>, const AuditRecord*> by_key;
  for (size_t k = 0; k < all.size(); ++k) {
    if (k > 0) {
      EXPECT_GT(all[k - 1].seq, all[k].seq) << "newest first";
    }
    const AuditRecord& r = all[k];
    ASSERT_TRUE(r.detail.contains("t") && r.detail.contains("i")) << r.detail.dump();
    int t = r.detail["t"], i = r.detail["i"];
    EXPECT_TRUE(by_key.emplace(std::make_pair(t, i), &r).second) << "duplicate " << t << "/" << i;
    EXPECT_EQ(r.principal, "p" + std::to_string(t));
    EXPECT_EQ(r.session, "s" + std::to_string(t) + "-" + std::to_string(i));
    EXPECT_EQ(r.name_space, "ns" + std::to_string(t % 2));
    EXPECT_EQ(r.operation, "search");
    EXPECT_EQ(r.at_us, 1'000'000 * t + i);
    EXPECT_EQ(r.query_hash, Sha256Hex("query " + std::to_string(t) + " " + std::to_string(i)));
    EXPECT_THAT(r.returned_ids, ElementsAre("e" + std::to_string(t) + "_" + std::to_string(i), "shared"));
    EXPECT_EQ(r.detail["decision"], "allow");
  }
  // Each thread's records were written in the order it appended them.
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 1; i < kPerThread; ++i) {
      auto later = by_key.find(std::make_pair(t, i));
      auto earlier = by_key.find(std::make_pair(t, i - 1));
      ASSERT_TRUE(later != by_key.end() && earlier != by_key.end());
      EXPECT_GT(later->second->seq, earlier->second->seq);
    }
  }
}

TEST_F(AuditLogTest, FiltersSelectExactlyTheMatchingRecords) {
  auto log = OpenLog();
  ASSERT_NE(log, nullptr);
  // Sessions double as labels for the records.
  log->Append(MakeRecord("alice", "r1", "alpha", {"A10"}, 100));
  log->Append(MakeRecord("alice", "r2", "alpha", {"A1", "B"}, 200));
  log->Append(MakeRecord("bob", "r3", "beta", {"A100", "A1"}, 300));
  log->Append(MakeRecord("bob", "r4", "alpha", {"xA1", "A1x", "x\"A1"}, 400));
  log->Append(MakeRecord("carol", "r5", "beta", {}, 500));
  ASSERT_THAT(log->Flush(), IsOk());

  auto with = [](auto field, std::string value) {
    AuditQuery q;
    q.*field = std::move(value);
    return q;
  };
  EXPECT_THAT(Sessions(Find(*log, with(&AuditQuery::principal, "alice"))), ElementsAre("r2", "r1"));
  EXPECT_THAT(Sessions(Find(*log, with(&AuditQuery::principal, "bob"))), ElementsAre("r4", "r3"));
  EXPECT_THAT(Sessions(Find(*log, with(&AuditQuery::principal, "ali"))), ElementsAre());
  EXPECT_THAT(Sessions(Find(*log, with(&AuditQuery::session, "r3"))), ElementsAre("r3"));
  EXPECT_THAT(Sessions(Find(*log, with(&AuditQuery::name_space, "beta"))), ElementsAre("r5", "r3"));

  EXPECT_THAT(Sessions(Find(*log, with(&AuditQuery::entry_id, "A1"))), ElementsAre("r3", "r2"));
  EXPECT_THAT(Sessions(Find(*log, with(&AuditQuery::entry_id, "A10"))), ElementsAre("r1"));
  EXPECT_THAT(Sessions(Find(*log, with(&AuditQuery::entry_id, "A100"))), ElementsAre("r3"));
  EXPECT_THAT(Sessions(Find(*log, with(&AuditQuery::entry_id, "x\"A1"))), ElementsAre("r4"));
  EXPECT_THAT(Sessions(Find(*log, with(&AuditQuery::entry_id, "A"))), ElementsAre());
  EXPECT_THAT(Sessions(Find(*log, with(&AuditQuery::entry_id, "%"))), ElementsAre());

  AuditQuery combined;
  combined.principal = "bob";
  combined.name_space = "alpha";
  EXPECT_THAT(Sessions(Find(*log, combined)), ElementsAre("r4"));
  combined.entry_id = "A1";
  EXPECT_THAT(Sessions(Find(*log, combined)), ElementsAre());

  AuditQuery since;
  since.since_us = 300;
  EXPECT_THAT(Sessions(Find(*log, since)), ElementsAre("r5", "r4", "r3"));
  since.principal = "alice";
  EXPECT_THAT(Sessions(Find(*log, since)), ElementsAre());
}

TEST_F(AuditLogTest, LimitMustBeOneToTenThousandAndKeepsTheNewest) {
  auto log = OpenLog();
  ASSERT_NE(log, nullptr);
  for (int i = 0; i < 10; ++i) log->Append(MakeRecord("alice", "s" + std::to_string(i), "alpha", {}));
  ASSERT_THAT(log->Flush(), IsOk());
  for (int bad : {0, -1, 10001, std::numeric_limits<int>::min(), std::numeric_limits<int>::max()}) {
    AuditQuery q;
    q.limit = bad;
    EXPECT_EQ(log->Query(q).status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  AuditQuery q;
  q.limit = 3;
  auto newest = log->Query(q);
  ASSERT_TRUE(newest.ok()) << newest.status();
  EXPECT_THAT(Sessions(*newest), ElementsAre("s9", "s8", "s7"));
  q.limit = 1;
  ASSERT_THAT(log->Query(q), IsOk());
  EXPECT_EQ(log->Query(q)->size(), 1u);
  q.limit = 10000;
  ASSERT_THAT(log->Query(q), IsOk());
  EXPECT_EQ(log->Query(q)->size(), 10u);
}

TEST_F(AuditLogTest, RecordsSurviveReopenAndSeqKeepsGrowing) {
  int64_t last_seq = 0;
  {
    auto log = OpenLog();
    ASSERT_NE(log, nullptr);
    log->Append(MakeRecord("alice", "before", "alpha", {"A1"}));
    ASSERT_THAT(log->Flush(), IsOk());
    auto found = Find(*log, {});
    ASSERT_EQ(found.size(), 1u);
    last_seq = found[0].seq;
  }
  auto log = OpenLog();
  ASSERT_NE(log, nullptr);
  log->Append(MakeRecord("alice", "after", "alpha", {"A2"}));
  ASSERT_THAT(log->Flush(), IsOk());
  auto found = Find(*log, {});
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].session, "after");
  EXPECT_EQ(found[1].session, "before");
  EXPECT_THAT(found[1].returned_ids, ElementsAre("A1"));
  EXPECT_EQ(found[1].seq, last_seq);
  EXPECT_GT(found[0].seq, last_seq);
}

TEST_F(AuditLogTest, RecordsAppendedJustBeforeDestructionArePersisted) {
  {
    auto log = OpenLog(/*flush_interval_ms=*/60'000);  // the interval never elapses in this test
    ASSERT_NE(log, nullptr);
    for (int i = 0; i < 500; ++i) log->Append(MakeRecord("alice", "s" + std::to_string(i), "alpha", {}));
  }
  RawDb db(db_path_);
  EXPECT_EQ(db.Count(), 500);
}

TEST_F(AuditLogTest, FlushWritesWithoutWaitingForTheInterval) {
  auto log = OpenLog(/*flush_interval_ms=*/60'000);
  ASSERT_NE(log, nullptr);
  log->Append(MakeRecord("alice", "s", "alpha", {"A1"}));
  ASSERT_THAT(log->Flush(), IsOk());
  RawDb db(db_path_);  // another connection sees the committed record
  EXPECT_EQ(db.Count(), 1);
  EXPECT_TRUE(log->Flush().ok()) << "flushing with nothing queued is fine";
}

TEST_F(AuditLogTest, FullQueueSlowsAppendDownInsteadOfGrowing) {
  auto log = OpenLog(/*flush_interval_ms=*/60'000, /*capacity=*/4);
  ASSERT_NE(log, nullptr);
  // With room for 4 records and an interval that never elapses, 200 appends can only complete
  // because the writer drains full batches while Append waits for room.
  for (int i = 0; i < 200; ++i) log->Append(MakeRecord("alice", "s" + std::to_string(i), "alpha", {}));
  ASSERT_THAT(log->Flush(), IsOk());
  EXPECT_EQ(log->DroppedCount(), 0u);
  auto found = Find(*log, {});
  ASSERT_EQ(found.size(), 200u);
  EXPECT_EQ(found.front().session, "s199");
  EXPECT_EQ(found.back().session, "s0");
}

TEST_F(AuditLogTest, StuckDiskDropsRecordsAfterAWaitAndFlushReportsIt) {
  auto log = OpenLog(/*flush_interval_ms=*/10, /*capacity=*/2);
  ASSERT_NE(log, nullptr);
  RawDb blocker(db_path_);
  ASSERT_TRUE(blocker.Exec("BEGIN IMMEDIATE"));  // holds the write lock: the writer cannot commit
  log->Append(MakeRecord("alice", "kept1", "alpha", {}));
  log->Append(MakeRecord("alice", "kept2", "alpha", {}));
  log->Append(MakeRecord("alice", "dropped", "alpha", {}));  // waits for room, then gives up
  EXPECT_EQ(log->DroppedCount(), 1u);
  ASSERT_TRUE(blocker.Exec("COMMIT"));

  absl::Status flushed = log->Flush();
  EXPECT_EQ(flushed.code(), absl::StatusCode::kResourceExhausted) << flushed;
  EXPECT_TRUE(log->Flush().ok()) << "a drop is reported once";
  EXPECT_THAT(Sessions(Find(*log, {})), ElementsAre("kept2", "kept1"));
}

TEST_F(AuditLogTest, FailedWriteIsReportedByFlushAndRetried) {
  auto log = OpenLog(/*flush_interval_ms=*/10);
  ASSERT_NE(log, nullptr);
  auto blocker = std::make_unique<RawDb>(db_path_);
  ASSERT_TRUE(blocker->Exec("BEGIN IMMEDIATE"));
  log->Append(MakeRecord("alice", "retried", "alpha", {"A1"}));
  // The writer's transaction waits out the 5 s busy timeout and fails; Flush reports that rather
  // than hanging.
  absl::Status flushed = log->Flush();
  EXPECT_EQ(flushed.code(), absl::StatusCode::kUnavailable) << flushed;
  ASSERT_TRUE(blocker->Exec("COMMIT"));
  blocker.reset();
  ASSERT_THAT(log->Flush(), IsOk());
  EXPECT_THAT(Sessions(Find(*log, {})), ElementsAre("retried"));
}

// WriteHealth (what the service fails closed on): OK before any write, the failed attempt's error
// while the file is locked, OK again after the next successful write.
TEST_F(AuditLogTest, WriteHealthFollowsTheLatestWriteAttempt) {
  auto log = OpenLog(/*flush_interval_ms=*/10);
  ASSERT_NE(log, nullptr);
  EXPECT_THAT(log->WriteHealth(), IsOk());
  auto blocker = std::make_unique<RawDb>(db_path_);
  ASSERT_TRUE(blocker->Exec("BEGIN IMMEDIATE"));
  log->Append(MakeRecord("alice", "locked", "alpha", {"A1"}));
  EXPECT_FALSE(log->Flush().ok());
  EXPECT_EQ(log->WriteHealth().code(), absl::StatusCode::kUnavailable) << log->WriteHealth();
  ASSERT_TRUE(blocker->Exec("COMMIT"));
  blocker.reset();
  ASSERT_THAT(log->Flush(), IsOk());
  EXPECT_TRUE(log->WriteHealth().ok()) << log->WriteHealth();
}

TEST_F(AuditLogTest, InvalidUtf8IsStoredReplacedNotThrown) {
  auto log = OpenLog();
  ASSERT_NE(log, nullptr);
  AuditRecord r = MakeRecord("alice", "s", "alpha", {"bad\xff"});
  r.detail = {{"note", "bad\xff"}};
  log->Append(std::move(r));
  ASSERT_THAT(log->Flush(), IsOk());
  auto found = Find(*log, {});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].returned_ids, std::vector<std::string>{"bad\xef\xbf\xbd"});
  EXPECT_EQ(found[0].detail["note"], "bad\xef\xbf\xbd");
}

TEST_F(AuditLogTest, DamagedRowsAreMarkedNotFatal) {
  auto log = OpenLog();
  ASSERT_NE(log, nullptr);
  log->Append(MakeRecord("alice", "damaged", "alpha", {"A1"}));
  log->Append(MakeRecord("alice", "fine", "alpha", {"A1"}));
  ASSERT_THAT(log->Flush(), IsOk());
  {
    RawDb db(db_path_);
    ASSERT_TRUE(
        db.Exec("UPDATE audit SET returned_ids = '[\"A1\"', detail = 'nope' WHERE session = 'damaged'"));
  }
  auto all = Find(*log, {});
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[1].session, "damaged");
  EXPECT_TRUE(all[1].returned_ids.empty());
  EXPECT_TRUE(all[1].detail.contains("corrupt"));
  AuditQuery by_id;
  by_id.entry_id = "A1";
  EXPECT_THAT(Sessions(Find(*log, by_id)), ElementsAre("fine"));
}

TEST_F(AuditLogTest, ToJsonNamesEveryField) {
  AuditRecord r = MakeRecord("alice", "s1", "alpha", {"A1", "A2"}, 77);
  r.seq = 9;
  r.detail = {{"gate", "flag"}};
  nlohmann::json j = ToJson(r);
  EXPECT_EQ(j["seq"], 9);
  EXPECT_EQ(j["at_us"], 77);
  EXPECT_EQ(j["principal"], "alice");
  EXPECT_EQ(j["session"], "s1");
  EXPECT_EQ(j["namespace"], "alpha");
  EXPECT_EQ(j["operation"], "search");
  EXPECT_EQ(j["query_hash"], r.query_hash);
  EXPECT_EQ(j["returned_ids"], nlohmann::json::array({"A1", "A2"}));
  EXPECT_EQ(j["detail"]["gate"], "flag");
  EXPECT_EQ(j.size(), 9u);
}

TEST_F(AuditLogTest, OpenRejectsBadSettings) {
  EXPECT_EQ(AuditLog::Open(db_path_, 0).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(AuditLog::Open(db_path_, 60'001).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(AuditLog::Open(db_path_, 50, 0).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(AuditLog::Open(dir_ / "missing.db").status().code(), absl::StatusCode::kNotFound);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "missing.db")) << "no stray file is created";
}

TEST_F(AuditLogTest, OpenForStoreKeepsTheLogBesideTheStoreDatabase) {
  EXPECT_EQ(AuditLog::OpenForStore(dir_ / "missing.db").status().code(), absl::StatusCode::kNotFound);
  {
    auto log = AuditLog::OpenForStore(db_path_);
    ASSERT_TRUE(log.ok()) << log.status();
    (*log)->Append(MakeRecord("alice", "s1", "ns", {"01AAAAAAAAAAAAAAAAAAAAAAAA"}));
    ASSERT_THAT((*log)->Flush(), IsOk());
  }
  EXPECT_EQ(AuditDatabaseFor(db_path_), dir_ / "audit.db");
  EXPECT_EQ(RawDb(dir_ / "audit.db").Count(), 1);
  EXPECT_EQ(RawDb(db_path_).Count(), -1) << "no audit table in the store's own file";
  auto reopened = AuditLog::OpenForStore(db_path_);
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  EXPECT_THAT(Sessions(Find(**reopened, {})), ElementsAre("s1"));
}

TEST_F(AuditLogTest, OpenForStoreMovesRecordsOfTheOlderLayoutOnce) {
  {
    auto old_layout = AuditLog::Open(db_path_);  // the log in the store's own file, as before
    ASSERT_TRUE(old_layout.ok()) << old_layout.status();
    (*old_layout)->Append(MakeRecord("alice", "old1", "ns", {"01AAAAAAAAAAAAAAAAAAAAAAAA"}));
    (*old_layout)->Append(MakeRecord("bob", "old2", "ns", {}));
    ASSERT_THAT((*old_layout)->Flush(), IsOk());
  }
  std::vector<AuditRecord> moved;
  {
    auto log = AuditLog::OpenForStore(db_path_);
    ASSERT_TRUE(log.ok()) << log.status();
    moved = Find(**log, {});
    EXPECT_THAT(Sessions(moved), ElementsAre("old2", "old1"));
    (*log)->Append(MakeRecord("carol", "new", "ns", {}));
    ASSERT_THAT((*log)->Flush(), IsOk());
  }
  EXPECT_EQ(RawDb(db_path_).Count(), -1) << "the old table is dropped";
  // A crash between the copy and the drop leaves both: the next open copies again without duplicates.
  {
    auto old_layout = AuditLog::Open(db_path_);
    ASSERT_THAT(old_layout, IsOk());
    (*old_layout)->Append(MakeRecord("alice", "old1", "ns", {"01AAAAAAAAAAAAAAAAAAAAAAAA"}));
    ASSERT_THAT((*old_layout)->Flush(), IsOk());
  }
  ASSERT_TRUE(RawDb(db_path_).Exec("UPDATE audit SET seq = 1"));
  auto log = AuditLog::OpenForStore(db_path_);
  ASSERT_TRUE(log.ok()) << log.status();
  const std::vector<AuditRecord> all = Find(**log, {});
  ASSERT_THAT(Sessions(all), ElementsAre("new", "old2", "old1"));
  EXPECT_EQ(all[1].seq, moved[0].seq) << "records keep their seq";
  EXPECT_EQ(all[2].seq, moved[1].seq);
  EXPECT_GT(all[0].seq, all[1].seq);
  EXPECT_EQ(all[2].returned_ids, moved[1].returned_ids);
}

}  // namespace
}  // namespace bulwark
