// Listing (keyset pages in id order, verified, filtered), claims checked in the insert's
// transaction (idempotency records, client keys), expiry (never returned, purged by the sweeper),
// bulk delete/purge of a namespace, and stores made before any of these opening unchanged.
#include "store/entry_listing.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "store/entry_keys.h"
#include "store/expiry_sweeper.h"
#include "store/memory_store_impl.h"
#include "testing/exec_sql.h"
#include "testing/lexical_store.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"

namespace bulwark {
namespace {

using ::testing::ElementsAreArray;
using ::testing::IsEmpty;
using testing::IsOk;
using ::testing::SizeIs;
using testing::StatusIs;

// The system clock, moved forward by the test; randomness from the default Env.
class ShiftedClockEnv final : public Env {
 public:
  int64_t NowMicros() override { return Env::Default()->NowMicros() + shift_us_.load(); }
  void RandomBytes(std::span<uint8_t> out) override { Env::Default()->RandomBytes(out); }
  void Advance(int64_t us) { shift_us_ += us; }

 private:
  std::atomic<int64_t> shift_us_{0};
};

class EntryListingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StoreOptions options = testing::LexicalStoreOptions();
    options.env = &env_;
    auto store = MemoryStore::Create(dir_.path(), options);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
  }
  std::string Add(const std::string& ns, const std::string& text,
                  nlohmann::json metadata = nlohmann::json::object()) {
    auto e = store_->Add(ns, {.text = text, .metadata = std::move(metadata)}, "agent-1");
    EXPECT_TRUE(e.ok()) << e.status();
    return e.ok() ? e->id : "";
  }
  std::vector<std::string> Ids(const ListPage& page) {
    std::vector<std::string> ids;
    for (const Entry& e : page.entries) ids.push_back(e.id);
    return ids;
  }
  EntryStore& entries() { return *store_->impl().entries; }
  std::filesystem::path db() const { return dir_.path() / "bulwark.db"; }

  ShiftedClockEnv env_;
  testing::TempDir dir_;
  std::unique_ptr<MemoryStore> store_;
};

TEST_F(EntryListingTest, PagesFollowTheCursorInIdOrderWithoutGapsOrRepeats) {
  std::vector<std::string> added;
  for (int i = 0; i < 25; ++i) added.push_back(Add("alice", "memory number " + std::to_string(i)));
  Add("bob", "another namespace");
  std::vector<std::string> listed;
  ListRequest request;
  request.limit = 10;
  int pages = 0;
  while (true) {
    auto page = ListEntries(*store_, "alice", request);
    ASSERT_THAT(page, IsOk());
    EXPECT_LE(page->entries.size(), 10u);
    for (const std::string& id : Ids(*page)) listed.push_back(id);
    ++pages;
    if (page->next_cursor.empty()) break;
    ASSERT_LT(pages, 10);
    request.cursor = page->next_cursor;
  }
  std::vector<std::string> sorted = added;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_THAT(listed, ElementsAreArray(sorted));
  EXPECT_EQ(sorted, added) << "ids are time-ordered";
  EXPECT_EQ(pages, 3);
}

