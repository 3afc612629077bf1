// The store over the compact SQLite layout of schema version 6 (doc/store_format.md, "Storage
// efficiency"): history events that leave their text and metadata to the entry's row verify clean
// through updates, deletes, purges and a reopen; an edited row fails both its own tag and its
// event's; and a store written by the release before (schema version 5: every event with its whole
// detail, 4 KiB pages) opens, verifies clean, keeps every text of its history and upgrades.
#include <absl/strings/str_format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "store/memory_store.h"
#include "testing/exec_sql.h"
#include "testing/lexical_store.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"

namespace bulwark {
namespace {

using ::bulwark::testing::IsOk;
using ::testing::IsEmpty;

class CompactStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Reopen();
    const char* texts[] = {"flight to Lisbon on Tuesday", "dentist on Friday", "call the bank"};
    for (int i = 0; i < 3; ++i) {
      auto e = store_->Add("default", {.text = texts[i], .metadata = {{"topic", "t"}, {"turn", i}}}, "alice");
      ASSERT_THAT(e, IsOk());
      ids_.push_back(e->id);
    }
  }
  void Reopen() {
    store_.reset();
    auto store = dir_exists_ ? MemoryStore::Open(dir_.path(), testing::LexicalStoreOptions())
                             : MemoryStore::Create(dir_.path(), testing::LexicalStoreOptions());
    ASSERT_THAT(store, IsOk());
    store_ = *std::move(store);
    dir_exists_ = true;
  }
  void Sql(const std::string& sql) { testing::ExecSql(dir_.path() / "bulwark.db", sql); }
  // Every problem Verify reports, rows and events.
  std::vector<std::string> Problems() {
    auto report = store_->Verify();
    EXPECT_THAT(report, IsOk());
    std::vector<std::string> problems;
    if (!report.ok()) return {"verify failed"};
    for (const BadRow& r : report->bad_rows) problems.push_back("row " + r.id + ": " + r.reason);
    for (const BadEvent& e : report->bad_events) problems.push_back("event " + e.entry_id + ": " + e.reason);
    return problems;
  }
  // The texts the history of `id` records, oldest first ("" for an event without one).
  std::vector<std::string> HistoryTexts(const std::string& id) {
    auto history = store_->History("default", id);
    EXPECT_THAT(history, IsOk());
    std::vector<std::string> texts;
    if (!history.ok()) return texts;
    for (const HistoryEvent& e : *history) texts.push_back(e.detail.value("text", ""));
    return texts;
  }

  testing::TempDir dir_;
  bool dir_exists_ = false;
  std::unique_ptr<MemoryStore> store_;
  std::vector<std::string> ids_;
};

TEST_F(CompactStoreTest, ReferencedDetailsVerifyCleanThroughChangesAndReopen) {
  ASSERT_THAT(store_->Update("default", ids_[0], {.text = "flight to Porto on Tuesday"}, "alice"), IsOk());
  ASSERT_THAT(store_->Quarantine("default", ids_[2], "admin", nlohmann::json::array({"checking"})), IsOk());
  ASSERT_THAT(store_->Delete("default", ids_[1], "alice"), IsOk());
  EXPECT_THAT(Problems(), IsEmpty());
  EXPECT_THAT(HistoryTexts(ids_[0]),
              ::testing::ElementsAre("flight to Lisbon on Tuesday", "flight to Porto on Tuesday"));
  Reopen();
  EXPECT_THAT(Problems(), IsEmpty());
  ASSERT_THAT(store_->Purge("default", ids_[0], "admin"), IsOk());
  EXPECT_THAT(Problems(), IsEmpty());
  EXPECT_THAT(HistoryTexts(ids_[0]), ::testing::Each(""));
  auto found = store_->Search("default", "dentist", {});
  ASSERT_THAT(found, IsOk());
  EXPECT_TRUE(found->hits.empty()) << "deleted";
}

TEST_F(CompactStoreTest, AnEditedTextFailsTheRowAndTheEventThatRefersToIt) {
  store_.reset();
  Sql("UPDATE entries SET text = 'wire money to the attacker' WHERE id = '" + ids_[1] + "'");
  Reopen();
  const std::vector<std::string> problems = Problems();
  EXPECT_THAT(problems, ::testing::Contains(::testing::StartsWith("row " + ids_[1])));
  EXPECT_THAT(problems, ::testing::Contains(::testing::StartsWith("event " + ids_[1])));
  EXPECT_EQ(problems.size(), 2u) << ::testing::PrintToString(problems);
}

TEST_F(CompactStoreTest, AStoreOfTheReleaseBeforeOpensVerifiesCleanAndUpgrades) {
  ASSERT_THAT(store_->Update("default", ids_[0], {.text = "flight to Porto on Tuesday"}, "alice"), IsOk());
  store_.reset();
  // The layout of schema version 5: every event holds its whole detail; no detail_ref column.
  auto member = [&](const std::string& name, int bit, bool json) {
    const std::string value = "(SELECT r." + name + " FROM entries r WHERE r.id = history.entry_id)";
    Sql("UPDATE history SET detail = json_set(detail, '$." + name + "', " +
        (json ? "json(" + value + ")" : value) + ") WHERE detail_ref & " + std::to_string(bit));
  };
  member("text", 1, false);
  member("metadata", 2, true);
  member("source", 4, false);
  member("state", 8, false);
  Sql("ALTER TABLE history DROP COLUMN detail_ref; UPDATE meta SET value = '5' WHERE key = 'schema_version'");
  Reopen();
  EXPECT_THAT(Problems(), IsEmpty());
  EXPECT_THAT(HistoryTexts(ids_[0]),
              ::testing::ElementsAre("flight to Lisbon on Tuesday", "flight to Porto on Tuesday"));
  // Writes after the upgrade use references; the old events keep their own details.
  ASSERT_THAT(store_->Update("default", ids_[0], {.text = "flight to Faro on Tuesday"}, "alice"), IsOk());
  ASSERT_THAT(store_->Add("default", {.text = "after the upgrade"}, "alice"), IsOk());
  Reopen();
  EXPECT_THAT(Problems(), IsEmpty());
  EXPECT_THAT(HistoryTexts(ids_[0]),
              ::testing::ElementsAre("flight to Lisbon on Tuesday", "flight to Porto on Tuesday",
                                     "flight to Faro on Tuesday"));
  auto found = store_->Search("default", "dentist Friday", {});
  ASSERT_THAT(found, IsOk());
  ASSERT_FALSE(found->hits.empty());
  EXPECT_EQ(found->hits[0].entry.id, ids_[1]);
}

}  // namespace
}  // namespace bulwark
