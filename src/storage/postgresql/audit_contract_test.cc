// The contract of AuditRepository (audit_repository.h): one test body per behaviour, run against
// the SQLite and the PostgreSQL implementation (StoreUnderTest). Rows round-trip byte for byte
// (tags with NUL bytes, unsigned rows), seqs are assigned after the head in order, a taken seq or a
// failing batch writes nothing, Query filters and orders as documented (an entry id matches whole
// elements only), Scan visits every row in seq order, and two connections appending at once never
// fork the chain.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "storage/audit_repository.h"
#include "storage/postgresql/testing/store_under_test.h"
#include "testing/status_matchers.h"

namespace bulwark {
namespace {

using ::bulwark::testing::IsOk;
using ::bulwark::testing::StatusIs;
using ::bulwark::testing::StoreKind;
using ::bulwark::testing::StoreUnderTest;

class AuditContract : public ::testing::TestWithParam<StoreKind> {
 protected:
  void SetUp() override {
    auto store = StoreUnderTest::Create(GetParam());
    ASSERT_THAT(store, IsOk());
    store_ = *std::move(store);
    ASSERT_THAT(store_->OpenBackend(/*create=*/true), IsOk());  // makes the store
    auto audit = store_->OpenAudit();
    ASSERT_THAT(audit, IsOk());
    audit_ = *std::move(audit);
  }
  // Appends `rows` as one batch; returns the head `build` saw.
  absl::StatusOr<AuditHead> AppendRows(AuditRepository& repo, std::vector<AuditRow> rows) {
    AuditHead seen;
    absl::Status s = repo.Append([&](const AuditHead& head) -> absl::StatusOr<std::vector<AuditRow>> {
      seen = head;
      return rows;
    });
    if (!s.ok()) return s;
    return seen;
  }
  std::vector<AuditRow> All(AuditRepository& repo) {
    std::vector<AuditRow> rows;
    EXPECT_THAT(repo.Scan([&](const AuditRow& r) {
      rows.push_back(r);
      return absl::OkStatus();
    }),
                IsOk());
    return rows;
  }

  std::unique_ptr<StoreUnderTest> store_;
  std::unique_ptr<AuditRepository> audit_;
};

AuditRow Row(std::string principal, std::string returned_ids, int64_t at_us = 1000) {
  AuditRow r;
  r.at_us = at_us;
  r.principal = std::move(principal);
  r.session = "s1";
  r.name_space = "ns";
  r.operation = "search";
  r.query_hash = "qh";
  r.returned_ids = std::move(returned_ids);
  r.detail = R"({"k":1})";
  r.key_id = 3;
  r.tag = std::string("\x00\x01tag\xff", 6);
  return r;
}

TEST_P(AuditContract, RowsRoundTripAndSeqsFollowTheHead) {
  auto head = audit_->Head();
  ASSERT_THAT(head, IsOk());
  EXPECT_EQ(head->seq, 0);
  EXPECT_EQ(head->tag, std::nullopt);
  AuditRow unsigned_row = Row("bob", R"(["B"])");
  unsigned_row.tag.reset();
  unsigned_row.key_id = 0;
  ASSERT_THAT(AppendRows(*audit_, {Row("alice", R"(["A1","A2"])"), unsigned_row}), IsOk());
  auto seen = AppendRows(*audit_, {Row("carol", "[]")});
  ASSERT_THAT(seen, IsOk());
  EXPECT_EQ(seen->seq, 2);
  EXPECT_EQ(seen->tag, std::nullopt);  // the unsigned row is the head
  const std::vector<AuditRow> rows = All(*audit_);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].seq, 1);
  EXPECT_EQ(rows[0].principal, "alice");
  EXPECT_EQ(rows[0].returned_ids, R"(["A1","A2"])");
  EXPECT_EQ(rows[0].detail, R"({"k":1})");
  EXPECT_EQ(rows[0].key_id, 3u);
  EXPECT_EQ(rows[0].tag, std::string("\x00\x01tag\xff", 6));
  EXPECT_EQ(rows[1].tag, std::nullopt);
  EXPECT_EQ(rows[2].seq, 3);
  head = audit_->Head();
  ASSERT_THAT(head, IsOk());
  EXPECT_EQ(head->seq, 3);
  EXPECT_EQ(head->tag, std::string("\x00\x01tag\xff", 6));
  // A second connection (another process) sees the same rows.
  auto other = store_->OpenAudit();
  ASSERT_THAT(other, IsOk());
  EXPECT_EQ(All(**other).size(), 3u);
}

