// PostgresBackend: the history chain (StorageBackend, "The history chain"; store/history_chain.h)
// and the metadata scans of the signed settings; mirrors sqlite_backend_chain.cc. Every append
// runs inside the caller's write transaction after it locked the history counter row (see
// postgres_backend.h), so the newest event and the head it reads cannot change before it
// commits: the counter lock orders the chain as SQLite's single writer does. The head is stored
// in `meta` as the same JSON as SQLite's, so a store copied between the two verifies in both.
#include <absl/strings/numbers.h>
#include <absl/strings/str_cat.h>
#include <absl/synchronization/mutex.h>

#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "core/hex.h"
#include "core/status_macros.h"
#include "storage/postgresql/postgres_backend.h"
#include "storage/postgresql/postgres_rows.h"
#include "storage/signed_meta_json.h"
#include "storage/sqlite/sqlite_schema.h"  // the names of the meta rows (kHistoryHeadKey, ...)

namespace bulwark {
namespace {

using pg::PgParam;
using pg::PgResult;
using pg::PgTransaction;

// The events' columns and their links, as ScanHistoryChain reads them.
const std::string& ChainColumns() {
  static const std::string columns = absl::StrCat(pg::kEventColumns, ", link_key_id, link");
  return columns;
}

HistoryLink DecodeLink(const PgResult& r, int row, int column) {
  const int64_t key_id = r.Int(row, column);
  return {key_id >= 0 && key_id <= UINT32_MAX ? static_cast<uint32_t>(key_id) : 0, r.Bytes(row, column + 1)};
}

// The newest event's seq and link, in the caller's transaction (or its own statement).
absl::StatusOr<std::pair<int64_t, HistoryLink>> ReadNewestLink(pg::PgConnection& conn) {
  BULWARK_ASSIGN_OR_RETURN(
      auto r, conn.Prepared("newest_link",
                            "SELECT seq, link_key_id, link FROM history ORDER BY seq DESC LIMIT 1", {}));
  if (r.rows() == 0) return std::pair<int64_t, HistoryLink>{0, {}};
  return std::pair<int64_t, HistoryLink>{r.Int(0, 0), DecodeLink(r, 0, 1)};
}

}  // namespace

absl::Status PostgresBackend::ScanMeta(
    std::string_view prefix, const std::function<absl::Status(std::string_view, std::string_view)>& visit) {
  absl::MutexLock lock(&mu_);
  // substr, not LIKE: a prefix may hold % or _. One statement: one snapshot.
  const std::vector<PgParam> params = {PgParam::Text(prefix)};
  BULWARK_ASSIGN_OR_RETURN(
      auto r, conn_->Prepared(
                  "scan_meta",
                  "SELECT key, value FROM meta WHERE substr(key, 1, length($1)) = $1 ORDER BY key", params));
  for (int i = 0; i < r.rows(); ++i) BULWARK_RETURN_IF_ERROR(visit(r.View(i, 0), r.View(i, 1)));
  return absl::OkStatus();
}

absl::Status PostgresBackend::DeleteMeta(std::string_view key) {
  absl::MutexLock lock(&mu_);
  const std::vector<PgParam> params = {PgParam::Text(key)};
  return conn_->Prepared("delete_meta", "DELETE FROM meta WHERE key = $1", params).status();
}

void PostgresBackend::SetHistoryChain(const HistoryChainSigner* signer) {
  absl::MutexLock lock(&mu_);
  chain_ = signer;
}

absl::StatusOr<std::optional<HistoryHead>> PostgresBackend::HeadLocked() {
  const std::vector<PgParam> params = {PgParam::Text(kHistoryHeadKey)};
  BULWARK_ASSIGN_OR_RETURN(auto r,
                           conn_->Prepared("get_meta", "SELECT value FROM meta WHERE key = $1", params));
  if (r.rows() == 0) return std::optional<HistoryHead>();
  return DecodeHistoryHead(r.View(0, 0));
}

absl::Status PostgresBackend::PutHeadLocked(const HistoryHead& head) {
  const std::string json = EncodeHistoryHead(head);
  const std::vector<PgParam> params = {PgParam::Text(kHistoryHeadKey), PgParam::Text(json)};
  return conn_
      ->Prepared(
          "put_meta",
          "INSERT INTO meta(key, value) VALUES($1, $2) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
          params)
      .status();
}

absl::StatusOr<std::string> PostgresBackend::ChainTailLocked() {
  BULWARK_ASSIGN_OR_RETURN(auto newest, ReadNewestLink(*conn_));
  BULWARK_ASSIGN_OR_RETURN(std::optional<HistoryHead> head, HeadLocked());
  // Appending after a truncated tail (or under a replaced head) would sign the damage over.
  const bool matches = head.has_value() ? head->seq == newest.first && head->link == newest.second.link &&
                                              chain_->CheckHead(*head).ok()
                                        : newest.first == 0;
  if (!matches) {
    return absl::DataLossError(absl::StrCat(
        "the history chain's head does not name the newest event (", newest.first,
        "): events were deleted or the head was replaced; writes are refused (run `bulwark verify`)"));
  }
  return std::move(newest.second.link);
}

absl::Status PostgresBackend::ScanHistoryChain(
    const std::function<absl::Status(const HistoryEvent&, const HistoryLink&)>& visit) {
  absl::MutexLock lock(&mu_);
  const std::string sql =
      absl::StrCat("SELECT ", ChainColumns(), " FROM history WHERE seq > $1 ORDER BY seq LIMIT ", kScanPage);
  return ScanPagesLocked(sql, {}, [&](const PgResult& page, int r) {
    return visit(pg::DecodeEventRow(page, r), DecodeLink(page, r, 9));
  });
}

absl::StatusOr<std::optional<HistoryHead>> PostgresBackend::HistoryChainHead() {
  absl::MutexLock lock(&mu_);
  return HeadLocked();
}

absl::StatusOr<std::pair<int64_t, HistoryLink>> PostgresBackend::NewestLink() {
  absl::MutexLock lock(&mu_);
  return ReadNewestLink(*conn_);
}

absl::StatusOr<int64_t> PostgresBackend::LinkEventsFromBeforeTheChain() {
  absl::MutexLock lock(&mu_);
  if (chain_ == nullptr) return absl::FailedPreconditionError("no history chain signer");
  // A PostgreSQL store is made with the chain, so only a marker put by hand (or a store copied
  // from an upgraded SQLite one) gets here; the steps are SQLite's.
  const std::string marker_sql =
      absl::StrCat("SELECT value FROM meta WHERE key = '", kUnlinkedHistoryMarker, "'");
  BULWARK_ASSIGN_OR_RETURN(auto seen, conn_->Query(marker_sql));  // almost every open: none, no lock
  if (seen.rows() == 0) return 0;
  PgTransaction txn(*conn_);
  BULWARK_RETURN_IF_ERROR(txn.status());
  BULWARK_RETURN_IF_ERROR(LockWritersLocked());
  BULWARK_ASSIGN_OR_RETURN(auto marked, conn_->Query(marker_sql));  // again, under the writers' lock
  if (marked.rows() == 0) return 0;
  int64_t through = 0;  // SQLite reads the marker with CAST(value AS INTEGER): a bad one is 0
  if (!absl::SimpleAtoi(absl::string_view(marked.View(0, 0).data(), marked.View(0, 0).size()), &through)) {
    through = 0;
  }
  const std::vector<PgParam> params = {PgParam::Int(through)};
  BULWARK_ASSIGN_OR_RETURN(
      auto found,
      conn_->Query(absl::StrCat("SELECT ", pg::kEventColumns, " FROM history WHERE seq <= $1 ORDER BY seq"),
                   params));
  std::vector<std::vector<PgParam>> rows;
  std::string previous;
  for (int r = 0; r < found.rows(); ++r) {
    const HistoryEvent ev = pg::DecodeEventRow(found, r);
    HistoryLink link = chain_->Link(ev, previous);
    rows.push_back(
        {PgParam::Int(static_cast<int64_t>(link.key_id)), PgParam::Bytes(link.link), PgParam::Int(ev.seq)});
    previous = std::move(link.link);
  }
  if (!rows.empty()) {
    BULWARK_RETURN_IF_ERROR(
        conn_->ExecBatch("link_event", "UPDATE history SET link_key_id = $1, link = $2 WHERE seq = $3", rows)
            .status());
    BULWARK_RETURN_IF_ERROR(PutHeadLocked(chain_->Head(found.Int(found.rows() - 1, 0), previous)));
  }
  const std::vector<PgParam> key = {PgParam::Text(kUnlinkedHistoryMarker)};
  BULWARK_RETURN_IF_ERROR(conn_->Prepared("delete_meta", "DELETE FROM meta WHERE key = $1", key).status());
  BULWARK_RETURN_IF_ERROR(txn.Commit());
  return static_cast<int64_t>(rows.size());
}

}  // namespace bulwark
