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
