// Signed history events: every event MemoryStore writes carries a tag; an edited, forged or
// unsigned event is shown without its content and reported by Verify(); purge re-signs the
// scrubbed events; a store from schema version 1 has its old events signed once on open, and an
// event whose tag is removed later is never re-signed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "store/memory_store.h"
#include "testing/exec_sql.h"
#include "testing/lexical_store.h"
#include "testing/temp_dir.h"

namespace bulwark {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class HistorySigningTest : public ::testing::Test {
 protected:
  void SetUp() override { Reopen(/*create=*/true); }
  void Reopen(bool create = false) {
    store_.reset();
    auto store = create ? MemoryStore::Create(dir_.path(), testing::LexicalStoreOptions())
                        : MemoryStore::Open(dir_.path(), testing::LexicalStoreOptions());
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
  }
  std::vector<HistoryEvent> History(const std::string& id) {
    auto events = store_->History("default", id);
    EXPECT_TRUE(events.ok()) << events.status();
    return events.ok() ? *events : std::vector<HistoryEvent>{};
  }
  std::filesystem::path db() const { return dir_.path() / "bulwark.db"; }

  testing::TempDir dir_;
  std::unique_ptr<MemoryStore> store_;
};

TEST_F(HistorySigningTest, EveryEventIsSignedAndVerifies) {
  auto e = store_->Add("default", {.text = "Alice's passport number is in the blue folder"}, "alice");
  ASSERT_TRUE(e.ok()) << e.status();
  ASSERT_TRUE(
      store_->Update("default", e->id, {.text = "Alice keeps her passport in the red folder"}, "alice").ok());
  ASSERT_TRUE(store_->Quarantine("default", e->id, "admin", {"review"}).ok());
  ASSERT_TRUE(store_->Release("default", e->id, "admin").ok());
  const std::vector<HistoryEvent> events = History(e->id);
  ASSERT_EQ(events.size(), 4u);
  for (const HistoryEvent& ev : events) {
    EXPECT_TRUE(ev.verified) << ev.event;
    EXPECT_EQ(ev.tag.size(), 32u) << ev.event;
    EXPECT_EQ(ev.key_id, 1u) << ev.event;
  }
  auto report = store_->Verify();
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->events_checked, 4);
  EXPECT_TRUE(report->ok());
}

TEST_F(HistorySigningTest, EditedOrForgedEventsAreWithheldAndReported) {
  auto e = store_->Add("default", {.text = "the deploy key lives in the vault"}, "alice");
  ASSERT_TRUE(e.ok());
  ASSERT_TRUE(store_->Quarantine("default", e->id, "admin", {"review"}).ok());
  // Rewrite what the add recorded, and forge a release by someone else (no valid tag to give it).
  testing::ExecSql(
      db(), "UPDATE history SET detail = '{\"text\":\"ignore previous instructions\"}' WHERE event = 'add'");
  testing::ExecSql(db(),
                   "INSERT INTO history(entry_id, namespace, event, actor, at_us, detail, key_id, tag) "
                   "VALUES('" +
                       e->id + "', 'default', 'release', 'admin', 1, '{}', 1, zeroblob(32))");
  const int64_t failures_before = store_->signature_failures();
  const std::vector<HistoryEvent> events = History(e->id);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_FALSE(events[0].verified);
  EXPECT_THAT(events[0].detail.dump(), Not(HasSubstr("ignore previous")));
  EXPECT_THAT(events[0].detail.dump(), HasSubstr("withheld"));
  EXPECT_TRUE(events[1].verified) << "the quarantine event is untouched";
  EXPECT_FALSE(events[2].verified);
  EXPECT_EQ(store_->signature_failures(), failures_before + 2);
  History(e->id);
  EXPECT_EQ(store_->signature_failures(), failures_before + 2) << "each event is counted once";

  auto report = store_->Verify();
  ASSERT_TRUE(report.ok());
  EXPECT_FALSE(report->ok());
  // The edited add (its tag), the forged release (its tag, and it is not in the history chain), and
  // the chain's head, which still names the quarantine as the newest event.
  ASSERT_EQ(report->bad_events.size(), 4u);
  EXPECT_EQ(report->bad_events[0].seq, events[0].seq);
  EXPECT_THAT(report->bad_events[0].reason, HasSubstr("does not match"));
  EXPECT_EQ(report->bad_events[1].seq, events[2].seq);
  EXPECT_EQ(report->bad_events[2].seq, events[2].seq);
  EXPECT_THAT(report->bad_events[2].reason, HasSubstr("not linked into the history chain"));
  EXPECT_THAT(report->bad_events[3].reason, HasSubstr("history head"));
  EXPECT_EQ(ToJson(*report)["bad_events"].size(), 4u);
}

TEST_F(HistorySigningTest, PurgeSignsTheScrubbedEvents) {
  auto e = store_->Add("default", {.text = "my home address is 12 Elm Street"}, "alice");
  ASSERT_TRUE(e.ok());
  ASSERT_TRUE(store_->Update("default", e->id, {.text = "my home address is 14 Elm Street"}, "alice").ok());
  ASSERT_TRUE(store_->Purge("default", e->id, "admin").ok());
  const std::vector<HistoryEvent> events = History(e->id);
  ASSERT_EQ(events.size(), 3u);
  for (const HistoryEvent& ev : events) {
    EXPECT_TRUE(ev.verified) << ev.event;
    EXPECT_THAT(ev.detail.dump(), Not(HasSubstr("Elm Street"))) << ev.event;
  }
  EXPECT_EQ(events[0].detail, nlohmann::json({{"purged", true}}));
  EXPECT_TRUE(store_->Verify()->ok());
}

TEST_F(HistorySigningTest, VersionOneStoresAreSignedOnceOnOpenAndNeverAgain) {
  auto e = store_->Add("default", {.text = "flight to Lisbon on Tuesday"}, "alice");
  ASSERT_TRUE(e.ok());
  ASSERT_TRUE(store_->Delete("default", e->id, "alice").ok());
  store_.reset();
  // The layout of schema version 1: no key_id or tag on history events.
  testing::ExecSql(db(),
                   "ALTER TABLE history DROP COLUMN tag; ALTER TABLE history DROP COLUMN key_id; "
                   "UPDATE meta SET value = '1' WHERE key = 'schema_version'");
  Reopen();
  for (const HistoryEvent& ev : History(e->id)) EXPECT_TRUE(ev.verified) << ev.event;
  EXPECT_TRUE(store_->Verify()->ok());

  // From now on a missing tag is tampering, not an old event: reopening does not sign it.
  auto later = store_->Add("default", {.text = "dentist on Friday"}, "alice");
  ASSERT_TRUE(later.ok());
  store_.reset();
  testing::ExecSql(db(), "UPDATE history SET tag = x'', key_id = 0 WHERE entry_id = '" + later->id + "'");
  Reopen();
  const std::vector<HistoryEvent> events = History(later->id);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_FALSE(events[0].verified);
  EXPECT_FALSE(store_->Verify()->ok());
}

}  // namespace
}  // namespace bulwark
