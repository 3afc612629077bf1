// What the SQLite file stores more compactly since schema version 6 (doc/store_format.md,
// "Storage efficiency"): history details that refer to their entry's text and metadata read back
// whole, and get their own copy before the entry's text, metadata, source or state changes; a passed
// write keeps only the verdict; a new file has 4 KiB pages (schema version 7) and packs sparse
// vectors; the load scan and the per-namespace count the index is sized with.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

#include "storage/sqlite/raw_sql.h"
#include "storage/sqlite/sqlite_backend.h"
#include "testing/exec_sql.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"

namespace bulwark {
namespace {

using ::bulwark::testing::IsOk;

Entry CompactEntry(std::string id, std::string text) {
  Entry e;
  e.id = std::move(id);
  e.name_space = "ns";
  e.text = std::move(text);
  e.metadata = {{"topic", "travel"}, {"turn", 3}, {"score", 0.25}};
  e.principal = "alice";
  e.created_at_us = e.updated_at_us = 100;
  e.embedding = {0.6f, 0.8f};
  e.key_id = 1;
  e.tag = std::string(32, '\x07');
  return e;
}

// What the write pipeline records for an add or an update: the text and metadata written.
HistoryEvent CompactWriteEvent(const Entry& e, const char* event, int64_t at_us) {
  return {0,
          e.id,
          e.name_space,
          event,
          e.principal,
          at_us,
          {{"text", e.text}, {"metadata", e.metadata}, {"state", ToString(e.state)}}};
}

class SqliteCompactRowsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = SqliteBackend::Open(dir_ / "bulwark.db", /*create=*/true);
    ASSERT_THAT(db, IsOk());
    db_ = *std::move(db);
  }
  // (seq, detail_ref, detail) of every stored event, in seq order, as the file holds them.
  std::vector<std::tuple<int64_t, int64_t, std::string>> StoredEvents() {
    auto raw = RawSqlFile::Open(dir_ / "bulwark.db");
    EXPECT_THAT(raw, IsOk());
    auto rows = (*raw)->Query("SELECT seq, detail_ref, detail FROM history ORDER BY seq");
    EXPECT_THAT(rows, IsOk());
    std::vector<std::tuple<int64_t, int64_t, std::string>> out;
    for (const auto& r : *rows) out.emplace_back(SqlInt(r[0]), SqlInt(r[1]), SqlBytes(r[2]));
    return out;
  }
  testing::TempDir dir_;
  std::unique_ptr<SqliteBackend> db_;
};

TEST_F(SqliteCompactRowsTest, AnAddEventLeavesItsTextToTheRowAndReadsBackWhole) {
  const Entry e = CompactEntry("A1", "the flight to Lisbon leaves at nine");
  const HistoryEvent add = CompactWriteEvent(e, "add", 100);
  ASSERT_THAT(db_->InsertEntries({&e, 1}, {&add, 1}), IsOk());
  const auto stored = StoredEvents();
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(std::get<1>(stored[0]), 1 | 2 | 8) << "text, metadata and state stored by reference";
  EXPECT_EQ(std::get<2>(stored[0]).find("Lisbon"), std::string::npos) << std::get<2>(stored[0]);
  auto history = db_->History("ns", "A1");
  ASSERT_THAT(history, IsOk());
  ASSERT_EQ(history->size(), 1u);
  EXPECT_EQ((*history)[0].detail, add.detail) << "exactly the detail that was signed";
  std::vector<HistoryEvent> scanned;
  ASSERT_THAT(db_->ScanHistory([&](const HistoryEvent& ev) {
    scanned.push_back(ev);
    return absl::OkStatus();
  }),
              IsOk());
  ASSERT_EQ(scanned.size(), 1u);
  EXPECT_EQ(scanned[0].detail, add.detail);
}

