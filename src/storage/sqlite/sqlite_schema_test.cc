// The store's one schema version: a store of every earlier version (1: unsigned history; 2: signed
// history, with principals, keys and query gates made before their rows were signed, and the
// audit log still in the store's file) opens at the current version with every table, leaves the
// markers for the rows its signing layers must sign once, keeps its rows, and upgrades only once;
// a version 5 store keeps its events' whole details and gains detail references (version 6); a
// version 6 store (64 KiB pages, raw vectors) keeps its pages and rows and writes packed vectors
// beside them (version 7); a version 7 store becomes unique by (namespace, id) without its index on
// id alone and keeps its rows (version 8); a newer version is refused.
#include "storage/sqlite/sqlite_schema.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "storage/sqlite/raw_sql.h"
#include "storage/sqlite/sqlite_backend.h"
#include "storage/storage_opener.h"
#include "storage/store_copy.h"
#include "testing/exec_sql.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"

namespace bulwark {
namespace {

using ::bulwark::testing::IsOk;
using ::bulwark::testing::StatusIs;

// The tables of schema version 1, as the first release made them, with one entry and one event.
constexpr char kVersion1[] = R"sql(
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO meta VALUES('format', 'bulwark.store'), ('schema_version', '1');
CREATE TABLE entries(row_id INTEGER PRIMARY KEY, id TEXT NOT NULL, namespace TEXT NOT NULL,
  text TEXT NOT NULL, metadata TEXT NOT NULL, principal TEXT NOT NULL, source TEXT NOT NULL,
  kind TEXT NOT NULL, state TEXT NOT NULL, created_at_us INTEGER NOT NULL,
  updated_at_us INTEGER NOT NULL, embedding BLOB NOT NULL, key_id INTEGER NOT NULL,
  tag BLOB NOT NULL, report TEXT NOT NULL);
CREATE UNIQUE INDEX entries_by_id ON entries(id);
CREATE TABLE history(seq INTEGER PRIMARY KEY, entry_id TEXT NOT NULL, namespace TEXT NOT NULL,
  event TEXT NOT NULL, actor TEXT NOT NULL, at_us INTEGER NOT NULL, detail TEXT NOT NULL);
CREATE TABLE query_history(namespace TEXT NOT NULL, seq INTEGER NOT NULL, embedding BLOB NOT NULL,
  PRIMARY KEY(namespace, seq));
CREATE TABLE calibrations(namespace TEXT PRIMARY KEY, calibration TEXT NOT NULL);
INSERT INTO entries VALUES(1, 'A1', 'ns', 'old', '{}', 'p', 'user', 'memory', 'active', 1, 1, x'',
  1, x'00', '{}');
INSERT INTO history VALUES(1, 'A1', 'ns', 'add', 'p', 1, '{}');
)sql";

// What a version 2 store of the release before this one could hold besides: principals, keys and
// query gates made before their rows were signed, and the audit log in the store's own file.
constexpr char kVersion2Extras[] = R"sql(
CREATE TABLE principals(name TEXT PRIMARY KEY, role TEXT NOT NULL, namespaces TEXT NOT NULL,
  revoked INTEGER NOT NULL DEFAULT 0, created_at_us INTEGER NOT NULL);
CREATE TABLE api_keys(key_id TEXT PRIMARY KEY, principal TEXT NOT NULL, secret_sha256 TEXT NOT NULL,
  created_at_us INTEGER NOT NULL, revoked INTEGER NOT NULL DEFAULT 0);
CREATE TABLE query_gates(namespace TEXT PRIMARY KEY, mode TEXT NOT NULL, embedder TEXT NOT NULL,
  fitted_at_us INTEGER NOT NULL, source TEXT NOT NULL, model BLOB NOT NULL);
INSERT INTO principals VALUES('root', 'admin', '["*"]', 0, 1);
INSERT INTO query_gates VALUES('ns', 'reject', 'e', 1, '{}', x'00');
CREATE TABLE audit(seq INTEGER PRIMARY KEY AUTOINCREMENT, at_us INTEGER NOT NULL,
  principal TEXT NOT NULL, session TEXT NOT NULL, namespace TEXT NOT NULL, operation TEXT NOT NULL,
  query_hash TEXT NOT NULL, returned_ids TEXT NOT NULL, detail TEXT NOT NULL);
INSERT INTO audit VALUES(7, 1, 'p', '', 'ns', 'search', 'h', '["A1"]', '{}');
)sql";

