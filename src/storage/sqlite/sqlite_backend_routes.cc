// SqliteBackend's part of the routes the agent clients need (storage_backend.h; doc/api.md):
// inserts with an idempotency or client-key claim checked in the same transaction, listings,
// expired entries and the idempotency records' expiry.
#include <absl/strings/str_cat.h>
#include <absl/synchronization/mutex.h>
#include <sqlite3.h>

#include "core/status_macros.h"
#include "storage/sqlite/sqlite_backend.h"
#include "storage/sqlite/sqlite_entry_rows.h"
#include "storage/sqlite/sqlite_util.h"

namespace bulwark {

using sqlite_rows::DecodeRow;
using sqlite_rows::kExpiryExpr;
using sqlite_rows::kKeyExpr;
using sqlite_rows::kReportColumn;
using sqlite_rows::kSignedEntryColumns;

absl::Status SqliteBackend::CheckClaimLocked(std::string_view name_space, std::string_view principal,
                                             const InsertClaim& claim, InsertOutcome* outcome) {
  if (!claim.idempotency_key.empty()) {
    Statement st(db_,
                 "SELECT entry_ids, request_hash FROM idempotency WHERE namespace = ? AND principal = ? "
                 "AND idempotency_key = ? AND created_at_us > ?");
    BULWARK_RETURN_IF_ERROR(st.status());
    st.Bind(1, name_space);
    st.Bind(2, principal);
    st.Bind(3, claim.idempotency_key);
    st.Bind(4, claim.idempotency_after_us);
    const int rc = st.Step();
    if (rc == SQLITE_ROW) {
      // Written by InsertEntriesOnce as a JSON array of ids; anything else is treated as no ids.
      nlohmann::json ids = nlohmann::json::parse(st.TextView(0), nullptr, /*allow_exceptions=*/false);
      if (ids.is_array()) {
        for (const auto& id : ids) {
          if (id.is_string()) outcome->replay_ids.push_back(id.get<std::string>());
        }
      }
      outcome->replay_request_hash = st.Text(1);
      if (outcome->replay_ids.empty()) return absl::DataLossError("an idempotency record holds no entry ids");
      return absl::OkStatus();
    }
    if (rc != SQLITE_DONE) return SqliteError(db_, "read idempotency record");
  }
  if (!claim.entry_key.empty()) {
    Statement st(
        db_, absl::StrCat("SELECT id FROM entries WHERE namespace = ? AND ", kKeyExpr,
                          " = ? AND state IN ('active', 'quarantined') AND kind = 'memory' AND NOT (typeof(",
                          kExpiryExpr, ") = 'integer' AND ", kExpiryExpr, " <= ?) LIMIT 1"));
    BULWARK_RETURN_IF_ERROR(st.status());
    st.Bind(1, name_space);
    st.Bind(2, claim.entry_key);
    st.Bind(3, claim.now_us);
    const int rc = st.Step();
    if (rc == SQLITE_ROW) outcome->key_taken_by = st.Text(0);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return SqliteError(db_, "read entry key");
  }
  return absl::OkStatus();
}

absl::StatusOr<InsertOutcome> SqliteBackend::InsertEntriesOnce(std::span<const Entry> entries,
                                                               std::span<const HistoryEvent> events,
                                                               const InsertClaim& claim) {
  if (entries.empty()) return absl::InvalidArgumentError("nothing to insert");
  const Entry& first = entries.front();
  absl::MutexLock lock(&mu_);
  inserted_event_seqs_.clear();
  Transaction txn(db_);
  if (!txn.status().ok()) return txn.status();
  InsertOutcome outcome;
  BULWARK_RETURN_IF_ERROR(CheckClaimLocked(first.name_space, first.principal, claim, &outcome));
  if (!outcome.replay_ids.empty() || !outcome.key_taken_by.empty()) return outcome;  // rolled back
  auto row_ids = InsertLocked(entries, events);
  if (!row_ids.ok()) return row_ids.status();
  outcome.row_ids = *std::move(row_ids);
  if (!claim.idempotency_key.empty()) {
    nlohmann::json ids = nlohmann::json::array();
    for (const Entry& e : entries) ids.push_back(e.id);
    Statement st(db_,
                 "INSERT OR REPLACE INTO idempotency(namespace, principal, idempotency_key, request_hash, "
                 "entry_ids, created_at_us) VALUES(?,?,?,?,?,?)");
    BULWARK_RETURN_IF_ERROR(st.status());
    st.Bind(1, first.name_space);
    st.Bind(2, first.principal);
    st.Bind(3, claim.idempotency_key);
    st.Bind(4, claim.request_hash);
    st.Bind(5, ids.dump());
    st.Bind(6, first.created_at_us);
    BULWARK_RETURN_IF_ERROR(st.Run("write idempotency record"));
  }
  BULWARK_RETURN_IF_ERROR(txn.Commit());
  return outcome;
}

absl::StatusOr<std::vector<StoredRow>> SqliteBackend::ListEntries(const ListQuery& query) {
  if (query.limit < 1 || query.limit > 10000) return absl::InvalidArgumentError("limit must be 1..10000");
  if (query.states.empty()) return absl::InvalidArgumentError("no states to list");
  std::string states;
  for (State state : query.states)
    absl::StrAppend(&states, states.empty() ? "'" : ", '", std::string(ToString(state)), "'");
  const std::string sql = absl::StrCat(
      "SELECT ", kSignedEntryColumns, kReportColumn,
      " FROM entries WHERE namespace = ?1 AND id > ?2 AND kind = 'memory' AND state IN (", states, ")",
      query.key ? absl::StrCat(" AND ", kKeyExpr, " = ?4") : "", " ORDER BY id LIMIT ?3");
  absl::MutexLock lock(&mu_);
  Statement st(db_, sql);
  BULWARK_RETURN_IF_ERROR(st.status());
  st.Bind(1, query.name_space);
  st.Bind(2, query.after_id);
  st.Bind(3, int64_t{query.limit});
  if (query.key) st.Bind(4, *query.key);
  std::vector<StoredRow> rows;
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) rows.push_back(DecodeRow(st));
  if (rc != SQLITE_DONE) return SqliteError(db_, "list entries");
  return rows;
}

absl::StatusOr<std::vector<std::pair<std::string, std::string>>> SqliteBackend::ExpiredEntries(int64_t now_us,
                                                                                               int limit) {
  absl::MutexLock lock(&mu_);
  Statement st(db_, absl::StrCat("SELECT namespace, id FROM entries WHERE ", kExpiryExpr,
                                 " <= ?1 AND typeof(", kExpiryExpr,
                                 ") = 'integer' AND state != 'purged' ORDER BY ", kExpiryExpr, " LIMIT ?2"));
  BULWARK_RETURN_IF_ERROR(st.status());
  st.Bind(1, now_us);
  st.Bind(2, int64_t{limit});
  std::vector<std::pair<std::string, std::string>> expired;
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) expired.emplace_back(st.Text(0), st.Text(1));
  if (rc != SQLITE_DONE) return SqliteError(db_, "find expired entries");
  return expired;
}

absl::StatusOr<int64_t> SqliteBackend::DeleteIdempotencyRecords(int64_t before_us) {
  absl::MutexLock lock(&mu_);
  Statement st(db_, "DELETE FROM idempotency WHERE created_at_us <= ?");
  BULWARK_RETURN_IF_ERROR(st.status());
  st.Bind(1, before_us);
  BULWARK_RETURN_IF_ERROR(st.Run("delete idempotency records"));
  return static_cast<int64_t>(sqlite3_changes(db_));
}

}  // namespace bulwark