TEST_F(SqliteCompactRowsTest, AnUpdateGivesTheEarlierEventItsOwnCopyFirst) {
  Entry e = CompactEntry("A1", "first text");
  const HistoryEvent add = CompactWriteEvent(e, "add", 100);
  ASSERT_THAT(db_->InsertEntries({&e, 1}, {&add, 1}), IsOk());
  // A change that keeps every referred member keeps the reference.
  Entry touched = e;
  touched.updated_at_us = 120;
  ASSERT_THAT(db_->UpdateEntry(touched, 100, {0, "A1", "ns", "touch", "gate", 120, {}}), IsOk());
  EXPECT_NE(std::get<1>(StoredEvents()[0]), 0);
  // A state change changes a referred member: the add event gets its own copy first.
  Entry quarantined = touched;
  quarantined.state = State::kQuarantined;
  quarantined.updated_at_us = 150;
  ASSERT_THAT(db_->UpdateEntry(quarantined, 120, {0, "A1", "ns", "quarantine", "gate", 150, {}}), IsOk());
  EXPECT_EQ(std::get<1>(StoredEvents()[0]), 0);
  EXPECT_NE(std::get<2>(StoredEvents()[0]).find("first text"), std::string::npos);
  Entry updated = quarantined;
  updated.text = "second text";
  updated.metadata["turn"] = 4;
  updated.updated_at_us = 200;
  const HistoryEvent update = CompactWriteEvent(updated, "update", 200);
  ASSERT_THAT(db_->UpdateEntry(updated, 150, update), IsOk());
  // (The update's detail says "quarantined", the row's state: referred too.)
  const auto stored = StoredEvents();
  ASSERT_EQ(stored.size(), 4u);
  EXPECT_EQ(std::get<1>(stored[0]), 0) << "the add event holds its own text";
  EXPECT_EQ(std::get<1>(stored[3]), 1 | 2 | 8) << "the update refers to the row";
  EXPECT_EQ(std::get<2>(stored[3]).find("second text"), std::string::npos);
  auto history = db_->History("ns", "A1");
  ASSERT_THAT(history, IsOk());
  ASSERT_EQ(history->size(), 4u);
  EXPECT_EQ((*history)[0].detail, add.detail);
  EXPECT_EQ((*history)[3].detail, update.detail);
}

TEST_F(SqliteCompactRowsTest, AnEditedRowShowsInTheReferringEvent) {
  const Entry e = CompactEntry("A1", "pay the invoice");
  const HistoryEvent add = CompactWriteEvent(e, "add", 100);
  ASSERT_THAT(db_->InsertEntries({&e, 1}, {&add, 1}), IsOk());
  testing::ExecSql(dir_ / "bulwark.db", "UPDATE entries SET text = 'pay the attacker' WHERE id = 'A1'");
  auto history = db_->History("ns", "A1");
  ASSERT_THAT(history, IsOk());
  ASSERT_EQ(history->size(), 1u);
  // Not the signed detail any more: its tag fails (history_signing_test.cc checks the store).
  EXPECT_NE((*history)[0].detail, add.detail);
  testing::ExecSql(dir_ / "bulwark.db", "DELETE FROM entries WHERE id = 'A1'");
  history = db_->History("ns", "A1");
  ASSERT_THAT(history, IsOk());
  EXPECT_FALSE((*history)[0].detail.contains("text")) << "a deleted row leaves a detail without its text";
}

TEST_F(SqliteCompactRowsTest, APurgeLeavesTheTextNowhere) {
  const Entry e = CompactEntry("A1", "a very secret text");
  const HistoryEvent add = CompactWriteEvent(e, "add", 100);
  ASSERT_THAT(db_->InsertEntries({&e, 1}, {&add, 1}), IsOk());
  Entry purged = e;
  purged.text.clear();
  purged.metadata = nlohmann::json::object();
  purged.state = State::kPurged;
  purged.updated_at_us = 200;
  auto before = db_->History("ns", "A1");
  ASSERT_THAT(before, IsOk());
  std::vector<HistoryEvent> scrubbed = *before;
  for (HistoryEvent& ev : scrubbed) ev.detail = {{"purged", true}};
  ASSERT_THAT(db_->PurgeEntry(purged, 100, scrubbed, {0, "A1", "ns", "purge", "admin", 200, {}}), IsOk());
  const auto stored = StoredEvents();
  ASSERT_EQ(stored.size(), 2u);
  EXPECT_EQ(std::get<1>(stored[0]), 0);
  EXPECT_EQ(std::get<2>(stored[0]), R"({"purged":true})");
  auto history = db_->History("ns", "A1");
  ASSERT_THAT(history, IsOk());
  EXPECT_EQ((*history)[0].detail, (nlohmann::json{{"purged", true}}));
}

