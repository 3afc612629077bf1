// The one schema of a store's SQLite database (bulwark.db): every table of every concern (entries
// and history, idempotency records, the write gate's state, principals and keys, query gates,
// honeypot state), one `schema_version` in table `meta` that covers all of them, and the ordered
// list of migrations from every earlier version (sqlite_schema.cc). Every SQLite repository that
// keeps tables in bulwark.db opens its connection through OpenStoreDatabase, so whichever opens
// first upgrades the whole file. (The audit log's file keeps its own version: see
// sqlite_audit_repository.h.) Layout and history of versions: doc/store_format.md.
#pragma once

#include <absl/status/status.h>
#include <absl/status/statusor.h>

#include <filesystem>

struct sqlite3;

namespace bulwark {

// The version this build writes and reads. Stores of any earlier version are upgraded on open.
inline constexpr int kStoreSchemaVersion = 8;
inline constexpr char kStoreFormatName[] = "bulwark.store";

// Markers the migrations leave in `meta` for the layer that holds the signing key: rows written
// before their table was signed must be signed once (afterwards an unsigned row is a forged one).
// Each is deleted by that layer when it has signed them.
inline constexpr char kUnsignedHistoryMarker[] = "unsigned_history_through";  // value: last such seq
inline constexpr char kUnsignedAccessMarker[] = "unsigned_access_rows";       // principals, api_keys
inline constexpr char kUnsignedGateMarker[] = "unsigned_gate_rows";           // query_gates
inline constexpr char kUnlinkedHistoryMarker[] = "unlinked_history_through";  // value: last such seq
// The signed head of the history chain (StorageBackend::HistoryChainHead), as JSON
// {"seq", "link" (hex), "key_id", "tag" (hex)}.
inline constexpr char kHistoryHeadKey[] = "history_head";
// The signed list of namespaces with a query gate (GateRepository::Manifest), as JSON
// {"namespaces", "key_id", "tag" (hex)}, and the mark that an upgraded store has none yet.
inline constexpr char kGateManifestKey[] = "query_gate_manifest";
inline constexpr char kGateManifestMarker[] = "unwritten_gate_manifest";
// The mark that retrieval settings ("retrieval/<namespace>") written before they were signed wait
// to be signed once (store/retrieval_settings.h).
inline constexpr char kUnsignedRetrievalMarker[] = "unsigned_retrieval_settings";

// Brings the open database `db` (at `path`, for messages) to kStoreSchemaVersion: creates every
// table a store has, marks a file without store metadata as a store (unless it holds entries),
// then runs the migrations from its version in order, each in one write transaction that
// re-reads the version first (two processes opening an old store at once upgrade it once).
// DataLoss if the file is another program's database; FailedPrecondition for a version newer
// than this build's; Unavailable if the file is locked past the busy timeout.
[[nodiscard]] absl::Status PrepareStoreSchema(sqlite3* db, const std::filesystem::path& path);

// Opens the existing store database at `path` for a repository (busy timeout, WAL,
// synchronous=FULL: OpenExistingDatabase) and prepares its schema. The caller owns the handle.
// NotFound if there is no file; other errors as OpenExistingDatabase and PrepareStoreSchema.
[[nodiscard]] absl::StatusOr<sqlite3*> OpenStoreDatabase(const std::filesystem::path& path);

// Whether table `meta` has a row `key` (a repository reading a marker), and deleting it.
[[nodiscard]] absl::StatusOr<bool> HasMeta(sqlite3* db, const char* key);
[[nodiscard]] absl::Status DeleteMeta(sqlite3* db, const char* key);

}  // namespace bulwark
