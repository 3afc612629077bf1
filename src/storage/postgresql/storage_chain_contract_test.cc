// The StorageBackend contract of the history chain and the metadata scans (storage_backend.h,
// "The history chain"; ScanMeta, DeleteMeta): one test body per behaviour, run against
// SqliteBackend and PostgresBackend (StoreUnderTest). The chain's signer here is a fake that
// makes each link from the event's seq and the previous link, so a test can recompute every link:
// the HMACs themselves are store/history_chain.h's and are tested there.
#include <absl/strings/str_cat.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "core/hex.h"
#include "storage/postgresql/testing/backend_contract_fixture.h"
#include "storage/sqlite/sqlite_schema.h"

namespace bulwark {
namespace {

using ::bulwark::testing::AddEvent;
using ::bulwark::testing::IsOk;
using ::bulwark::testing::MakeEntry;
using ::bulwark::testing::StatusIs;
using ::bulwark::testing::StoreKind;

// Links an event to its seq, its entry and the previous link (hashed, so links stay short).
class FakeChain : public HistoryChainSigner {
 public:
  HistoryLink Link(const HistoryEvent& event, std::string_view previous_link) const override {
    return {7,
            absl::StrCat(event.seq, "/", event.entry_id, "<", std::hash<std::string_view>{}(previous_link))};
  }
  HistoryHead Head(int64_t seq, std::string_view link) const override {
    return {seq, std::string(link), 7, absl::StrCat("tag:", seq, ":", std::string(link))};
  }
  absl::Status CheckHead(const HistoryHead& head) const override {
    if (head.tag == Head(head.seq, head.link).tag) return absl::OkStatus();
    return absl::DataLossError("bad head tag");
  }
};

class HistoryChainContract : public ::bulwark::testing::StorageBackendContract {
 protected:
  // The events and links in seq order.
  std::vector<std::pair<HistoryEvent, HistoryLink>> Chain(StorageBackend& db) {
    std::vector<std::pair<HistoryEvent, HistoryLink>> out;
    EXPECT_THAT(db.ScanHistoryChain([&](const HistoryEvent& ev, const HistoryLink& link) {
      out.emplace_back(ev, link);
      return absl::OkStatus();
    }),
                IsOk());
    return out;
  }
  // Every event linked after the one before, seqs 1..n, and the head naming the last one.
  void ExpectWholeChain(StorageBackend& db, size_t expected_events) {
    const auto chain = Chain(db);
    ASSERT_EQ(chain.size(), expected_events);
    std::string previous;
    for (size_t i = 0; i < chain.size(); ++i) {
      const auto& [ev, link] = chain[i];
      EXPECT_EQ(ev.seq, static_cast<int64_t>(i + 1));
      EXPECT_EQ(link.key_id, 7u);
      EXPECT_EQ(link.link, chain_.Link(ev, previous).link) << "event " << ev.seq << " is not linked to " << i;
      previous = link.link;
    }
    auto head = db.HistoryChainHead();
    ASSERT_THAT(head, IsOk());
    ASSERT_TRUE(head->has_value());
    EXPECT_EQ((*head)->seq, static_cast<int64_t>(expected_events));
    EXPECT_EQ((*head)->link, previous);
    EXPECT_THAT(chain_.CheckHead(**head), IsOk());
    auto newest = db.NewestLink();
    ASSERT_THAT(newest, IsOk());
    EXPECT_EQ(newest->first, static_cast<int64_t>(expected_events));
    EXPECT_EQ(newest->second.link, previous);
  }

