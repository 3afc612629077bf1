// Internal to the SQLite backend: how an entry row is written and read (the sqlite_backend*.cc
// files share it), and how whole-table scans read the file. Rows are decoded defensively: a
// problem never fails the read, it lands in StoredRow::decode_error (see StorageBackend).
#pragma once

#include <sqlite3.h>

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "bulwark/entry.h"
#include "storage/sqlite/sqlite_util.h"
#include "storage/storage_backend.h"

namespace bulwark::sqlite_rows {

// The reserved metadata members (store/entry_keys.h) as SQL expressions over the metadata column;
// identical to the index expressions above, so SQLite uses those indexes.
inline constexpr char kKeyExpr[] =
    "(CASE WHEN json_valid(metadata) THEN json_extract(metadata, '$.\"bulwark.key\"') END)";
inline constexpr char kExpiryExpr[] =
    "(CASE WHEN json_valid(metadata) THEN json_extract(metadata, '$.\"bulwark.expires_at_us\"') END)";

// An entry's columns as DecodeRow reads them: the signed ones, then the advisory report.
inline constexpr char kSignedEntryColumns[] =
    "row_id, id, namespace, text, metadata, principal, source, kind, state, created_at_us, "
    "updated_at_us, embedding, key_id, tag";
inline constexpr char kReportColumn[] = ", report";

// A vector as the bytes of its floats (host order: little-endian): the query history's form. An
// entry row's vector is stored as vector_codec.h says.
std::string EmbeddingBytes(const std::vector<float>& embedding);

// Binds an entry's columns (the signed ones, then the report) to parameters 1 .. 14 of an INSERT
// or UPDATE in kSignedEntryColumns' order without row_id.
void BindEntry(Statement& st, const Entry& e);

// Decodes kSignedEntryColumns followed by the report column into `row`, whose strings and vectors
// are overwritten in place (a scan reuses one row: no allocation per row once they are large
// enough). Never fails: problems land in row->decode_error.
void DecodeRowInto(const Statement& st, StoredRow* row);
StoredRow DecodeRow(const Statement& st);

// The entries connection reads through a memory map (no copy per page read). A whole-table scan
// would map, and so keep resident, every page of the file; scans read through SQLite's small page
// cache instead, and the map is restored for the point reads that follow.
inline constexpr char kMmapOn[] = "PRAGMA mmap_size=1073741824";
class NoMmapWhileScanning {
 public:
  explicit NoMmapWhileScanning(sqlite3* db) : db_(db) { Exec(db_, "PRAGMA mmap_size=0").IgnoreError(); }
  ~NoMmapWhileScanning() { Exec(db_, kMmapOn).IgnoreError(); }
  NoMmapWhileScanning(const NoMmapWhileScanning&) = delete;
  NoMmapWhileScanning& operator=(const NoMmapWhileScanning&) = delete;

 private:
  sqlite3* db_;
};

}  // namespace bulwark::sqlite_rows
