#include "storage/sqlite/sqlite_honeypot_repository.h"

#include <absl/strings/str_cat.h>
#include <absl/synchronization/mutex.h>
#include <sqlite3.h>

#include "storage/sqlite/sqlite_schema.h"
#include "storage/sqlite/sqlite_util.h"

namespace bulwark {
namespace {

absl::Status CheckRunSizes(const HoneypotRun& run) {
  using R = HoneypotRepository;
  if (run.metrics.size() > R::kMaxRunTextBytes || run.covered_ids.size() > R::kMaxRunTextBytes ||
      run.pot_ids.size() > R::kMaxRunTextBytes || run.name_space.size() > R::kMaxRunTextBytes) {
    return absl::InvalidArgumentError("honeypot run is over 64 MiB");
  }
  return absl::OkStatus();
}

absl::Status CheckBlockSizes(const HoneypotBlock& block) {
  using R = HoneypotRepository;
  if (block.key.empty() || block.key.size() > R::kMaxKeyBytes || block.state.size() > R::kMaxStateBytes ||
      block.name_space.size() > R::kMaxKeyBytes) {
    return absl::InvalidArgumentError("honeypot block key or state is empty or too large");
  }
  return absl::OkStatus();
}

absl::Status CheckSetting(const HoneypotSetting& setting) {
  if (setting.k_obs < 1 || setting.k_obs > 64 || setting.mode.size() > 16 ||
      setting.name_space.size() > HoneypotRepository::kMaxKeyBytes) {
    return absl::InvalidArgumentError(
        "honeypot setting: k_obs must be 1 to 64 and the mode at most 16 bytes");
  }
  return absl::OkStatus();
}

absl::Status CheckIntentTable(const HoneypotIntentTable& t) {
  using R = HoneypotRepository;
  if (t.name_space.empty() || t.name_space.size() > R::kMaxKeyBytes ||
      t.table.size() > R::kMaxIntentTableBytes || t.tag.size() > R::kMaxTagBytes || t.sign_key_id < 0 ||
      t.sign_key_id > UINT32_MAX) {
    return absl::InvalidArgumentError("honeypot intent table: empty namespace, or a field over its limit");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<SqliteHoneypotRepository>> SqliteHoneypotRepository::Open(
    const std::filesystem::path& path) {
  auto db = OpenStoreDatabase(path);
  if (!db.ok()) return db.status();
  return std::unique_ptr<SqliteHoneypotRepository>(new SqliteHoneypotRepository(*db));
}

SqliteHoneypotRepository::~SqliteHoneypotRepository() { sqlite3_close(db_); }

absl::StatusOr<int64_t> SqliteHoneypotRepository::AddRun(const HoneypotRun& run) {
  if (auto s = CheckRunSizes(run); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  Statement st(db_,
               "INSERT INTO honeypot_runs(namespace, at_us, batch, metrics, covered_ids, pot_ids) "
               "VALUES(?,?,?,?,?,?)");
  if (auto s = st.status(); !s.ok()) return s;
  st.Bind(1, run.name_space);
  st.Bind(2, run.at_us);
  st.Bind(3, static_cast<int64_t>(run.batch));
  st.Bind(4, run.metrics);
  st.Bind(5, run.covered_ids);
  st.Bind(6, run.pot_ids);
  if (auto s = st.Run("save honeypot run"); !s.ok()) return s;
  return static_cast<int64_t>(sqlite3_last_insert_rowid(db_));
}

absl::Status SqliteHoneypotRepository::ScanRuns(
    std::string_view name_space, const std::function<absl::Status(const HoneypotRun&)>& visit) {
  absl::MutexLock lock(&mu_);
  Statement st(db_,
               "SELECT run_id, namespace, at_us, batch, metrics, covered_ids, pot_ids, removed_at_us "
               "FROM honeypot_runs WHERE namespace = ? ORDER BY run_id");
  if (auto s = st.status(); !s.ok()) return s;
  st.Bind(1, name_space);
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) {
    HoneypotRun run{st.Int(0),  st.Text(1), st.Int(2),  static_cast<int>(st.Int(3)),
                    st.Text(4), st.Text(5), st.Text(6), st.Int(7)};
    if (!CheckRunSizes(run).ok() || run.batch < 1 || run.batch > (1 << 20)) {
      return absl::DataLossError(absl::StrCat("honeypot run ", run.run_id, " is malformed"));
    }
    if (auto s = visit(run); !s.ok()) return s;
  }
  return rc == SQLITE_DONE ? absl::OkStatus() : SqliteError(db_, "read honeypot runs");
}

absl::StatusOr<int64_t> SqliteHoneypotRepository::RemoveRuns(std::string_view name_space, int64_t at_us) {
  absl::MutexLock lock(&mu_);
  Statement st(db_, "UPDATE honeypot_runs SET removed_at_us = ? WHERE namespace = ? AND removed_at_us = 0");
  if (auto s = st.status(); !s.ok()) return s;
  st.Bind(1, at_us);
  st.Bind(2, name_space);
  if (auto s = st.Run("retire honeypot runs"); !s.ok()) return s;
  return static_cast<int64_t>(sqlite3_changes(db_));
}

absl::Status SqliteHoneypotRepository::PutSetting(const HoneypotSetting& setting) {
  if (auto s = CheckSetting(setting); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  Statement st(db_, "INSERT OR REPLACE INTO honeypot_settings(namespace, mode, k_obs) VALUES(?,?,?)");
  if (auto s = st.status(); !s.ok()) return s;
  st.Bind(1, setting.name_space);
  st.Bind(2, setting.mode);
  st.Bind(3, static_cast<int64_t>(setting.k_obs));
  return st.Run("save honeypot setting");
}

absl::Status SqliteHoneypotRepository::ScanSettings(
    const std::function<absl::Status(const HoneypotSetting&)>& visit) {
  absl::MutexLock lock(&mu_);
  Statement st(db_, "SELECT namespace, mode, k_obs FROM honeypot_settings ORDER BY namespace");
  if (auto s = st.status(); !s.ok()) return s;
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) {
    const int64_t k_obs = st.Int(2);
    if (k_obs < 1 || k_obs > 64) return absl::DataLossError("a stored honeypot setting is out of range");
    HoneypotSetting setting{st.Text(0), st.Text(1), static_cast<int>(k_obs)};
    if (!CheckSetting(setting).ok()) return absl::DataLossError("a stored honeypot setting is out of range");
    if (auto s = visit(setting); !s.ok()) return s;
  }
  return rc == SQLITE_DONE ? absl::OkStatus() : SqliteError(db_, "read honeypot settings");
}

absl::Status SqliteHoneypotRepository::PutBlock(const HoneypotBlock& block) {
  if (auto s = CheckBlockSizes(block); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  Statement st(db_, "INSERT OR REPLACE INTO honeypot_blocks(key, namespace, state) VALUES(?,?,?)");
  if (auto s = st.status(); !s.ok()) return s;
  st.BindBlob(1, block.key.data(), block.key.size());
  st.Bind(2, block.name_space);
  st.BindBlob(3, block.state.data(), block.state.size());
  return st.Run("save honeypot block");
}

absl::Status SqliteHoneypotRepository::DeleteBlock(std::string_view key) {
  absl::MutexLock lock(&mu_);
  Statement st(db_, "DELETE FROM honeypot_blocks WHERE key = ?");
  if (auto s = st.status(); !s.ok()) return s;
  st.BindBlob(1, key.data(), key.size());
  if (auto s = st.Run("delete honeypot block"); !s.ok()) return s;
  if (sqlite3_changes(db_) == 0) return absl::NotFoundError("no such block");
  return absl::OkStatus();
}

absl::Status SqliteHoneypotRepository::ScanBlocks(
    const std::function<absl::Status(const HoneypotBlock&)>& visit) {
  absl::MutexLock lock(&mu_);
  Statement st(db_, "SELECT namespace, key, state FROM honeypot_blocks ORDER BY key");
  if (auto s = st.status(); !s.ok()) return s;
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) {
    HoneypotBlock block{st.Text(0), st.Blob(1), st.Blob(2)};
    if (!CheckBlockSizes(block).ok()) return absl::DataLossError("a stored honeypot block is malformed");
    if (auto s = visit(block); !s.ok()) return s;
  }
  return rc == SQLITE_DONE ? absl::OkStatus() : SqliteError(db_, "read honeypot blocks");
}

absl::Status SqliteHoneypotRepository::PutIntentTable(const HoneypotIntentTable& table) {
  if (auto s = CheckIntentTable(table); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  Statement st(db_,
               "INSERT OR REPLACE INTO honeypot_intent(namespace, run_id, intent, sign_key_id, tag) "
               "VALUES(?,?,?,?,?)");
  if (auto s = st.status(); !s.ok()) return s;
  st.Bind(1, table.name_space);
  st.Bind(2, table.run_id);
  st.Bind(3, table.table);
  st.Bind(4, table.sign_key_id);
  st.BindBlob(5, table.tag.data(), table.tag.size());
  return st.Run("save honeypot intent table");
}

absl::StatusOr<int64_t> SqliteHoneypotRepository::DeleteIntentTable(std::string_view name_space) {
  absl::MutexLock lock(&mu_);
  Statement st(db_, "DELETE FROM honeypot_intent WHERE namespace = ?");
  if (auto s = st.status(); !s.ok()) return s;
  st.Bind(1, name_space);
  if (auto s = st.Run("delete honeypot intent table"); !s.ok()) return s;
  return static_cast<int64_t>(sqlite3_changes(db_));
}

absl::Status SqliteHoneypotRepository::ScanIntentTables(
    const std::function<absl::Status(const HoneypotIntentTable&)>& visit) {
  absl::MutexLock lock(&mu_);
  Statement st(db_,
               "SELECT namespace, run_id, intent, sign_key_id, tag FROM honeypot_intent ORDER BY namespace");
  if (auto s = st.status(); !s.ok()) return s;
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) {
    HoneypotIntentTable table{st.Text(0), st.Int(1), st.Text(2), st.Int(3), st.Blob(4)};
    if (!CheckIntentTable(table).ok())
      return absl::DataLossError("a stored honeypot intent table is malformed");
    if (auto s = visit(table); !s.ok()) return s;
  }
  return rc == SQLITE_DONE ? absl::OkStatus() : SqliteError(db_, "read honeypot intent tables");
}

}  // namespace bulwark