TEST_P(AuditContract, ExplicitSeqsMustBeAboveTheHeadAndFailuresWriteNothing) {
  AuditRow numbered = Row("a", "[]");
  numbered.seq = 10;
  ASSERT_THAT(AppendRows(*audit_, {numbered}), IsOk());
  AuditRow taken = Row("b", "[]");
  taken.seq = 10;
  EXPECT_THAT(AppendRows(*audit_, {Row("c", "[]"), taken}), StatusIs(absl::StatusCode::kAlreadyExists));
  EXPECT_THAT(audit_->Append([](const AuditHead&) -> absl::StatusOr<std::vector<AuditRow>> {
    return absl::InternalError("build failed");
  }),
              StatusIs(absl::StatusCode::kInternal));
  const std::vector<AuditRow> rows = All(*audit_);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].seq, 10);
  ASSERT_THAT(AppendRows(*audit_, {Row("d", "[]")}), IsOk());
  EXPECT_EQ(All(*audit_).back().seq, 11);
}

TEST_P(AuditContract, QueryFiltersNewestFirstAndMatchesWholeIds) {
  ASSERT_THAT(AppendRows(*audit_, {Row("alice", R"(["A10"])", 100), Row("bob", R"(["A1","X"])", 200),
                                   Row("alice", "not json \"A1\"", 300), Row("alice", R"(["A1"])", 400)}),
              IsOk());
  AuditFilter by_alice;
  by_alice.principal = "alice";
  auto rows = audit_->Query(by_alice);
  ASSERT_THAT(rows, IsOk());
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_EQ((*rows)[0].seq, 4);
  EXPECT_EQ((*rows)[2].seq, 1);
  AuditFilter by_id;
  by_id.entry_id = "A1";
  rows = audit_->Query(by_id);
  ASSERT_THAT(rows, IsOk());
  ASSERT_EQ(rows->size(), 2u);  // not A10, not the damaged row
  EXPECT_EQ((*rows)[0].seq, 4);
  EXPECT_EQ((*rows)[1].seq, 2);
  by_id.limit = 1;
  rows = audit_->Query(by_id);
  ASSERT_THAT(rows, IsOk());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].seq, 4);
  AuditFilter since;
  since.since_us = 200;
  since.name_space = "ns";
  since.session = "s1";
  rows = audit_->Query(since);
  ASSERT_THAT(rows, IsOk());
  EXPECT_EQ(rows->size(), 3u);
  since.session = "other";
  rows = audit_->Query(since);
  ASSERT_THAT(rows, IsOk());
  EXPECT_TRUE(rows->empty());
  AuditFilter bad;
  bad.limit = 0;
  EXPECT_THAT(audit_->Query(bad), StatusIs(absl::StatusCode::kInvalidArgument));
  bad.limit = AuditRepository::kMaxQueryLimit + 1;
  EXPECT_THAT(audit_->Query(bad), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST_P(AuditContract, ScanStopsOnTheVisitorsErrorAndReopeningKeepsRows) {
  ASSERT_THAT(AppendRows(*audit_, {Row("a", "[]"), Row("b", "[]"), Row("c", "[]")}), IsOk());
  int visited = 0;
  EXPECT_THAT(audit_->Scan([&](const AuditRow&) {
    return ++visited == 2 ? absl::DataLossError("stop") : absl::OkStatus();
  }),
              StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_EQ(visited, 2);
  audit_.reset();
  auto reopened = store_->OpenAudit();  // Upgrade again: idempotent
  ASSERT_THAT(reopened, IsOk());
  EXPECT_THAT((*reopened)->Upgrade(), IsOk());
  EXPECT_EQ(All(**reopened).size(), 3u);
}

// Each batch records the head it was built on; with two writers racing, every batch must be built
// on the row just before it (no fork), and seqs are 1..N without gaps.
TEST_P(AuditContract, ConcurrentAppendersNeverForkTheChain) {
  auto second = store_->OpenAudit();
  ASSERT_THAT(second, IsOk());
  constexpr int kBatches = 15;
  auto writer = [&](AuditRepository* repo, std::string who) {
    for (int i = 0; i < kBatches; ++i) {
      absl::Status s = repo->Append([&](const AuditHead& head) -> absl::StatusOr<std::vector<AuditRow>> {
        AuditRow a = Row(who, "[]");
        a.detail = std::to_string(head.seq);  // the head this batch links to
        return std::vector<AuditRow>{a, Row(who, "[]")};
      });
      EXPECT_THAT(s, IsOk());
    }
  };
  std::thread t1(writer, audit_.get(), "one");
  std::thread t2(writer, second->get(), "two");
  t1.join();
  t2.join();
  const std::vector<AuditRow> rows = All(*audit_);
  ASSERT_EQ(rows.size(), 4u * kBatches);
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].seq, static_cast<int64_t>(i + 1));
    if (i % 2 == 0) {
      EXPECT_EQ(rows[i].detail, std::to_string(i)) << "batch at seq " << rows[i].seq;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, AuditContract, ::testing::Values(StoreKind::kSqlite, StoreKind::kPostgres),
                         [](const auto& info) { return ::bulwark::testing::StoreKindName(info.param); });

}  // namespace
}  // namespace bulwark