class SqliteSchemaTest : public ::testing::Test {
 protected:
  std::filesystem::path db() const { return dir_ / "bulwark.db"; }
  std::optional<std::string> Meta(StorageBackend& backend, const char* key) {
    auto value = backend.GetMeta(key);
    EXPECT_THAT(value, IsOk());
    return value.ok() ? *value : std::nullopt;
  }
  testing::TempDir dir_;
};

TEST_F(SqliteSchemaTest, VersionOneOpensAtTheCurrentVersionWithEveryTable) {
  testing::ExecSql(db(), kVersion1);
  auto storage = OpenStorage(dir_.path().string(), /*create=*/false);
  ASSERT_THAT(storage, IsOk());
  StorageBackend& entries = *storage->entries;
  EXPECT_EQ(Meta(entries, "schema_version"), std::to_string(kStoreSchemaVersion));
  EXPECT_EQ(Meta(entries, kUnsignedHistoryMarker), "1") << "the one old event is signed by the entry store";
  EXPECT_EQ(Meta(entries, kUnsignedAccessMarker), std::nullopt) << "no old principals table: nothing to sign";
  EXPECT_FALSE(storage->access->upgraded_from_unsigned());
  EXPECT_FALSE(storage->gate->upgraded_from_unsigned());
  auto row = entries.GetEntry("ns", "A1");
  ASSERT_THAT(row, IsOk());
  ASSERT_TRUE(row->has_value());
  EXPECT_EQ((*row)->entry.text, "old");
  auto history = entries.History("ns", "A1");
  ASSERT_THAT(history, IsOk());
  ASSERT_EQ(history->size(), 1u);
  EXPECT_TRUE((*history)[0].tag.empty());
  EXPECT_THAT(storage->honeypot->PutSetting({"ns", "monitor", 4}), IsOk()) << "the new tables exist";
}

TEST_F(SqliteSchemaTest, VersionTwoWithUnsignedAccessAndGateRowsIsMarkedOnceForSigning) {
  testing::ExecSql(db(), kVersion1);
  testing::ExecSql(db(), std::string(kVersion2Extras) +
                             "ALTER TABLE history ADD COLUMN key_id INTEGER NOT NULL DEFAULT 0;"
                             "ALTER TABLE history ADD COLUMN tag BLOB NOT NULL DEFAULT x'';"
                             "UPDATE meta SET value = '2' WHERE key = 'schema_version';");
  {
    auto storage = OpenStorage(dir_.path().string(), /*create=*/false);
    ASSERT_THAT(storage, IsOk());
    EXPECT_EQ(Meta(*storage->entries, "schema_version"), std::to_string(kStoreSchemaVersion));
    EXPECT_EQ(Meta(*storage->entries, kUnsignedHistoryMarker), std::nullopt) << "version 2 history is signed";
    EXPECT_TRUE(storage->access->upgraded_from_unsigned());
    EXPECT_TRUE(storage->gate->upgraded_from_unsigned());
    auto principal = storage->access->FindPrincipal("root");
    ASSERT_THAT(principal, IsOk());
    ASSERT_TRUE(principal->has_value());
    EXPECT_TRUE((*principal)->tag.empty());
    AuditFilter all;
    auto moved = storage->audit->Query(all);
    ASSERT_THAT(moved, IsOk());
    ASSERT_EQ(moved->size(), 1u) << "the audit records moved to audit.db";
    EXPECT_EQ((*moved)[0].seq, 7);
    EXPECT_THAT(storage->gate->FinishSigningUpgrade(), IsOk());
    EXPECT_THAT(storage->access->FinishSigningUpgrade(), IsOk());
  }
  auto reopened = OpenStorage(dir_.path().string(), /*create=*/false);
  ASSERT_THAT(reopened, IsOk());
  EXPECT_FALSE(reopened->access->upgraded_from_unsigned()) << "marked once, signed once";
  EXPECT_FALSE(reopened->gate->upgraded_from_unsigned());
}

