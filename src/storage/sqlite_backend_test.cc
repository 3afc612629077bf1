#include "storage/sqlite_backend.h"

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

TEST_F(SqliteBackendTest, InsertGetRoundTripsEveryField) {
  auto db = OpenDb();
  Entry e = MakeEntry("A1");
  auto rows = db->InsertEntries({&e, 1}, std::vector<HistoryEvent>{AddEvent(e)});
  ASSERT_TRUE(rows.ok()) << rows.status();
  auto got = db->GetEntry("default", "A1");
  ASSERT_TRUE(got.ok() && got->has_value());
  const Entry& g = (*got)->entry;
  EXPECT_TRUE((*got)->ok()) << (*got)->decode_error;
  EXPECT_EQ((*got)->row_id, (*rows)[0]);
  EXPECT_EQ(g.text, "hello");
  EXPECT_EQ(g.metadata, e.metadata);
  EXPECT_EQ(g.principal, "alice");
  EXPECT_EQ(g.embedding, e.embedding);
  EXPECT_EQ(g.tag, e.tag);
  EXPECT_EQ(g.key_id, 1u);
  EXPECT_EQ(g.created_at_us, 123);
}

TEST_F(SqliteBackendTest, GetRowsReadsRequestedRowsInOrderWithSignedColumnsButNotTheReport) {
  auto db = OpenDb();
  Entry e = MakeEntry("A1");
  e.report = {{"gate", {{"flagged", false}}}};
  auto rows = db->InsertEntries({&e, 1}, std::vector<HistoryEvent>{AddEvent(e)});
  ASSERT_TRUE(rows.ok()) << rows.status();
  const std::vector<int64_t> ids = {(*rows)[0] + 1000, (*rows)[0], (*rows)[0]};  // missing, then repeated
  auto read = db->GetRows(ids);
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->size(), 3u);
  EXPECT_FALSE((*read)[0].has_value());
  ASSERT_TRUE((*read)[2].has_value());
  EXPECT_EQ((*read)[2]->entry.text, "hello");
  (*read)[0] = std::move((*read)[1]);
  ASSERT_TRUE((*read)[0].has_value());
  EXPECT_TRUE((*read)[0]->ok()) << (*read)[0]->decode_error;
  EXPECT_EQ((*read)[0]->entry.text, "hello");
  EXPECT_EQ((*read)[0]->entry.tag, e.tag);
  EXPECT_TRUE((*read)[0]->entry.report.empty());
  auto got = db->GetEntry("default", "A1");
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->entry.report, e.report);
}

TEST_F(SqliteBackendTest, NamespacesArePartitions) {
  auto db = OpenDb();
  Entry e = MakeEntry("A1", "alice");
  ASSERT_TRUE(db->InsertEntries({&e, 1}, {}).ok());
  auto other = db->GetEntry("bob", "A1");
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(other->has_value());
  int seen = 0;
  ASSERT_TRUE(db->ScanEntries("bob", [&](const StoredRow&) {
                  ++seen;
                  return absl::OkStatus();
                }).ok());
  EXPECT_EQ(seen, 0);
}

TEST_F(SqliteBackendTest, BatchIsAllOrNothing) {
  auto db = OpenDb();
  std::vector<Entry> batch = {MakeEntry("A1"), MakeEntry("A2"), MakeEntry("A1")};  // duplicate id
  auto rows = db->InsertEntries(batch, {});
  EXPECT_EQ(rows.status().code(), absl::StatusCode::kAlreadyExists);
  auto got = db->GetEntry("default", "A2");
  ASSERT_TRUE(got.ok());
  EXPECT_FALSE(got->has_value()) << "a failed batch must leave nothing behind";
}

TEST_F(SqliteBackendTest, SurvivesReopen) {
  {
    auto db = OpenDb();
    Entry e = MakeEntry("A1");
    ASSERT_TRUE(db->InsertEntries({&e, 1}, {}).ok());
    ASSERT_TRUE(db->PutMeta("x", "y").ok());
  }
  auto db = OpenDb(/*create=*/false);
  auto got = db->GetEntry("default", "A1");
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ(*db->GetMeta("x"), std::optional<std::string>("y"));
}

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

TEST_F(SqliteBackendTest, UpdateOfMissingEntryIsNotFound) {
  auto db = OpenDb();
  EXPECT_EQ(db->UpdateEntry(MakeEntry("NOPE"), 123, {}).code(), absl::StatusCode::kNotFound);
}

// Compare-and-set: a change made against a version that is no longer stored (another writer, in
// this process or another, changed the row since it was read) is refused and writes nothing.
TEST_F(SqliteBackendTest, UpdateAndPurgeOfAChangedRowAreAborted) {
  auto db = OpenDb();
  Entry e = MakeEntry("A1", "default", "first");
  ASSERT_TRUE(db->InsertEntries({&e, 1}, std::vector<HistoryEvent>{AddEvent(e)}).ok());
  Entry second = e;
  second.text = "second";
  second.updated_at_us = 200;
  ASSERT_TRUE(
      db->UpdateEntry(second, /*expected_updated_at_us=*/123, {0, "A1", "default", "update", "b", 200, {}})
          .ok());

  Entry stale = e;  // made from the version read before `second` was written
  stale.text = "stale";
  stale.updated_at_us = 201;
  EXPECT_EQ(db->UpdateEntry(stale, 123, {0, "A1", "default", "update", "c", 201, {}}).code(),
            absl::StatusCode::kAborted);
  Entry purged = e;
  purged.text.clear();
  purged.state = State::kPurged;
  purged.updated_at_us = 202;
  EXPECT_EQ(db->PurgeEntry(purged, 123, {}, {0, "A1", "default", "purge", "c", 202, {}}).code(),
            absl::StatusCode::kAborted);
  EXPECT_EQ((*db->GetEntry("default", "A1"))->entry.text, "second");
  auto history = db->History("default", "A1");
  ASSERT_TRUE(history.ok()) << history.status();
  EXPECT_EQ(history->size(), 2u) << "the refused changes appended no event";
}

TEST_F(SqliteBackendTest, TamperedRowsDecodeWithErrorsInsteadOfFailing) {
  {
    auto db = OpenDb();
    std::vector<Entry> batch = {MakeEntry("A1"), MakeEntry("A2")};
    ASSERT_TRUE(db->InsertEntries(batch, {}).ok());
  }
  testing::ExecSql(dir_ / "bulwark.db",
                   "UPDATE entries SET state='hacked', metadata='[1]', embedding=x'010203' WHERE id='A1'");
  auto db = OpenDb(false);
  std::vector<StoredRow> rows;
  ASSERT_TRUE(db->ScanEntries("", [&](const StoredRow& r) {
                  rows.push_back(r);
                  return absl::OkStatus();
                }).ok());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_FALSE(rows[0].ok());
  EXPECT_NE(rows[0].decode_error.find("unknown state"), std::string::npos);
  EXPECT_NE(rows[0].decode_error.find("metadata"), std::string::npos);
  EXPECT_NE(rows[0].decode_error.find("embedding"), std::string::npos);
  EXPECT_TRUE(rows[1].ok());
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
