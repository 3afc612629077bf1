// How entries and history events map to the PostgreSQL backend's rows and statement parameters
// (postgres_backend.h): the column lists, the parameters of a write, and the defensive decoding
// of a read (a row whose fields do not parse comes back with decode_error set, as in SQLite).
#pragma once

#include <string>
#include <vector>

#include "bulwark/entry.h"
#include "storage/postgresql/pg_connection.h"
#include "storage/storage_backend.h"

namespace bulwark::pg {

// An entry's columns as DecodeEntryRow reads them: the signed ones, then the advisory report.
inline constexpr char kSignedEntryColumns[] =
    "row_id, id, namespace, text, metadata, principal, source, kind, state, created_at_us, "
    "updated_at_us, embedding, key_id, tag";
inline constexpr char kEventColumns[] = "seq, entry_id, namespace, event, actor, at_us, detail, key_id, tag";

// $1..$14: id, namespace, text, metadata, principal, source, kind, state, created_at_us,
// updated_at_us, embedding (bytea), key_id, tag (bytea), report.
std::vector<PgParam> EntryParams(const Entry& e);
// $1..$9: seq, entry_id, namespace, event, actor, at_us, detail, key_id, tag (bytea).
std::vector<PgParam> EventParams(const HistoryEvent& ev, int64_t seq);

// The little-endian float bytes of an embedding (the SQLite store's encoding).
std::string EmbeddingBytes(const std::vector<float>& embedding);

// Decodes kSignedEntryColumns then the report at row `r`. Never fails.
StoredRow DecodeEntryRow(const PgResult& result, int r);
// Decodes kEventColumns at row `r`. Never fails (a bad detail reads as {"corrupt": true}).
HistoryEvent DecodeEventRow(const PgResult& result, int r);

}  // namespace bulwark::pg