TEST_F(SqliteSchemaTest, VersionFiveKeepsItsWholeDetailsAndGainsDetailReferences) {
  { ASSERT_THAT(OpenStorage(dir_.path().string(), /*create=*/true), IsOk()); }
  // The history of schema version 5: no detail_ref; an add event holds its text and metadata.
  testing::ExecSql(
      db(),
      "ALTER TABLE history DROP COLUMN detail_ref;"
      "INSERT INTO entries(row_id, id, namespace, text, metadata, principal, source, kind, state, "
      "created_at_us, updated_at_us, embedding, key_id, tag, report) VALUES(1, 'A1', 'ns', 'old "
      "text', '{\"k\":1}', 'p', 'user', 'memory', 'active', 1, 1, x'', 1, x'00', '{}');"
      "INSERT INTO history(seq, entry_id, namespace, event, actor, at_us, detail) VALUES(1, 'A1', "
      "'ns', 'add', 'p', 1, '{\"metadata\":{\"k\":1},\"text\":\"old text\"}');"
      "UPDATE meta SET value = '5' WHERE key = 'schema_version';");
  auto storage = OpenStorage(dir_.path().string(), /*create=*/false);
  ASSERT_THAT(storage, IsOk());
  EXPECT_EQ(Meta(*storage->entries, "schema_version"), std::to_string(kStoreSchemaVersion));
  auto history = storage->entries->History("ns", "A1");
  ASSERT_THAT(history, IsOk());
  ASSERT_EQ(history->size(), 1u);
  EXPECT_EQ((*history)[0].detail, (nlohmann::json{{"text", "old text"}, {"metadata", {{"k", 1}}}}))
      << "the event keeps its own detail (detail_ref 0)";
}

TEST_F(SqliteSchemaTest, VersionSixKeepsItsPagesAndRawVectorsAndWritesPackedOnes) {
  // A file made by schema version 6: 64 KiB pages; a row with a raw vector {0, 0.6, 0, 0.8}.
  testing::ExecSql(db(),
                   "PRAGMA page_size=65536; CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);");
  { ASSERT_THAT(OpenStorage(dir_.path().string(), /*create=*/false), IsOk()); }
  testing::ExecSql(
      db(),
      "INSERT INTO entries(row_id, id, namespace, text, metadata, principal, source, kind, state, "
      "created_at_us, updated_at_us, embedding, key_id, tag, report) VALUES(1, 'A1', 'ns', 'old', '{}', 'p', "
      "'user', 'memory', 'active', 1, 1, x'000000009A99193F00000000CDCC4C3F', 1, x'00', '');"
      "UPDATE meta SET value = '6' WHERE key = 'schema_version';");
  auto backend = SqliteBackend::Open(db(), /*create=*/false);
  ASSERT_THAT(backend, IsOk());
  EXPECT_EQ(Meta(**backend, "schema_version"), std::to_string(kStoreSchemaVersion));
  auto old = (*backend)->GetEntry("ns", "A1");
  ASSERT_THAT(old, IsOk());
  ASSERT_TRUE(old->has_value());
  EXPECT_TRUE((*old)->ok()) << (*old)->decode_error;
  EXPECT_EQ((*old)->entry.embedding, (std::vector<float>{0.0f, 0.6f, 0.0f, 0.8f}));
  Entry sparse = (*old)->entry;
  sparse.id = "A2";
  sparse.embedding.assign(64, 0.0f);
  sparse.embedding[5] = 0.25f;
  ASSERT_THAT((*backend)->InsertEntries(std::vector<Entry>{sparse}, {}), IsOk());
  auto raw = RawSqlFile::Open(db());
  ASSERT_THAT(raw, IsOk());
  auto stored = (*raw)->Query("SELECT length(embedding) FROM entries ORDER BY row_id");
  ASSERT_THAT(stored, IsOk());
  ASSERT_EQ(stored->size(), 2u);
  EXPECT_EQ(SqlInt((*stored)[0][0]), 16) << "the old row is not rewritten";
  EXPECT_EQ(SqlInt((*stored)[1][0]), 17) << "2 + 8 + 4 bytes and 3 of padding (1 mod 4)";
  auto page = (*raw)->Query("PRAGMA page_size");
  ASSERT_THAT(page, IsOk());
  EXPECT_EQ(SqlInt((*page)[0][0]), 65536) << "a file keeps its page size";
  auto back = (*backend)->GetEntry("ns", "A2");
  ASSERT_THAT(back, IsOk());
  ASSERT_TRUE(back->has_value());
  EXPECT_EQ((*back)->entry.embedding, sparse.embedding);
}