  FakeChain chain_;
};

TEST_P(HistoryChainContract, EveryWriteLinksItsEventsToTheNewestAndMovesTheHead) {
  db_->SetHistoryChain(&chain_);
  Entry a = MakeEntry("A1");
  Entry b = MakeEntry("B1");
  ASSERT_THAT(
      db_->InsertEntries(std::vector<Entry>{a, b}, std::vector<HistoryEvent>{AddEvent(a), AddEvent(b)}),
      IsOk());
  ExpectWholeChain(*db_, 2);
  Entry next = a;
  next.text = "changed";
  next.updated_at_us = 200;
  ASSERT_THAT(db_->UpdateEntry(next, a.updated_at_us, {0, "A1", "default", "update", "alice", 200, {}}),
              IsOk());
  ExpectWholeChain(*db_, 3);
  // A purge rewrites earlier events' details but keeps their links.
  auto history = db_->History("default", "A1");
  ASSERT_THAT(history, IsOk());
  std::vector<HistoryEvent> scrubbed = *history;
  for (HistoryEvent& ev : scrubbed) ev.detail = {{"scrubbed", true}};
  Entry purged = next;
  purged.text.clear();
  purged.state = State::kPurged;
  purged.updated_at_us = 300;
  ASSERT_THAT(db_->PurgeEntry(purged, 200, scrubbed, {0, "A1", "default", "purge", "alice", 300, {}}),
              IsOk());
  ExpectWholeChain(*db_, 4);
  // Many events at once (PostgreSQL loads 32 or more with COPY).
  std::vector<Entry> batch;
  std::vector<HistoryEvent> events;
  for (int i = 0; i < 40; ++i) {
    batch.push_back(MakeEntry(absl::StrCat("C", 100 + i)));
    events.push_back(AddEvent(batch.back()));
  }
  ASSERT_THAT(db_->InsertEntries(batch, events), IsOk());
  ExpectWholeChain(*db_, 44);
  InsertClaim claim;
  claim.idempotency_key = "k1";
  claim.request_hash = "h";
  Entry once = MakeEntry("D1");
  auto outcome = db_->InsertEntriesOnce({&once, 1}, std::vector<HistoryEvent>{AddEvent(once)}, claim);
  ASSERT_THAT(outcome, IsOk());
  ASSERT_EQ(outcome->row_ids.size(), 1u);
  ExpectWholeChain(*db_, 45);
  // The head is stored as the same JSON in both backends (doc/entry_format.md, "History chain").
  auto stored = db_->GetMeta(kHistoryHeadKey);
  ASSERT_THAT(stored, IsOk());
  auto head = db_->HistoryChainHead();
  ASSERT_THAT(head, IsOk());
  const nlohmann::json json = {
      {"seq", 45}, {"link", HexEncode((*head)->link)}, {"key_id", 7}, {"tag", HexEncode((*head)->tag)}};
  EXPECT_EQ(*stored, json.dump());
}

TEST_P(HistoryChainContract, AFailedWriteLeavesTheChainAndTheHeadAsTheyWere) {
  db_->SetHistoryChain(&chain_);
  Entry a = MakeEntry("A1");
  ASSERT_THAT(db_->InsertEntries({&a, 1}, std::vector<HistoryEvent>{AddEvent(a)}), IsOk());
  auto before = db_->HistoryChainHead();
  ASSERT_THAT(before, IsOk());
  EXPECT_THAT(db_->InsertEntries({&a, 1}, std::vector<HistoryEvent>{AddEvent(a)}),
              StatusIs(absl::StatusCode::kAlreadyExists));
  EXPECT_THAT(db_->UpdateEntry(a, /*expected_updated_at_us=*/999, {0, "A1", "default", "update", "x", 1, {}}),
              StatusIs(absl::StatusCode::kAborted));
  auto after = db_->HistoryChainHead();
  ASSERT_THAT(after, IsOk());
  ASSERT_TRUE(after->has_value());
  EXPECT_EQ((*after)->seq, (*before)->seq);
  EXPECT_EQ((*after)->tag, (*before)->tag);
  Entry b = MakeEntry("B1");
  ASSERT_THAT(db_->InsertEntries({&b, 1}, std::vector<HistoryEvent>{AddEvent(b)}), IsOk());
  ExpectWholeChain(*db_, 2);
}

TEST_P(HistoryChainContract, WritersOnSeveralConnectionsNeverForkTheChain) {
  constexpr int kWriters = 3;
  constexpr int kWrites = 15;
  std::vector<std::unique_ptr<StorageBackend>> conns;
  for (int w = 0; w < kWriters; ++w) {
    conns.push_back(Open());
    ASSERT_NE(conns.back(), nullptr);
    conns.back()->SetHistoryChain(&chain_);
  }
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      for (int i = 0; i < kWrites; ++i) {
        Entry e = MakeEntry(absl::StrCat("W", w, "-", 100 + i), absl::StrCat("ns", w));
        EXPECT_THAT(conns[w]->InsertEntries({&e, 1}, std::vector<HistoryEvent>{AddEvent(e)}), IsOk());
      }
    });
  }
  for (auto& t : threads) t.join();
  ExpectWholeChain(*db_, kWriters * kWrites);
}

TEST_P(HistoryChainContract, WritesAreRefusedWhenTheHeadDoesNotNameTheNewestEvent) {
  db_->SetHistoryChain(&chain_);
  for (const char* id : {"A1", "B1"}) {
    Entry e = MakeEntry(id);
    ASSERT_THAT(db_->InsertEntries({&e, 1}, std::vector<HistoryEvent>{AddEvent(e)}), IsOk());
  }
  ASSERT_THAT(store_->ExecSql("DELETE FROM history WHERE seq = 2"), IsOk());  // the tail, truncated
  Entry c = MakeEntry("C1");
  EXPECT_THAT(db_->InsertEntries({&c, 1}, std::vector<HistoryEvent>{AddEvent(c)}),
              StatusIs(absl::StatusCode::kDataLoss));
  auto missing = db_->GetEntry("default", "C1");
  ASSERT_THAT(missing, IsOk());
  EXPECT_FALSE(missing->has_value()) << "nothing was written";
  // A head naming the newest event but with a forged tag is refused too.
  ASSERT_THAT(db_->PutMeta(kHistoryHeadKey, nlohmann::json{{"seq", 1},
                                                           {"link", HexEncode(Chain(*db_)[0].second.link)},
                                                           {"key_id", 7},
                                                           {"tag", "00"}}
                                                .dump()),
              IsOk());
  EXPECT_THAT(db_->InsertEntries({&c, 1}, std::vector<HistoryEvent>{AddEvent(c)}),
              StatusIs(absl::StatusCode::kDataLoss));
  ASSERT_THAT(db_->PutMeta(kHistoryHeadKey, "not json"), IsOk());
  EXPECT_THAT(db_->HistoryChainHead(), StatusIs(absl::StatusCode::kDataLoss));
}

