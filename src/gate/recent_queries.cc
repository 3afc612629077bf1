// The recent-query history of the gates (see recent_queries.h).
#include "gate/recent_queries.h"

#include <algorithm>
#include <cstring>

#include <absl/strings/str_cat.h>
#include <sqlite3.h>

#include "storage/sqlite_util.h"

namespace bulwark {
namespace {

constexpr char kSchema[] = R"sql(
PRAGMA journal_mode=WAL;
PRAGMA synchronous=NORMAL;
CREATE TABLE IF NOT EXISTS recent_queries(
  seq       INTEGER PRIMARY KEY,
  namespace TEXT NOT NULL,
  at_us     INTEGER NOT NULL,
  embedding BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS recent_queries_by_namespace ON recent_queries(namespace, seq);
)sql";

}  // namespace

absl::StatusOr<std::unique_ptr<RecentQueries>> RecentQueries::Open(const std::filesystem::path& store_dir,
                                                                   int capacity) {
  if (capacity < 1 || capacity > 1'000'000) {
    return absl::InvalidArgumentError("query history capacity must be between 1 and 1000000");
  }
  const std::filesystem::path path = store_dir / kFileName;
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                      nullptr) != SQLITE_OK) {
    absl::Status status = absl::UnavailableError(
        absl::StrCat("cannot open ", path.string(), ": ", db ? sqlite3_errmsg(db) : "out of memory"));
    sqlite3_close(db);
    return status;
  }
  sqlite3_busy_timeout(db, 5000);
  if (absl::Status s = Exec(db, kSchema); !s.ok()) {
    sqlite3_close(db);
    return absl::DataLossError(absl::StrCat(path.string(), " is not a usable query history: ", s.message()));
  }
  return std::unique_ptr<RecentQueries>(new RecentQueries(db, capacity));
}

RecentQueries::~RecentQueries() { sqlite3_close(db_); }

absl::Status RecentQueries::Record(std::string_view name_space, int64_t at_us,
                                   std::span<const float> embedding) {
  std::lock_guard<std::mutex> lock(mu_);
  Transaction tx(db_);
  if (!tx.status().ok()) return tx.status();
  Statement insert(db_, "INSERT INTO recent_queries(namespace, at_us, embedding) VALUES (?, ?, ?)");
  if (auto s = insert.status(); !s.ok()) return s;
  insert.Bind(1, name_space);
  insert.Bind(2, at_us);
  insert.BindBlob(3, embedding.data(), embedding.size_bytes());
  if (auto s = insert.Run("record query"); !s.ok()) return s;
  // Drop what falls out of the window (the index makes this a short range scan).
  Statement trim(db_,
                 "DELETE FROM recent_queries WHERE namespace = ?1 AND seq <= "
                 "(SELECT seq FROM recent_queries WHERE namespace = ?1 ORDER BY seq DESC LIMIT 1 OFFSET ?2)");
  if (auto s = trim.status(); !s.ok()) return s;
  trim.Bind(1, name_space);
  trim.Bind(2, static_cast<int64_t>(capacity_));
  if (auto s = trim.Run("trim query history"); !s.ok()) return s;
  return tx.Commit();
}

absl::StatusOr<std::vector<std::vector<float>>> RecentQueries::Recent(std::string_view name_space,
                                                                      int limit) {
  std::lock_guard<std::mutex> lock(mu_);
  Statement st(db_, "SELECT embedding FROM recent_queries WHERE namespace = ? ORDER BY seq DESC LIMIT ?");
  if (auto s = st.status(); !s.ok()) return s;
  st.Bind(1, name_space);
  st.Bind(2, static_cast<int64_t>(limit));
  std::vector<std::vector<float>> out;
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) {
    const std::string bytes = st.Blob(0);
    if (bytes.size() % sizeof(float) != 0)
      return absl::DataLossError("query history: embedding size is not a multiple of 4");
    std::vector<float> v(bytes.size() / sizeof(float));
    if (!bytes.empty()) std::memcpy(v.data(), bytes.data(), bytes.size());
    out.push_back(std::move(v));
  }
  if (rc != SQLITE_DONE) return SqliteError(db_, "read query history");
  std::reverse(out.begin(), out.end());
  return out;
}

}  // namespace bulwark