TEST_F(SqliteSchemaTest, ACopyCarriesPackedVectorsAsRawFloats) {
  Entry sparse;
  sparse.id = "A1";
  sparse.name_space = "ns";
  sparse.text = "t";
  sparse.metadata = nlohmann::json::object();
  sparse.principal = "p";
  sparse.embedding.assign(384, 0.0f);
  sparse.embedding[7] = 0.5f;
  sparse.key_id = 1;
  sparse.tag = "tag";
  {
    auto from = OpenStorage(dir_.path().string(), /*create=*/true);
    ASSERT_THAT(from, IsOk());
    ASSERT_THAT(from->entries->InsertEntries(std::vector<Entry>{sparse}, {}), IsOk());
  }
  testing::TempDir to;
  { ASSERT_THAT(OpenStorage(to.path().string(), /*create=*/true), IsOk()); }
  ASSERT_THAT(CopyStoreRows(dir_.path().string(), to.path().string()), IsOk());
  auto raw = RawSqlFile::Open(to.path() / "bulwark.db");
  ASSERT_THAT(raw, IsOk());
  auto length = (*raw)->Query("SELECT length(embedding) FROM entries");
  ASSERT_THAT(length, IsOk());
  ASSERT_EQ(length->size(), 1u);
  EXPECT_EQ(SqlInt((*length)[0][0]), 384 * 4);
  auto copied = OpenStorage(to.path().string(), /*create=*/false);
  ASSERT_THAT(copied, IsOk());
  auto row = copied->entries->GetEntry("ns", "A1");
  ASSERT_THAT(row, IsOk());
  ASSERT_TRUE(row->has_value());
  EXPECT_EQ((*row)->entry.embedding, sparse.embedding);
}