TEST_P(HistoryChainContract, WithoutASignerEventsAreUnlinkedAndEventsFromBeforeTheChainAreLinkedOnce) {
  auto empty = db_->NewestLink();
  ASSERT_THAT(empty, IsOk());
  EXPECT_EQ(empty->first, 0);
  EXPECT_TRUE(empty->second.link.empty());
  EXPECT_THAT(db_->LinkEventsFromBeforeTheChain(), StatusIs(absl::StatusCode::kFailedPrecondition));
  for (const char* id : {"A1", "B1", "C1"}) {
    Entry e = MakeEntry(id);
    ASSERT_THAT(db_->InsertEntries({&e, 1}, std::vector<HistoryEvent>{AddEvent(e)}), IsOk());
  }
  for (const auto& [ev, link] : Chain(*db_)) EXPECT_TRUE(link.link.empty()) << "event " << ev.seq;
  auto no_head = db_->HistoryChainHead();
  ASSERT_THAT(no_head, IsOk());
  EXPECT_FALSE(no_head->has_value());
  // What an upgraded store's migration leaves (sqlite_schema.cc, version 4).
  ASSERT_THAT(db_->PutMeta(kUnlinkedHistoryMarker, "3"), IsOk());
  db_->SetHistoryChain(&chain_);
  auto linked = db_->LinkEventsFromBeforeTheChain();
  ASSERT_THAT(linked, IsOk());
  EXPECT_EQ(*linked, 3);
  ExpectWholeChain(*db_, 3);
  EXPECT_EQ(*db_->GetMeta(kUnlinkedHistoryMarker), std::nullopt);
  auto again = db_->LinkEventsFromBeforeTheChain();
  ASSERT_THAT(again, IsOk());
  EXPECT_EQ(*again, 0);
  Entry d = MakeEntry("D1");
  ASSERT_THAT(db_->InsertEntries({&d, 1}, std::vector<HistoryEvent>{AddEvent(d)}), IsOk());
  ExpectWholeChain(*db_, 4);
}

TEST_P(HistoryChainContract, ScanMetaVisitsAPrefixInKeyOrderAndDeleteMetaRemovesOneKey) {
  for (const char* key : {"retrieval/b", "retrieval/a", "retrievalx", "p%q", "pxq", "p_q"}) {
    ASSERT_THAT(db_->PutMeta(key, absl::StrCat("v-", key)), IsOk());
  }
  auto scan = [&](std::string_view prefix) {
    std::vector<std::string> seen;
    EXPECT_THAT(db_->ScanMeta(prefix,
                              [&](std::string_view key, std::string_view value) {
                                EXPECT_EQ(value, "v-" + std::string(key));
                                seen.emplace_back(key);
                                return absl::OkStatus();
                              }),
                IsOk());
    return seen;
  };
  EXPECT_THAT(scan("retrieval/"), ::testing::ElementsAre("retrieval/a", "retrieval/b"));
  EXPECT_THAT(scan("p%"), ::testing::ElementsAre("p%q")) << "a prefix is literal, not a pattern";
  EXPECT_THAT(scan("p_"), ::testing::ElementsAre("p_q"));
  EXPECT_THAT(scan("nothing"), ::testing::IsEmpty());
  int visits = 0;
  EXPECT_THAT(db_->ScanMeta("retrieval/",
                            [&](std::string_view, std::string_view) {
                              ++visits;
                              return absl::CancelledError("stop");
                            }),
              StatusIs(absl::StatusCode::kCancelled));
  EXPECT_EQ(visits, 1) << "the visitor's error stops the scan";
  ASSERT_THAT(db_->DeleteMeta("retrieval/a"), IsOk());
  EXPECT_EQ(*db_->GetMeta("retrieval/a"), std::nullopt);
  EXPECT_THAT(scan("retrieval/"), ::testing::ElementsAre("retrieval/b"));
  EXPECT_THAT(db_->DeleteMeta("retrieval/a"), IsOk()) << "deleting an absent key is OK";
}

INSTANTIATE_TEST_SUITE_P(Backends, HistoryChainContract,
                         ::testing::Values(StoreKind::kSqlite, StoreKind::kPostgres),
                         [](const auto& info) { return ::bulwark::testing::StoreKindName(info.param); });

}  // namespace
}  // namespace bulwark
