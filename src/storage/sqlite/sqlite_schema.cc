// The store database's schema and its migrations, in version order (see sqlite_schema.h).
//
// Versions:
//   1  entries, history (unsigned), meta, query_history, calibrations
//   2  history events carry key_id and tag; events from version 1 are marked for signing
//   3  one version for every table of the file: idempotency, principals, api_keys, query_gates
//      and the honeypot tables are part of the schema; principals, API keys and query gates made
//      before they were signed gain sign_key_id and tag and are marked for signing (these two
//      upgrades ran on their own, unversioned, in the repositories before)
//   4  history events carry link_key_id and link (the store-wide chain, store/history_chain.h)
//      and meta holds the signed head; events from before are marked for linking
//   5  meta holds the signed manifest of the namespaces with a query gate, and the retrieval
//      settings ("retrieval/<namespace>") are signed; both are marked for their first signing
//   6  history events may store their detail's text and metadata by reference to the entry's row
//      (detail_ref); older events keep theirs
//   7  an entry's vector may be stored packed (storage/sqlite/vector_codec.h); rows written before
//      keep their raw vectors, which version 7 reads as they are. Nothing is rewritten: the version
//      only keeps builds that cannot read packed vectors away from the file
//   8  an entry is unique by (namespace, id): entries_by_namespace_id is the unique index and the
//      index on id alone (entries_by_id) is dropped. Every statement names an entry by namespace and
//      id, and an add wrote one B-tree page fewer per commit (bench/RESULTS.md, "The HTTP add
//      against 7176b99: one index fewer")
#include "storage/sqlite/sqlite_schema.h"

#include <absl/strings/numbers.h>
#include <absl/strings/str_cat.h>
#include <sqlite3.h>

#include <iterator>
#include <optional>
#include <string>

#include "storage/sqlite/sqlite_util.h"