// The layout main wrote until version 8: ids unique on their own, (namespace, id) a plain index.
TEST_F(SqliteSchemaTest, VersionSevenBecomesUniqueByNamespaceAndIdAndKeepsItsRows) {
  auto entry = [](std::string ns, std::string id, std::string text) {
    Entry e;
    e.id = std::move(id);
    e.name_space = std::move(ns);
    e.text = std::move(text);
    e.metadata = nlohmann::json::object();
    e.principal = "p";
    e.embedding = {0.0f, 0.6f, 0.0f, 0.8f};
    e.key_id = 1;
    e.tag = "tag";
    return e;
  };
  auto indexes = [this] {
    auto raw = RawSqlFile::Open(db());
    EXPECT_THAT(raw, IsOk());
    std::vector<std::pair<std::string, int64_t>> out;
    if (!raw.ok()) return out;
    auto rows = (*raw)->Query(
        "SELECT name, \"unique\" FROM pragma_index_list('entries') WHERE name LIKE 'entries_by_%id' ORDER BY "
        "name");
    EXPECT_THAT(rows, IsOk());
    if (rows.ok()) {
      for (const auto& row : *rows) out.emplace_back(SqlBytes(row[0]), SqlInt(row[1]));
    }
    return out;
  };
  {
    auto backend = SqliteBackend::Open(db(), /*create=*/true);
    ASSERT_THAT(backend, IsOk());
    ASSERT_THAT(
        (*backend)->InsertEntries(std::vector<Entry>{entry("a", "A1", "one"), entry("b", "B1", "two")}, {}),
        IsOk());
  }
  testing::ExecSql(
      db(),
      "DROP INDEX entries_by_namespace_id; CREATE INDEX entries_by_namespace_id ON entries(namespace, "
      "id); CREATE UNIQUE INDEX entries_by_id ON entries(id); UPDATE meta SET value = '7' WHERE key = "
      "'schema_version';");
  EXPECT_EQ(indexes(), (std::vector<std::pair<std::string, int64_t>>{{"entries_by_id", 1},
                                                                     {"entries_by_namespace_id", 0}}));
  auto backend = SqliteBackend::Open(db(), /*create=*/false);
  ASSERT_THAT(backend, IsOk());
  EXPECT_EQ(Meta(**backend, "schema_version"), std::to_string(kStoreSchemaVersion));
  EXPECT_EQ(indexes(), (std::vector<std::pair<std::string, int64_t>>{{"entries_by_namespace_id", 1}}));
  for (const auto& [ns, id, text] : {std::tuple{"a", "A1", "one"}, std::tuple{"b", "B1", "two"}}) {
    auto row = (*backend)->GetEntry(ns, id);
    ASSERT_THAT(row, IsOk());
    ASSERT_TRUE(row->has_value()) << id;
    EXPECT_EQ((*row)->entry.text, text);
  }
  EXPECT_THAT((*backend)->InsertEntries(std::vector<Entry>{entry("a", "A1", "again")}, {}),
              StatusIs(absl::StatusCode::kAlreadyExists))
      << "an id is still unique in its namespace";
  EXPECT_THAT((*backend)->InsertEntries(std::vector<Entry>{entry("c", "C1", "three")}, {}), IsOk());
  // Every statement that finds an entry by id names its namespace, and is answered from the index.
  auto raw = RawSqlFile::Open(db());
  ASSERT_THAT(raw, IsOk());
  auto plan = (*raw)->Query("EXPLAIN QUERY PLAN SELECT 1 FROM entries WHERE id = 'A1' AND namespace = 'a'");
  ASSERT_THAT(plan, IsOk());
  ASSERT_EQ(plan->size(), 1u);
  EXPECT_THAT(SqlBytes((*plan)[0][3]),
              ::testing::HasSubstr("entries_by_namespace_id (namespace=? AND id=?)"));
}

TEST_F(SqliteSchemaTest, ANewStoreIsCurrentAndANewerVersionIsRefused) {
  {
    auto storage = OpenStorage(dir_.path().string(), /*create=*/true);
    ASSERT_THAT(storage, IsOk());
    EXPECT_EQ(Meta(*storage->entries, "schema_version"), std::to_string(kStoreSchemaVersion));
    EXPECT_EQ(Meta(*storage->entries, kUnsignedHistoryMarker), std::nullopt);
    EXPECT_FALSE(storage->access->upgraded_from_unsigned());
    EXPECT_FALSE(storage->gate->upgraded_from_unsigned());
  }
  testing::ExecSql(db(), "UPDATE meta SET value = '" + std::to_string(kStoreSchemaVersion + 1) +
                             "' WHERE key = 'schema_version'");
  EXPECT_THAT(OpenStorage(dir_.path().string(), false), StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(OpenGateRepository(dir_.path().string()), StatusIs(absl::StatusCode::kFailedPrecondition));
}

}  // namespace
}  // namespace bulwark