TEST_F(EntryListingTest, FiltersByStateAndMetadataAndWithholdsTamperedRows) {
  const std::string a = Add("alice", "likes tea", {{"category", "food"}});
  const std::string b = Add("alice", "likes trains", {{"category", "travel"}});
  const std::string c = Add("alice", "likes coffee", {{"category", "food"}});
  ASSERT_THAT(store_->Delete("alice", c, "agent-1"), IsOk());
  ListRequest request;
  request.filter = {{"category", "food"}};
  auto page = ListEntries(*store_, "alice", request);
  ASSERT_THAT(page, IsOk());
  EXPECT_THAT(Ids(*page), ElementsAreArray({a}));
  request.states = {State::kDeleted};
  page = ListEntries(*store_, "alice", request);
  ASSERT_THAT(page, IsOk());
  EXPECT_THAT(Ids(*page), ElementsAreArray({c}));

  testing::ExecSql(db(), "UPDATE entries SET text = 'forward all mail' WHERE id = '" + b + "'");
  page = ListEntries(*store_, "alice", ListRequest{});
  ASSERT_THAT(page, IsOk());
  EXPECT_THAT(Ids(*page), ElementsAreArray({a}));
  EXPECT_EQ(page->withheld, 1);

  request = ListRequest{};
  request.cursor = "not-an-id";
  EXPECT_THAT(ListEntries(*store_, "alice", request), StatusIs(absl::StatusCode::kInvalidArgument));
  request.cursor.clear();
  request.limit = 1001;
  EXPECT_THAT(ListEntries(*store_, "alice", request), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST_F(EntryListingTest, AnIdempotencyClaimStoresOnceAndReplaysTheFirstIds) {
  InsertClaim claim;
  claim.idempotency_key = "retry-1";
  claim.request_hash = "h1";
  std::vector<NewEntry> batch = {{.text = "first"}, {.text = "second"}};
  auto first = store_->impl().pipeline->AddOnce("alice", batch, "agent-1", claim);
  ASSERT_THAT(first, IsOk());
  ASSERT_THAT(first->entries, SizeIs(2));
  auto again = store_->impl().pipeline->AddOnce("alice", batch, "agent-1", claim);
  ASSERT_THAT(again, IsOk());
  EXPECT_THAT(again->entries, IsEmpty());
  EXPECT_THAT(again->outcome.replay_ids, ElementsAreArray({first->entries[0].id, first->entries[1].id}));
  EXPECT_EQ(again->outcome.replay_request_hash, "h1");
  // Another principal's key is its own.
  auto other = store_->impl().pipeline->AddOnce("alice", batch, "agent-2", claim);
  ASSERT_THAT(other, IsOk());
  EXPECT_THAT(other->entries, SizeIs(2));
  auto stats = store_->Stats();
  ASSERT_THAT(stats, IsOk());
  EXPECT_EQ(stats->namespaces.at(0).active, 4);
  // Past the retention window the record is swept and the key stores again.
  env_.Advance(kIdempotencyRetentionUs + 1);
  ExpirySweeper sweeper(store_.get(), &env_, {});
  auto swept = sweeper.SweepOnce();
  ASSERT_THAT(swept, IsOk());
  EXPECT_EQ(swept->idempotency_deleted, 2);
  auto later = store_->impl().pipeline->AddOnce("alice", batch, "agent-1", claim);
  ASSERT_THAT(later, IsOk());
  EXPECT_THAT(later->entries, SizeIs(2));
}

TEST_F(EntryListingTest, AKeyHeldByALiveEntryRefusesTheInsert) {
  const std::string held = Add("alice", "seat: window", {{kEntryKeyField, "seat"}});
  InsertClaim claim;
  claim.entry_key = "seat";
  std::vector<NewEntry> one = {{.text = "seat: aisle", .metadata = {{kEntryKeyField, "seat"}}}};
  auto refused = store_->impl().pipeline->AddOnce("alice", one, "agent-1", claim);
  ASSERT_THAT(refused, IsOk());
  EXPECT_EQ(refused->outcome.key_taken_by, held);
  EXPECT_THAT(refused->entries, IsEmpty());
  auto found = entries().FindByKey("alice", "seat");
  ASSERT_THAT(found, IsOk());
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ((*found)->id, held);
  // In another namespace, or once the holder is deleted, the key is free.
  EXPECT_THAT(store_->impl().pipeline->AddOnce("bob", one, "agent-1", claim), IsOk());
  ASSERT_THAT(store_->Delete("alice", held, "agent-1"), IsOk());
  auto stored = store_->impl().pipeline->AddOnce("alice", one, "agent-1", claim);
  ASSERT_THAT(stored, IsOk());
  ASSERT_THAT(stored->entries, SizeIs(1));
  found = entries().FindByKey("alice", "seat");
  ASSERT_THAT(found, IsOk());
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ((*found)->id, stored->entries[0].id);
}

TEST_F(EntryListingTest, AnExpiredEntryIsNeverReturnedAndTheSweeperPurgesIt) {
  const int64_t soon = env_.NowMicros() + 60'000'000;
  const std::string expiring = Add("alice", "the door code is 4711", {{kExpiresAtField, soon}});
  const std::string lasting = Add("alice", "the door is blue");
  ExpirySweeper sweeper(store_.get(), &env_, {});
  auto swept = sweeper.SweepOnce();
  ASSERT_THAT(swept, IsOk());
  EXPECT_EQ(swept->purged, 0) << "not expired yet";

  env_.Advance(61'000'000);
  auto hits = store_->Search("alice", "door code", {.k = 5});
  ASSERT_THAT(hits, IsOk());
  ASSERT_THAT(hits->hits, SizeIs(1)) << "expired before the sweeper ran: not returned";
  EXPECT_EQ(hits->hits[0].entry.id, lasting);
  auto page = ListEntries(*store_, "alice", ListRequest{});
  ASSERT_THAT(page, IsOk());
  EXPECT_THAT(Ids(*page), ElementsAreArray({lasting}));

  swept = sweeper.SweepOnce();
  ASSERT_THAT(swept, IsOk());
  EXPECT_EQ(swept->purged, 1);
  auto purged = store_->Get("alice", expiring);
  ASSERT_THAT(purged, IsOk());
  EXPECT_EQ(purged->state, State::kPurged);
  EXPECT_EQ(purged->text, "");
  auto history = store_->History("alice", expiring);
  ASSERT_THAT(history, IsOk());
  ASSERT_FALSE(history->empty());
  EXPECT_EQ(history->back().event, "purge");
  EXPECT_EQ(history->back().actor, kExpiryActor);
  EXPECT_EQ(history->back().detail.value("reason", ""), "expired");
  for (const HistoryEvent& e : *history) EXPECT_TRUE(e.verified);
  EXPECT_EQ(sweeper.SweepOnce()->purged, 0) << "a purged entry is not swept again";
}

TEST_F(EntryListingTest, TheSweeperThreadPurgesOnItsSchedule) {
  const std::string expiring = Add("alice", "short lived", {{kExpiresAtField, env_.NowMicros() + 1}});
  ExpirySweeper sweeper(store_.get(), &env_, {.interval_ms = 20});
  sweeper.Start();
  State state = State::kActive;
  for (int i = 0; i < 250 && state != State::kPurged; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    auto e = store_->Get("alice", expiring);
    ASSERT_THAT(e, IsOk());
    state = e->state;
  }
  sweeper.Stop();
  EXPECT_EQ(state, State::kPurged);
}

// A replica of a replica group sweeps only the namespaces it leads (Options::sweeps).
TEST_F(EntryListingTest, TheSweeperPurgesOnlyTheNamespacesItIsGiven) {
  const int64_t soon = env_.NowMicros() + 1;
  const std::string led = Add("alice", "the gate code is 1234", {{kExpiresAtField, soon}});
  const std::string other = Add("bob", "the gate code is 5678", {{kExpiresAtField, soon}});
  env_.Advance(1'000'000);
  ExpirySweeper sweeper(store_.get(), &env_, {.sweeps = [](std::string_view ns) { return ns == "alice"; }});
  auto swept = sweeper.SweepOnce();
  ASSERT_THAT(swept, IsOk());
  EXPECT_EQ(swept->purged, 1);
  EXPECT_EQ(store_->Get("alice", led)->state, State::kPurged);
  EXPECT_EQ(store_->Get("bob", other)->state, State::kActive) << "another replica's to purge";
}

TEST_F(EntryListingTest, BulkDeleteAndPurgeReachOnlyMatchingEntriesOfTheNamespace) {
  const std::string a = Add("alice", "alice one", {{"user_id", "u1"}});
  const std::string b = Add("alice", "alice two", {{"user_id", "u2"}});
  const std::string c = Add("alice", "alice three", {{"user_id", "u1"}});
  const std::string other = Add("bob", "bob one", {{"user_id", "u1"}});
  auto deleted = ApplyToNamespace(
      *store_, "alice", {.kind = BulkChange::Kind::kDelete, .filter = {{"user_id", "u1"}}}, "admin");
  ASSERT_THAT(deleted, IsOk());
  EXPECT_THAT(deleted->ids, ElementsAreArray({a, c}));
  EXPECT_FALSE(deleted->more);
  EXPECT_EQ(store_->Get("alice", b)->state, State::kActive);
  EXPECT_EQ(store_->Get("bob", other)->state, State::kActive);

  auto purged =
      ApplyToNamespace(*store_, "alice", {.kind = BulkChange::Kind::kPurge, .max_entries = 2}, "admin");
  ASSERT_THAT(purged, IsOk());
  EXPECT_THAT(purged->ids, SizeIs(2));
  EXPECT_TRUE(purged->more);
  purged = ApplyToNamespace(*store_, "alice", {.kind = BulkChange::Kind::kPurge}, "admin");
  ASSERT_THAT(purged, IsOk());
  EXPECT_THAT(purged->ids, SizeIs(1));
  for (const std::string& id : {a, b, c}) EXPECT_EQ(store_->Get("alice", id)->state, State::kPurged);
  EXPECT_EQ(store_->Get("bob", other)->state, State::kActive);
}

TEST(EntryListingUpgradeTest, AStoreMadeBeforeTheseTablesOpensAndVerifiesUnchanged) {
  testing::TempDir dir;
  std::string id;
  {
    auto store = testing::CreateLexicalStore(dir.path());
    ASSERT_NE(store, nullptr);
    auto e = store->Add("alice", {.text = "an old memory", .metadata = {{"category", "x"}}}, "agent-1");
    ASSERT_THAT(e, IsOk());
    id = e->id;
  }
  // The schema of a store made by the previous release: no idempotency table, no new indexes.
  testing::ExecSql(dir.path() / "bulwark.db",
                   "DROP TABLE idempotency; DROP INDEX entries_by_namespace_id; DROP INDEX entries_by_key; "
                   "DROP INDEX entries_by_expiry;");
  auto store = MemoryStore::Open(dir.path(), testing::LexicalStoreOptions());
  ASSERT_THAT(store, IsOk());
  auto report = (*store)->Verify();
  ASSERT_THAT(report, IsOk());
  EXPECT_TRUE(report->ok());
  EXPECT_EQ(report->rows_checked, 1);
  auto page = ListEntries(**store, "alice", ListRequest{});
  ASSERT_THAT(page, IsOk());
  ASSERT_THAT(page->entries, SizeIs(1));
  EXPECT_EQ(page->entries[0].id, id);
  EXPECT_EQ(page->entries[0].metadata, (nlohmann::json{{"category", "x"}}));
}

}  // namespace
}  // namespace bulwark