namespace bulwark {
namespace {

// Every table and index of a store at kStoreSchemaVersion. Run on every open: on an older store it
// creates what is missing, and the migrations then alter the tables that existed before. The
// client-key and expiry indexes are partial (only rows that have a key or an expiry: most have
// neither); a store made before version 6 keeps its full ones, which answer the same queries.
constexpr char kStoreSchema[] = R"sql(
CREATE TABLE IF NOT EXISTS meta(
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS entries(
  row_id        INTEGER PRIMARY KEY,
  id            TEXT NOT NULL,
  namespace     TEXT NOT NULL,
  text          TEXT NOT NULL,
  metadata      TEXT NOT NULL,
  principal     TEXT NOT NULL,
  source        TEXT NOT NULL,
  kind          TEXT NOT NULL,
  state         TEXT NOT NULL,
  created_at_us INTEGER NOT NULL,
  updated_at_us INTEGER NOT NULL,
  embedding     BLOB NOT NULL,
  key_id        INTEGER NOT NULL,
  tag           BLOB NOT NULL,
  report        TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS entries_by_namespace ON entries(namespace, row_id);
CREATE TABLE IF NOT EXISTS history(
  seq       INTEGER PRIMARY KEY,
  entry_id  TEXT NOT NULL,
  namespace TEXT NOT NULL,
  event     TEXT NOT NULL,
  actor     TEXT NOT NULL,
  at_us     INTEGER NOT NULL,
  detail    TEXT NOT NULL,
  key_id    INTEGER NOT NULL DEFAULT 0,
  tag       BLOB NOT NULL DEFAULT x'',
  link_key_id INTEGER NOT NULL DEFAULT 0,
  link      BLOB NOT NULL DEFAULT x'',
  detail_ref INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS history_by_entry ON history(entry_id, seq);
CREATE TABLE IF NOT EXISTS query_history(
  namespace TEXT NOT NULL,
  seq       INTEGER NOT NULL,
  embedding BLOB NOT NULL,
  PRIMARY KEY(namespace, seq)
);
CREATE TABLE IF NOT EXISTS calibrations(
  namespace   TEXT PRIMARY KEY,
  calibration TEXT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS entries_by_namespace_id ON entries(namespace, id);
CREATE INDEX IF NOT EXISTS entries_by_key ON entries(namespace,
  (CASE WHEN json_valid(metadata) THEN json_extract(metadata, '$."bulwark.key"') END))
  WHERE (CASE WHEN json_valid(metadata) THEN json_extract(metadata, '$."bulwark.key"') END) IS NOT NULL;
CREATE INDEX IF NOT EXISTS entries_by_expiry ON entries(
  (CASE WHEN json_valid(metadata) THEN json_extract(metadata, '$."bulwark.expires_at_us"') END))
  WHERE (CASE WHEN json_valid(metadata) THEN json_extract(metadata, '$."bulwark.expires_at_us"') END) IS NOT NULL;
CREATE TABLE IF NOT EXISTS idempotency(
  namespace       TEXT NOT NULL,
  principal       TEXT NOT NULL,
  idempotency_key TEXT NOT NULL,
  request_hash    TEXT NOT NULL,
  entry_ids       TEXT NOT NULL,
  created_at_us   INTEGER NOT NULL,
  PRIMARY KEY(namespace, principal, idempotency_key)
);
CREATE TABLE IF NOT EXISTS principals(
  name          TEXT PRIMARY KEY,
  role          TEXT NOT NULL,
  namespaces    TEXT NOT NULL,
  revoked       INTEGER NOT NULL DEFAULT 0,
  created_at_us INTEGER NOT NULL,
  sign_key_id   INTEGER NOT NULL DEFAULT 0,
  tag           BLOB NOT NULL DEFAULT x''
);
CREATE TABLE IF NOT EXISTS api_keys(
  key_id        TEXT PRIMARY KEY,
  principal     TEXT NOT NULL,
  secret_sha256 TEXT NOT NULL,
  created_at_us INTEGER NOT NULL,
  revoked       INTEGER NOT NULL DEFAULT 0,
  sign_key_id   INTEGER NOT NULL DEFAULT 0,
  tag           BLOB NOT NULL DEFAULT x''
);
CREATE INDEX IF NOT EXISTS api_keys_by_principal ON api_keys(principal);
CREATE TABLE IF NOT EXISTS query_gates(
  namespace    TEXT PRIMARY KEY,
  mode         TEXT NOT NULL,
  embedder     TEXT NOT NULL,
  fitted_at_us INTEGER NOT NULL,
  source       TEXT NOT NULL,
  model        BLOB NOT NULL,
  sign_key_id  INTEGER NOT NULL DEFAULT 0,
  tag          BLOB NOT NULL DEFAULT x''
);
CREATE TABLE IF NOT EXISTS honeypot_runs(
  run_id        INTEGER PRIMARY KEY,
  namespace     TEXT NOT NULL,
  at_us         INTEGER NOT NULL,
  batch         INTEGER NOT NULL,
  metrics       TEXT NOT NULL,
  covered_ids   TEXT NOT NULL,
  pot_ids       TEXT NOT NULL,
  removed_at_us INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS honeypot_runs_by_namespace ON honeypot_runs(namespace, run_id);
CREATE TABLE IF NOT EXISTS honeypot_blocks(
  key       BLOB PRIMARY KEY,
  namespace TEXT NOT NULL,
  state     BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS honeypot_settings(
  namespace TEXT PRIMARY KEY,
  mode      TEXT NOT NULL,
  k_obs     INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS honeypot_intent(
  namespace   TEXT PRIMARY KEY,
  run_id      INTEGER NOT NULL,
  intent      TEXT NOT NULL,
  sign_key_id INTEGER NOT NULL,
  tag         BLOB NOT NULL
);
)sql";

absl::StatusOr<bool> HasColumn(sqlite3* db, const char* table, const char* column) {
  Statement st(db, "SELECT count(*) FROM pragma_table_info(?) WHERE name = ?");
  if (auto s = st.status(); !s.ok()) return s;
  st.Bind(1, table);
  st.Bind(2, column);
  if (st.Step() != SQLITE_ROW) return SqliteError(db, "read table layout");
  return st.Int(0) > 0;
}

absl::Status PutMetaValue(sqlite3* db, const char* key, const std::string& value) {
  Statement st(
      db, "INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value");
  if (auto s = st.status(); !s.ok()) return s;
  st.Bind(1, key);
  st.Bind(2, value);
  return st.Run("write meta");
}

absl::StatusOr<std::optional<std::string>> MetaValue(sqlite3* db, const char* key) {
  Statement st(db, "SELECT value FROM meta WHERE key = ?");
  if (auto s = st.status(); !s.ok()) return s;
  st.Bind(1, key);
  const int rc = st.Step();
  if (rc == SQLITE_ROW) return std::optional<std::string>(st.Text(0));
  if (rc == SQLITE_DONE) return std::optional<std::string>();
  return SqliteError(db, "read meta");
}

// Adds sign_key_id and tag to `table` if it was made before its rows were signed, and leaves
// `marker` for the layer that signs them.
absl::Status AddRowSignatures(sqlite3* db, const char* table, const char* marker) {
  absl::StatusOr<bool> has = HasColumn(db, table, "tag");
  if (!has.ok()) return has.status();
  if (*has) return absl::OkStatus();
  const std::string alter =
      absl::StrCat("ALTER TABLE ", table, " ADD COLUMN sign_key_id INTEGER NOT NULL DEFAULT 0; ",
                   "ALTER TABLE ", table, " ADD COLUMN tag BLOB NOT NULL DEFAULT x''");
  if (auto s = Exec(db, alter.c_str()); !s.ok()) return s;
  return PutMetaValue(db, marker, "1");
}

// 1 -> 2: history events gain key_id and tag; the events written so far are signed once by the
// entry store (kUnsignedHistoryMarker).
absl::Status SignHistory(sqlite3* db) {
  absl::StatusOr<bool> has = HasColumn(db, "history", "tag");
  if (!has.ok()) return has.status();
  if (*has) return absl::OkStatus();
  return Exec(
      db,
      "ALTER TABLE history ADD COLUMN key_id INTEGER NOT NULL DEFAULT 0;"
      "ALTER TABLE history ADD COLUMN tag BLOB NOT NULL DEFAULT x'';"
      "INSERT OR REPLACE INTO meta(key, value) SELECT 'unsigned_history_through', COALESCE(MAX(seq), 0) "
      "FROM history;");
}

// 2 -> 3: the tables that had no version of their own; the schema above created the missing ones.
absl::Status OneVersionForEveryTable(sqlite3* db) {
  if (auto s = AddRowSignatures(db, "principals", kUnsignedAccessMarker); !s.ok()) return s;
  if (auto s = AddRowSignatures(db, "api_keys", kUnsignedAccessMarker); !s.ok()) return s;
  return AddRowSignatures(db, "query_gates", kUnsignedGateMarker);
}

// 3 -> 4: the history chain; the entry store links the events written so far once
// (kUnlinkedHistoryMarker) and writes the head.
absl::Status LinkHistory(sqlite3* db) {
  absl::StatusOr<bool> has = HasColumn(db, "history", "link");
  if (!has.ok()) return has.status();
  if (*has) return absl::OkStatus();
  return Exec(
      db,
      "ALTER TABLE history ADD COLUMN link_key_id INTEGER NOT NULL DEFAULT 0;"
      "ALTER TABLE history ADD COLUMN link BLOB NOT NULL DEFAULT x'';"
      "INSERT OR REPLACE INTO meta(key, value) SELECT 'unlinked_history_through', COALESCE(MAX(seq), 0) "
      "FROM history;");
}

// 4 -> 5: the query gate manifest and signed retrieval settings. Every store is marked: the gate
// store writes the first manifest (of the rows there are) and the entry store's owner signs the
// settings written so far, once.
absl::Status SignGateSetAndSettings(sqlite3* db) {
  if (auto s = PutMetaValue(db, kGateManifestMarker, "1"); !s.ok()) return s;
  return PutMetaValue(db, kUnsignedRetrievalMarker, "1");
}

// 5 -> 6: an event's detail may leave the text and metadata it shares with its entry's row to the
// row (detail_ref, storage/sqlite/sqlite_event_rows.h). The events written until now keep their
// whole detail (detail_ref 0): nothing is rewritten.
absl::Status DetailReferences(sqlite3* db) {
  absl::StatusOr<bool> has = HasColumn(db, "history", "detail_ref");
  if (!has.ok()) return has.status();
  if (*has) return absl::OkStatus();
  return Exec(db, "ALTER TABLE history ADD COLUMN detail_ref INTEGER NOT NULL DEFAULT 0;");
}

// 6 -> 7: new rows may hold packed vectors; the rows there are stay raw (both forms are read).
absl::Status PackedVectors(sqlite3*) { return absl::OkStatus(); }

// 7 -> 8: (namespace, id) becomes the unique key and the index on id alone goes. The ids were
// unique on their own until now, so the unique index always builds. A store that had the
// (namespace, id) index has it without the UNIQUE flag: it is built again.
absl::Status UniqueByNamespaceAndId(sqlite3* db) {
  bool unique = false;
  {
    Statement st(
        db, "SELECT \"unique\" FROM pragma_index_list('entries') WHERE name = 'entries_by_namespace_id'");
    if (auto s = st.status(); !s.ok()) return s;
    const int rc = st.Step();
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return SqliteError(db, "read the entries indexes");
    unique = rc == SQLITE_ROW && st.Int(0) == 1;
  }
  if (!unique) {
    if (auto s = Exec(db,
                      "DROP INDEX IF EXISTS entries_by_namespace_id; "
                      "CREATE UNIQUE INDEX entries_by_namespace_id ON entries(namespace, id);");
        !s.ok()) {
      return s;
    }
  }
  return Exec(db, "DROP INDEX IF EXISTS entries_by_id;");
}

struct Migration {
  int to_version;
  const char* what;
  absl::Status (*apply)(sqlite3* db);
};

// In version order; the last one's to_version is kStoreSchemaVersion.
constexpr Migration kMigrations[] = {
    {2, "history events carry signatures", SignHistory},
    {3, "one schema version for every table; principals, keys and query gates carry signatures",
     OneVersionForEveryTable},
    {4, "the history chain", LinkHistory},
    {5, "the query gate manifest; signed retrieval settings", SignGateSetAndSettings},
    {6, "history details refer to their entry's text and metadata", DetailReferences},
    {7, "entry vectors may be packed", PackedVectors},
    {8, "entries are unique by namespace and id", UniqueByNamespaceAndId},
};
static_assert(kMigrations[std::size(kMigrations) - 1].to_version == kStoreSchemaVersion);

// The stored schema version; FailedPrecondition if it is missing or not a number.
absl::StatusOr<int> StoredVersion(sqlite3* db, const std::filesystem::path& path) {
  absl::StatusOr<std::optional<std::string>> version = MetaValue(db, "schema_version");
  if (!version.ok()) return version.status();
  int parsed = 0;
  if (!version->has_value() || !absl::SimpleAtoi(**version, &parsed) || parsed < 1) {
    return absl::FailedPreconditionError(absl::StrCat(path.string(), ": store schema version ",
                                                      version->value_or("(missing)"), " is not supported"));
  }
  return parsed;
}

// Marks a file without store metadata as a store, unless it holds entries (then it is someone
// else's database). It starts at version 1 so that every migration runs: each checks the layout it
// finds, so tables an older build made in the file before it was marked are upgraded too.
absl::Status AdoptOrCheckFormat(sqlite3* db, const std::filesystem::path& path) {
  absl::StatusOr<std::optional<std::string>> format = MetaValue(db, "format");
  if (!format.ok()) return format.status();
  if (format->has_value()) {
    if (**format != kStoreFormatName) {
      return absl::DataLossError(absl::StrCat(path.string(), " is not a Bulwark store"));
    }
    return absl::OkStatus();
  }
  Transaction txn(db);
  if (!txn.status().ok()) return txn.status();
  format = MetaValue(db, "format");  // again under the write lock
  if (!format.ok()) return format.status();
  if (format->has_value()) return absl::OkStatus();
  Statement st(db, "SELECT count(*) FROM entries");
  if (st.status().ok() && st.Step() == SQLITE_ROW && st.Int(0) > 0) {
    return absl::DataLossError(absl::StrCat(path.string(), " has entries but no store metadata"));
  }
  if (auto s = PutMetaValue(db, "format", kStoreFormatName); !s.ok()) return s;
  if (auto s = PutMetaValue(db, "schema_version", "1"); !s.ok()) return s;
  return txn.Commit();
}

}  // namespace

absl::Status PrepareStoreSchema(sqlite3* db, const std::filesystem::path& path) {
  if (auto s = Exec(db, kStoreSchema); !s.ok()) return s;
  if (auto s = AdoptOrCheckFormat(db, path); !s.ok()) return s;
  absl::StatusOr<int> version = StoredVersion(db, path);
  if (!version.ok()) return version.status();
  if (*version > kStoreSchemaVersion) {
    return absl::FailedPreconditionError(absl::StrCat("store schema version ", *version,
                                                      " is not supported (this build reads up to ",
                                                      kStoreSchemaVersion, ")"));
  }
  for (const Migration& migration : kMigrations) {
    if (*version >= migration.to_version) continue;
    Transaction txn(db);
    if (!txn.status().ok()) return txn.status();
    version = StoredVersion(db, path);  // again under the write lock: another process may have upgraded
    if (!version.ok()) return version.status();
    if (*version >= migration.to_version) continue;
    absl::Status s = migration.apply(db);
    if (s.ok()) s = PutMetaValue(db, "schema_version", std::to_string(migration.to_version));
    if (s.ok()) s = txn.Commit();
    if (!s.ok()) {
      return absl::Status(
          s.code(), absl::StrCat("upgrading ", path.string(), " to schema version ", migration.to_version,
                                 " (", migration.what, "): ", s.message()));
    }
    *version = migration.to_version;
  }
  return absl::OkStatus();
}

absl::StatusOr<sqlite3*> OpenStoreDatabase(const std::filesystem::path& path) {
  absl::StatusOr<sqlite3*> db = OpenExistingDatabase(path, "");
  if (!db.ok()) return db.status();
  if (auto s = PrepareStoreSchema(*db, path); !s.ok()) {
    sqlite3_close(*db);
    return s;
  }
  return db;
}

absl::StatusOr<bool> HasMeta(sqlite3* db, const char* key) {
  absl::StatusOr<std::optional<std::string>> value = MetaValue(db, key);
  if (!value.ok()) return value.status();
  return value->has_value();
}

absl::Status DeleteMeta(sqlite3* db, const char* key) {
  Statement st(db, "DELETE FROM meta WHERE key = ?");
  if (auto s = st.status(); !s.ok()) return s;
  st.Bind(1, key);
  return st.Run("delete meta");
}

}  // namespace bulwark
