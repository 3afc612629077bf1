// SqliteBackend: what only the SQLite file shows (a purge leaves no text in the file's bytes; a
// foreign or garbage file is refused). The StorageBackend contract itself runs against SQLite and
// PostgreSQL in storage/postgresql/storage_backend_contract_test.cc and
// storage_claims_contract_test.cc.
#include "storage/sqlite/sqlite_backend.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <fstream>

#include "testing/exec_sql.h"
#include "testing/temp_dir.h"

namespace bulwark {
namespace {

Entry MakeEntry(std::string id, std::string ns = "default", std::string text = "hello") {
  Entry e;
  e.id = std::move(id);
  e.name_space = std::move(ns);
  e.text = std::move(text);
  e.metadata = {{"k", "v"}};
  e.principal = "alice";
  e.created_at_us = e.updated_at_us = 123;
  e.embedding = {0.6f, 0.8f};
  e.key_id = 1;
  e.tag = std::string(32, '\x07');
  return e;
}

HistoryEvent AddEvent(const Entry& e) {
  return {0, e.id, e.name_space, "add", e.principal, e.created_at_us, {{"text", e.text}}};
}

class SqliteBackendTest : public ::testing::Test {
 protected:
  std::unique_ptr<SqliteBackend> OpenDb(bool create = true) {
    auto db = SqliteBackend::Open(dir_ / "bulwark.db", create);
    EXPECT_TRUE(db.ok()) << db.status();
    return db.ok() ? *std::move(db) : nullptr;
  }
  testing::TempDir dir_;
};

TEST_F(SqliteBackendTest, PurgeScrubsHistory) {
  auto db = OpenDb();
  Entry e = MakeEntry("A1", "default", "secret text");
  ASSERT_TRUE(db->InsertEntries({&e, 1}, std::vector<HistoryEvent>{AddEvent(e)}).ok());
  Entry purged = e;
  purged.text.clear();
  purged.state = State::kPurged;
  auto before = db->History("default", "A1");
  ASSERT_TRUE(before.ok());
  std::vector<HistoryEvent> scrubbed = *before;
  for (HistoryEvent& ev : scrubbed) {
    ev.detail = {{"purged", true}};
    ev.key_id = 3;
    ev.tag = std::string(32, 'T');
  }
  ASSERT_TRUE(
      db->PurgeEntry(purged, e.updated_at_us, scrubbed, {0, "A1", "default", "purge", "admin", 200, {}})
          .ok());
  auto history = db->History("default", "A1");
  ASSERT_TRUE(history.ok());
  ASSERT_EQ(history->size(), 2u);
  EXPECT_EQ((*history)[0].detail.dump().find("secret"), std::string::npos);
  EXPECT_EQ((*history)[0].key_id, 3u) << "the scrubbed event's new signature is stored";
  EXPECT_EQ((*history)[0].tag, std::string(32, 'T'));
  EXPECT_EQ((*history)[1].event, "purge");
  EXPECT_EQ((*db->GetEntry("default", "A1"))->entry.text, "");
  // The text is gone from the file itself, not only from the rows.
  db.reset();
  std::ifstream file(dir_ / "bulwark.db", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  EXPECT_EQ(bytes.find("secret text"), std::string::npos);
}

// The open's scan reads a row's vector and state but not its text or metadata; a side index's scan
// reads one namespace's text or metadata but not the vector.
TEST_F(SqliteBackendTest, ScanIndexColumnsReadsOnlyWhatIsAsked) {
  auto db = OpenDb();
  std::vector<Entry> entries = {MakeEntry("A1", "a", "first"), MakeEntry("B1", "b", "second"),
                                MakeEntry("A2", "a", "third")};
  entries[2].state = State::kQuarantined;
  entries[2].kind = Kind::kHoneypot;
  std::vector<HistoryEvent> events;
  for (const Entry& e : entries) events.push_back(AddEvent(e));
  ASSERT_TRUE(db->InsertEntries(entries, events).ok());
  std::vector<StoredRow> rows;
  const auto keep = [&](const StoredRow& row) {
    rows.push_back(row);
    return absl::OkStatus();
  };
  ASSERT_TRUE(db->ScanIndexColumns("", {.embedding = true}, keep).ok());
  ASSERT_EQ(rows.size(), 3u);
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_TRUE(rows[i].ok()) << rows[i].decode_error;
    EXPECT_EQ(rows[i].entry.id, entries[i].id);
    EXPECT_EQ(rows[i].entry.name_space, entries[i].name_space);
    EXPECT_EQ(rows[i].entry.embedding, entries[i].embedding);
    EXPECT_EQ(rows[i].entry.updated_at_us, entries[i].updated_at_us);
    EXPECT_EQ(rows[i].entry.state, entries[i].state);
    EXPECT_EQ(rows[i].entry.kind, entries[i].kind);
    EXPECT_EQ(rows[i].entry.text, "");
    EXPECT_EQ(rows[i].entry.metadata, nlohmann::json::object());
  }
  EXPECT_LT(rows[0].row_id, rows[2].row_id);
  rows.clear();
  ASSERT_TRUE(db->ScanIndexColumns("a", {.text = true, .metadata = true}, keep).ok());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].entry.text, "first");
  EXPECT_EQ(rows[1].entry.text, "third");
  EXPECT_EQ(rows[1].entry.metadata, entries[2].metadata);
  EXPECT_TRUE(rows[0].entry.embedding.empty());
  EXPECT_EQ(
      db->ScanIndexColumns("b", {}, [](const StoredRow&) { return absl::DataLossError("stop"); }).code(),
      absl::StatusCode::kDataLoss);  // the visitor's error ends the scan
}

TEST_F(SqliteBackendTest, RefusesForeignDatabasesAndUnknownVersions) {
  testing::ExecSql(dir_ / "other.db",
                   "CREATE TABLE t(x); INSERT INTO t VALUES(1);"
                   "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
                   "INSERT INTO meta VALUES('format','something-else');");
  EXPECT_EQ(SqliteBackend::Open(dir_ / "other.db", false).status().code(), absl::StatusCode::kDataLoss);

  { OpenDb(); }
  testing::ExecSql(dir_ / "bulwark.db", "UPDATE meta SET value='99' WHERE key='schema_version'");
  EXPECT_EQ(SqliteBackend::Open(dir_ / "bulwark.db", false).status().code(),
            absl::StatusCode::kFailedPrecondition);

  std::ofstream(dir_ / "garbage.db") << std::string(8192, 'z');
  EXPECT_FALSE(SqliteBackend::Open(dir_ / "garbage.db", false).ok());
  EXPECT_EQ(SqliteBackend::Open(dir_ / "missing.db", false).status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace bulwark