TEST_F(SqliteCompactRowsTest, APassedWriteKeepsItsVerdictAndAFlaggedOneIsKeptWhole) {
  const nlohmann::json detectors = {
      {"memsad", {{"score", 0.1}, {"flagged", false}, {"detail", {{"s_max", 0.1}}}}}};
  Entry passed = CompactEntry("A1", "passed");
  passed.report = {
      {"gate", {{"flagged", false}, {"detectors", detectors}, {"reasons", nlohmann::json::array()}}}};
  Entry flagged = CompactEntry("A2", "flagged");
  flagged.report = {{"gate", {{"flagged", true}, {"detectors", detectors}}}};
  Entry quarantined = CompactEntry("A3", "held");
  quarantined.report = {{"gate", {{"flagged", false}}}, {"quarantine", {{"reasons", {"admin"}}}}};
  ASSERT_THAT(db_->InsertEntries(std::vector<Entry>{passed, flagged, quarantined}, {}), IsOk());
  auto read = [&](const char* id) {
    auto row = db_->GetEntry("ns", id);
    EXPECT_THAT(row, IsOk());
    return row.ok() && row->has_value() ? (*row)->entry.report : nlohmann::json();
  };
  EXPECT_EQ(read("A1"), (nlohmann::json{{"gate", {{"flagged", false}}}})) << "the verdict only";
  EXPECT_EQ(read("A2"), flagged.report);
  EXPECT_EQ(read("A3"), quarantined.report);
}

TEST_F(SqliteCompactRowsTest, ANewFileHasSmallPagesAndTheLoadScanSkipsTheReport) {
  std::vector<Entry> entries = {CompactEntry("A1", "one"), CompactEntry("A2", "two"),
                                CompactEntry("B1", "three")};
  entries[0].report = {{"gate", {{"flagged", false}}}};
  entries[2].name_space = "other";
  ASSERT_THAT(db_->InsertEntries(entries, {}), IsOk());
  auto raw = RawSqlFile::Open(dir_ / "bulwark.db");
  ASSERT_THAT(raw, IsOk());
  auto page = (*raw)->Query("PRAGMA page_size");
  ASSERT_THAT(page, IsOk());
  EXPECT_EQ(SqlInt((*page)[0][0]), 4096);
  std::vector<std::string> ids;
  ASSERT_THAT(db_->ScanRowsToIndex([&](const StoredRow& row) {
    EXPECT_TRUE(row.ok()) << row.decode_error;
    EXPECT_TRUE(row.entry.report.empty());
    EXPECT_EQ(row.entry.embedding, (std::vector<float>{0.6f, 0.8f}));
    ids.push_back(row.entry.id);
    return absl::OkStatus();
  }),
              IsOk());
  EXPECT_THAT(ids, ::testing::ElementsAre("A1", "A2", "B1"));
  auto counts = db_->CountRowsByNamespace();
  ASSERT_THAT(counts, IsOk());
  EXPECT_THAT(*counts, ::testing::UnorderedElementsAre(std::pair<std::string, int64_t>("ns", 2),
                                                       std::pair<std::string, int64_t>("other", 1)));
}

TEST_F(SqliteCompactRowsTest, ASparseVectorIsStoredPackedAndReadBackBitForBit) {
  Entry sparse = CompactEntry("A1", "one");
  sparse.embedding.assign(384, 0.0f);
  for (size_t i = 0; i < 384; i += 3) sparse.embedding[i] = 0.01f * static_cast<float>(i) - 1.0f;
  sparse.embedding[1] = -0.0f;  // kept: only all-zero bit patterns are left out
  ASSERT_THAT(db_->InsertEntries(std::vector<Entry>{sparse}, {}), IsOk());
  auto raw = RawSqlFile::Open(dir_ / "bulwark.db");
  ASSERT_THAT(raw, IsOk());
  auto length = (*raw)->Query("SELECT length(embedding) FROM entries WHERE id = 'A1'");
  ASSERT_THAT(length, IsOk());
  EXPECT_LT(SqlInt((*length)[0][0]), 1536 / 2) << "129 of 384 floats and a 48-byte bitmap";
  EXPECT_EQ(SqlInt((*length)[0][0]) % 4, 1);
  auto row = db_->GetEntry("ns", "A1");
  ASSERT_THAT(row, IsOk());
  ASSERT_TRUE(row->has_value());
  EXPECT_TRUE((*row)->ok()) << (*row)->decode_error;
  ASSERT_EQ((*row)->entry.embedding.size(), 384u);
  EXPECT_EQ(std::memcmp((*row)->entry.embedding.data(), sparse.embedding.data(), 384 * sizeof(float)), 0);
  // A packed value someone cut short is a decode problem of that row, not a crash or a short vector.
  ASSERT_THAT((*raw)->Exec("UPDATE entries SET embedding = substr(embedding, 1, length(embedding) - 4)"),
              IsOk());
  auto cut = db_->GetEntry("ns", "A1");
  ASSERT_THAT(cut, IsOk());
  ASSERT_TRUE(cut->has_value());
  EXPECT_THAT((*cut)->decode_error, ::testing::HasSubstr("stored vector"));
  EXPECT_TRUE((*cut)->entry.embedding.empty());
}

}  // namespace
}  // namespace bulwark
