// CopyStoreRows: copies every table of one store into another store, row for row with the bytes
// unchanged (ids, row ids, history seqs and chain links, tags, audit seqs), between any two
// engines (SQLite directory, PostgreSQL URL: storage_opener.h). It is the storage half of
// `bulwark migrate`: it checks nothing about signatures (the command verifies the source before
// and the target after, with the keyring), and because every signature is computed above storage,
// the copied rows verify with the same keyring in the target. One column changes form, not value:
// an SQLite entry's packed vector (schema version 7, sqlite/vector_codec.h) is copied as its raw
// floats, the form PostgreSQL stores (the floats, and so the signatures, are the same).
//
// The target must have just been created by OpenStorage(to, create=true) and hold no rows: the
// copy writes into it in one transaction per database (SQLite: the store's file and audit.db;
// PostgreSQL: one), batched (COPY FROM STDIN in binary form for PostgreSQL, prepared INSERTs for
// SQLite), so a failed copy leaves the target's tables as created. Meta rows are copied except
// the engine's own `format` and `schema_version`; the target's other meta rows (a new store's
// markers) are replaced by the source's. PostgreSQL's counters (history_counter, the identity
// sequences of entries.row_id and honeypot_runs.run_id) are moved past the copied rows.
#pragma once

#include <absl/status/statusor.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bulwark {

struct CopiedTable {
  std::string table;
  int64_t rows = 0;
};

// Copies the rows of store `from` into the new, empty store `to` (see above). Returns the rows
// copied per table, in copy order. FailedPrecondition if the target already holds rows of a
// table; the engines' errors otherwise (Unavailable, DataLoss, AlreadyExists).
[[nodiscard]] absl::StatusOr<std::vector<CopiedTable>> CopyStoreRows(std::string_view from,
                                                                     std::string_view to);

}  // namespace bulwark
