// The StorageBackend and DefenseStateRepository contract (storage_backend.h,
// defense_state_repository.h): one test body per behaviour, run against SqliteBackend and
// PostgresBackend (StoreUnderTest). What only one backend does (SQLite's file bytes after a purge)
// stays in that backend's own test.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <thread>
#include <vector>

#include "storage/postgresql/testing/backend_contract_fixture.h"
#include "storage/stored_report.h"

namespace bulwark {
namespace {

using ::bulwark::testing::AddEvent;
using ::bulwark::testing::IsOk;
using ::bulwark::testing::MakeEntry;
using ::bulwark::testing::StatusIs;
using ::bulwark::testing::StorageBackendContract;
using ::bulwark::testing::StoreKind;
using ::bulwark::testing::StoreUnderTest;

TEST_P(StorageBackendContract, InsertGetRoundTripsEveryField) {
  Entry e = MakeEntry("A1");
  e.metadata = {{"k", "v"}, {"n", 5}, {"nested", {{"a", {1, 2}}}}};
  e.report = {{"gate", {{"flagged", true}}}};
  e.state = State::kQuarantined;
  e.source = Source::kTool;
  auto rows = db_->InsertEntries({&e, 1}, std::vector<HistoryEvent>{AddEvent(e)});
  ASSERT_THAT(rows, IsOk());
  auto got = db_->GetEntry("default", "A1");
  ASSERT_THAT(got, IsOk());
  ASSERT_TRUE(got->has_value());
  const Entry& g = (*got)->entry;
  EXPECT_TRUE((*got)->ok()) << (*got)->decode_error;
  EXPECT_EQ((*got)->row_id, (*rows)[0]);
  EXPECT_EQ(g.text, "hello");
  EXPECT_EQ(g.metadata, e.metadata);
  EXPECT_EQ(g.report, e.report);
  EXPECT_EQ(g.principal, "alice");
  EXPECT_EQ(g.state, State::kQuarantined);
  EXPECT_EQ(g.source, Source::kTool);
  EXPECT_EQ(g.embedding, e.embedding);
  EXPECT_EQ(g.tag, e.tag);
  EXPECT_EQ(g.key_id, 1u);
  EXPECT_EQ(g.created_at_us, 123);
  auto history = db_->History("default", "A1");
  ASSERT_THAT(history, IsOk());
  ASSERT_EQ(history->size(), 1u);
  EXPECT_EQ((*history)[0].detail, AddEvent(e).detail);
}

// Issue #12 point 3 on both engines: a passed write's report is stored as its verdict only; a
// report with something to act on (flagged, or a quarantine) is kept whole.
TEST_P(StorageBackendContract, APassedWritesReportIsStoredAsItsVerdictOnly) {
  Entry passed = MakeEntry("P1");
  passed.report = {{"gate", {{"flagged", false}, {"detectors", {{"memsad", {{"score", 0.1}}}}}}}};
  Entry flagged = MakeEntry("F1");
  flagged.report = {{"gate", {{"flagged", true}, {"detectors", {{"memsad", {{"score", 0.9}}}}}}}};
  const std::vector<Entry> entries = {passed, flagged};
  ASSERT_THAT(db_->InsertEntries(entries, std::vector<HistoryEvent>{AddEvent(passed), AddEvent(flagged)}),
              IsOk());
  auto got_passed = db_->GetEntry("default", "P1");
  auto got_flagged = db_->GetEntry("default", "F1");
  ASSERT_THAT(got_passed, IsOk());
  ASSERT_THAT(got_flagged, IsOk());
  ASSERT_TRUE(got_passed->has_value() && got_flagged->has_value());
  EXPECT_EQ((*got_passed)->entry.report, PassedReport());
  EXPECT_EQ((*got_flagged)->entry.report, flagged.report);
  EXPECT_TRUE((*got_passed)->ok()) << (*got_passed)->decode_error;
}

TEST_P(StorageBackendContract, GetRowsReadsRequestedRowsInOrderWithSignedColumnsButNotTheReport) {
  Entry e = MakeEntry("A1");
  e.report = {{"gate", {{"flagged", false}}}};
  auto rows = db_->InsertEntries({&e, 1}, std::vector<HistoryEvent>{AddEvent(e)});
  ASSERT_THAT(rows, IsOk());
  const std::vector<int64_t> ids = {(*rows)[0] + 1000, (*rows)[0], (*rows)[0]};  // missing, then repeated
  auto read = db_->GetRows(ids);
  ASSERT_THAT(read, IsOk());
  ASSERT_EQ(read->size(), 3u);
  EXPECT_FALSE((*read)[0].has_value());
  ASSERT_TRUE((*read)[1].has_value() && (*read)[2].has_value());
  EXPECT_TRUE((*read)[1]->ok()) << (*read)[1]->decode_error;
  EXPECT_EQ((*read)[1]->entry.text, "hello");
  EXPECT_EQ((*read)[2]->entry.tag, e.tag);
  EXPECT_TRUE((*read)[1]->entry.report.empty());
  auto none = db_->GetRows({});
  ASSERT_THAT(none, IsOk());
  EXPECT_TRUE(none->empty());
}

TEST_P(StorageBackendContract, NamespacesArePartitions) {
  Entry e = MakeEntry("A1", "alice");
  ASSERT_THAT(db_->InsertEntries({&e, 1}, {}), IsOk());
  auto other = db_->GetEntry("bob", "A1");
  ASSERT_THAT(other, IsOk());
  EXPECT_FALSE(other->has_value());
  EXPECT_TRUE(Scan("bob").empty());
  EXPECT_EQ(Scan("alice").size(), 1u);
}

TEST_P(StorageBackendContract, BatchIsAllOrNothing) {
  std::vector<Entry> batch = {MakeEntry("A1"), MakeEntry("A2"), MakeEntry("A1")};  // duplicate id
  EXPECT_THAT(db_->InsertEntries(batch, {}), StatusIs(absl::StatusCode::kAlreadyExists));
  auto got = db_->GetEntry("default", "A2");
  ASSERT_THAT(got, IsOk());
  EXPECT_FALSE(got->has_value()) << "a failed batch must leave nothing behind";
  auto last = db_->LastEventSeq();
  ASSERT_THAT(last, IsOk());
  EXPECT_EQ(*last, 0);
}

// Large batches take another path on PostgreSQL (COPY instead of a pipeline of INSERTs): the same
// contract holds.
TEST_P(StorageBackendContract, LargeBatchesAreAllOrNothingToo) {
  std::vector<Entry> batch;
  std::vector<HistoryEvent> events;
  for (int i = 0; i < 40; ++i) {
    batch.push_back(MakeEntry("L" + std::to_string(100 + i), "default", "text\t\n\\ " + std::to_string(i)));
    events.push_back(AddEvent(batch.back()));
  }
  auto rows = db_->InsertEntries(batch, events);
  ASSERT_THAT(rows, IsOk());
  ASSERT_EQ(rows->size(), 40u);
  EXPECT_TRUE(std::is_sorted(rows->begin(), rows->end()));
  EXPECT_EQ(db_->TakeInsertedEventSeqs().size(), 40u);
  auto got = db_->GetRows(*rows);
  ASSERT_THAT(got, IsOk());
  ASSERT_TRUE((*got)[7].has_value());
  EXPECT_EQ((*got)[7]->entry.id, "L107");
  EXPECT_EQ((*got)[7]->entry.text, "text\t\n\\ 7") << "tabs, newlines and backslashes survive";
  EXPECT_EQ((*got)[7]->entry.embedding, batch[7].embedding);
  auto history = db_->History("default", "L139");
  ASSERT_THAT(history, IsOk());
  ASSERT_EQ(history->size(), 1u);
  EXPECT_EQ((*history)[0].seq, 40);

  std::vector<Entry> again;
  for (int i = 0; i < 40; ++i) again.push_back(MakeEntry("M" + std::to_string(100 + i)));
  again.back().id = "L100";  // taken
  EXPECT_THAT(db_->InsertEntries(again, events), StatusIs(absl::StatusCode::kAlreadyExists));
  EXPECT_EQ(*db_->GetEntry("default", "M100"), std::nullopt);
  EXPECT_EQ(*db_->LastEventSeq(), 40);
  EXPECT_EQ(Scan("").size(), 40u);
}

TEST_P(StorageBackendContract, SurvivesReopenAndRefusesMissingAndUnknownVersions) {
  Entry e = MakeEntry("A1");
  ASSERT_THAT(db_->InsertEntries({&e, 1}, {}), IsOk());
  ASSERT_THAT(db_->PutMeta("x", "y"), IsOk());
  ASSERT_THAT(db_->PutMeta("x", "z"), IsOk());
  db_.reset();
  auto db = Open(/*create=*/false);
  ASSERT_NE(db, nullptr);
  auto got = db->GetEntry("default", "A1");
  ASSERT_THAT(got, IsOk());
  EXPECT_TRUE(got->has_value());
  EXPECT_EQ(*db->GetMeta("x"), std::optional<std::string>("z"));
  EXPECT_EQ(*db->GetMeta("absent"), std::nullopt);
  db.reset();
  ASSERT_THAT(store_->ExecSql("UPDATE meta SET value='99' WHERE key='schema_version'"), IsOk());
  EXPECT_THAT(store_->OpenBackend(false), StatusIs(absl::StatusCode::kFailedPrecondition));

  auto empty = StoreUnderTest::Create(GetParam());
  ASSERT_THAT(empty, IsOk());
  EXPECT_THAT((*empty)->OpenBackend(/*create=*/false), StatusIs(absl::StatusCode::kNotFound));
}

TEST_P(StorageBackendContract, PurgeScrubsHistory) {
  Entry e = MakeEntry("A1", "default", "secret text");
  ASSERT_THAT(db_->InsertEntries({&e, 1}, std::vector<HistoryEvent>{AddEvent(e)}), IsOk());
  Entry purged = e;
  purged.text.clear();
  purged.state = State::kPurged;
  auto before = db_->History("default", "A1");
  ASSERT_THAT(before, IsOk());
  std::vector<HistoryEvent> scrubbed = *before;
  for (HistoryEvent& ev : scrubbed) {
    ev.detail = {{"purged", true}};
    ev.key_id = 3;
    ev.tag = std::string(32, 'T');
  }
  ASSERT_THAT(
      db_->PurgeEntry(purged, e.updated_at_us, scrubbed, {0, "A1", "default", "purge", "admin", 200, {}}),
      IsOk());
  auto history = db_->History("default", "A1");
  ASSERT_THAT(history, IsOk());
  ASSERT_EQ(history->size(), 2u);
  EXPECT_EQ((*history)[0].detail.dump().find("secret"), std::string::npos);
  EXPECT_EQ((*history)[0].key_id, 3u) << "the scrubbed event's new signature is stored";
  EXPECT_EQ((*history)[0].tag, std::string(32, 'T'));
  EXPECT_EQ((*history)[1].event, "purge");
  EXPECT_EQ((*db_->GetEntry("default", "A1"))->entry.text, "");
}

TEST_P(StorageBackendContract, UpdateOfMissingEntryIsNotFound) {
  EXPECT_THAT(db_->UpdateEntry(MakeEntry("NOPE"), 123, {}), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(db_->PurgeEntry(MakeEntry("NOPE"), 123, {}, {}), StatusIs(absl::StatusCode::kNotFound));
}

TEST_P(StorageBackendContract, UpdateAndPurgeOfAChangedRowAreAborted) {
  Entry e = MakeEntry("A1", "default", "first");
  ASSERT_THAT(db_->InsertEntries({&e, 1}, std::vector<HistoryEvent>{AddEvent(e)}), IsOk());
  Entry second = e;
  second.text = "second";
  second.updated_at_us = 200;
  ASSERT_THAT(db_->UpdateEntry(second, 123, {0, "A1", "default", "update", "b", 200, {}}), IsOk());
  Entry stale = e;
  stale.text = "stale";
  stale.updated_at_us = 201;
  EXPECT_THAT(db_->UpdateEntry(stale, 123, {0, "A1", "default", "update", "c", 201, {}}),
              StatusIs(absl::StatusCode::kAborted));
  Entry purged = e;
  purged.text.clear();
  purged.state = State::kPurged;
  EXPECT_THAT(db_->PurgeEntry(purged, 123, {}, {0, "A1", "default", "purge", "c", 202, {}}),
              StatusIs(absl::StatusCode::kAborted));
  EXPECT_EQ((*db_->GetEntry("default", "A1"))->entry.text, "second");
  auto history = db_->History("default", "A1");
  ASSERT_THAT(history, IsOk());
  EXPECT_EQ(history->size(), 2u) << "the refused changes appended no event";
  // The other namespace's row of the same id is a different row: not found there.
  Entry elsewhere = second;
  elsewhere.name_space = "other";
  EXPECT_THAT(db_->UpdateEntry(elsewhere, 200, {}), StatusIs(absl::StatusCode::kNotFound));
}

TEST_P(StorageBackendContract, TamperedRowsDecodeWithErrorsInsteadOfFailing) {
  std::vector<Entry> batch = {MakeEntry("A1"), MakeEntry("A2")};
  ASSERT_THAT(db_->InsertEntries(batch, {}), IsOk());
  ASSERT_THAT(store_->ExecSql("UPDATE entries SET state='hacked', metadata='[1]', embedding=" +
                              store_->BytesLiteral("\x01\x02\x03") + " WHERE id='A1'"),
              IsOk());
  std::vector<StoredRow> rows = Scan("");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_FALSE(rows[0].ok());
  EXPECT_NE(rows[0].decode_error.find("unknown state"), std::string::npos);
  EXPECT_NE(rows[0].decode_error.find("metadata"), std::string::npos);
  EXPECT_NE(rows[0].decode_error.find("embedding"), std::string::npos);
  EXPECT_TRUE(rows[1].ok());
  auto counts = db_->CountByState();
  ASSERT_THAT(counts, IsOk());
  ASSERT_EQ(counts->size(), 1u) << "undecodable rows are not counted";
  EXPECT_EQ((*counts)[0].count, 1);
  EXPECT_THAT(db_->CheckIntegrity(), IsOk());
}

TEST_P(StorageBackendContract, ScanEntriesVisitsEveryRowInRowIdOrderAndStopsOnError) {
  std::vector<Entry> batch;
  for (int i = 0; i < 1203; ++i)
    batch.push_back(MakeEntry("E" + std::to_string(100000 + i), i % 2 ? "a" : "b"));
  auto row_ids = db_->InsertEntries(batch, {});
  ASSERT_THAT(row_ids, IsOk());
  ASSERT_TRUE(std::is_sorted(row_ids->begin(), row_ids->end()));
  std::vector<StoredRow> all = Scan("");
  ASSERT_EQ(all.size(), batch.size());
  for (size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i].row_id, (*row_ids)[i]);
  EXPECT_EQ(Scan("a").size(), 601u);
  int seen = 0;
  EXPECT_THAT(db_->ScanEntries("",
                               [&](const StoredRow&) {
                                 return ++seen == 7 ? absl::CancelledError("enough") : absl::OkStatus();
                               }),
              StatusIs(absl::StatusCode::kCancelled));
  EXPECT_EQ(seen, 7);
}

TEST_P(StorageBackendContract, EventSeqsAreTheWritersOwnAndEventsAfterListsThem) {
  Entry a = MakeEntry("A1", "n1");
  Entry b = MakeEntry("B1", "n2");
  ASSERT_THAT(db_->InsertEntries({&a, 1}, std::vector<HistoryEvent>{AddEvent(a)}), IsOk());
  std::vector<int64_t> first = db_->TakeInsertedEventSeqs();
  ASSERT_EQ(first.size(), 1u);
  EXPECT_TRUE(db_->TakeInsertedEventSeqs().empty()) << "taken once";
  auto other = Open();
  ASSERT_THAT(other->InsertEntries({&b, 1}, std::vector<HistoryEvent>{AddEvent(b), AddEvent(b)}), IsOk());
  std::vector<int64_t> second = other->TakeInsertedEventSeqs();
  ASSERT_EQ(second.size(), 2u);
  EXPECT_EQ(second[0], first[0] + 1);
  EXPECT_EQ(second[1], first[0] + 2);
  auto last = db_->LastEventSeq();
  ASSERT_THAT(last, IsOk());
  EXPECT_EQ(*last, second[1]);
  auto after = db_->EventsAfter(first[0]);
  ASSERT_THAT(after, IsOk());
  ASSERT_EQ(after->size(), 2u);
  EXPECT_EQ((*after)[0].seq, second[0]);
  EXPECT_EQ((*after)[0].name_space, "n2");
  EXPECT_EQ((*after)[0].entry_id, "B1");
  std::vector<std::pair<int64_t, int64_t>> times;
  ASSERT_THAT(db_->ScanNewestEventTimes("", [&](int64_t row, int64_t at) { times.emplace_back(row, at); }),
              IsOk());
  EXPECT_EQ(times.size(), 2u);
  std::vector<std::pair<int64_t, int64_t>> of_n2;  // one namespace's rows only
  ASSERT_THAT(db_->ScanNewestEventTimes("n2", [&](int64_t row, int64_t at) { of_n2.emplace_back(row, at); }),
              IsOk());
  ASSERT_EQ(of_n2.size(), 1u);
  EXPECT_THAT(times, ::testing::Contains(of_n2[0]));
  int none = 0;
  ASSERT_THAT(db_->ScanNewestEventTimes("n9", [&](int64_t, int64_t) { ++none; }), IsOk());
  EXPECT_EQ(none, 0);
  // A reader holding n2 gets n2's events and n1 named once, by its newest seq, without its entry.
  auto held = db_->HeldEventsAfter(0, {"n2"});
  ASSERT_THAT(held, IsOk());
  ASSERT_EQ(held->size(), 3u);
  EXPECT_EQ((*held)[0].seq, first[0]);
  EXPECT_EQ((*held)[0].name_space, "n1");
  EXPECT_EQ((*held)[0].entry_id, "");
  EXPECT_EQ((*held)[1].seq, second[0]);
  EXPECT_EQ((*held)[1].entry_id, "B1");
  EXPECT_EQ((*held)[2].seq, second[1]);
  EXPECT_EQ((*held)[2].entry_id, "B1");
  auto holding_none = db_->HeldEventsAfter(first[0], {});
  ASSERT_THAT(holding_none, IsOk());
  ASSERT_EQ(holding_none->size(), 1u);
  EXPECT_EQ((*holding_none)[0].seq, second[1]) << "the newest seq of n2, which is not held";
  EXPECT_EQ((*holding_none)[0].name_space, "n2");
  EXPECT_EQ((*holding_none)[0].entry_id, "");
  auto quoted = db_->HeldEventsAfter(0, {"a\"b\\c,{}", "n1"});  // quoted in the array literal
  ASSERT_THAT(quoted, IsOk());
  ASSERT_EQ(quoted->size(), 2u);
  EXPECT_EQ((*quoted)[0].entry_id, "A1");
  EXPECT_EQ((*quoted)[1].name_space, "n2");
  EXPECT_EQ((*quoted)[1].entry_id, "");
  int events = 0;
  ASSERT_THAT(db_->ScanHistory([&](const HistoryEvent& ev) {
    EXPECT_EQ(ev.seq, first[0] + events++);
    return absl::OkStatus();
  }),
              IsOk());
  EXPECT_EQ(events, 3);
}

TEST_P(StorageBackendContract, EventsWrittenBeforeSigningAreSignedOnce) {
  Entry e = MakeEntry("A1");
  ASSERT_THAT(db_->InsertEntries({&e, 1}, std::vector<HistoryEvent>{AddEvent(e), AddEvent(e)}), IsOk());
  auto none = db_->SignEventsFromBeforeSigning([](HistoryEvent*) { ADD_FAILURE() << "nothing to sign"; });
  ASSERT_THAT(none, IsOk());
  EXPECT_EQ(*none, 0);
  ASSERT_THAT(db_->PutMeta("unsigned_history_through", "1"), IsOk());
  auto signed_count = db_->SignEventsFromBeforeSigning([](HistoryEvent* ev) {
    ev->key_id = 9;
    ev->tag = std::string(32, 'S');
  });
  ASSERT_THAT(signed_count, IsOk());
  EXPECT_EQ(*signed_count, 1) << "only the events up to the marker, without a tag";
  auto history = db_->History("default", "A1");
  ASSERT_THAT(history, IsOk());
  EXPECT_EQ((*history)[0].key_id, 9u);
  EXPECT_EQ((*history)[1].tag, "");
  EXPECT_EQ(*db_->GetMeta("unsigned_history_through"), std::nullopt);
}

INSTANTIATE_TEST_SUITE_P(Backends, StorageBackendContract,
                         ::testing::Values(StoreKind::kSqlite, StoreKind::kPostgres),
                         [](const auto& info) { return ::bulwark::testing::StoreKindName(info.param); });

}  // namespace
}  // namespace bulwark
