// SQLite GateRepository (see sqlite_gate_repository.h): the SQL of the query gates' store.
#include "storage/sqlite/sqlite_gate_repository.h"

#include <absl/strings/str_cat.h>
#include <absl/synchronization/mutex.h>
#include <sqlite3.h>

#include <nlohmann/json.hpp>
#include <utility>

#include "core/hex.h"
#include "storage/signed_meta_json.h"
#include "storage/sqlite/sqlite_schema.h"
#include "storage/sqlite/sqlite_util.h"

namespace bulwark {
namespace {

constexpr char kGateColumns[] = "namespace, mode, embedder, fitted_at_us, source, model, sign_key_id, tag";

GateRow DecodeGateRow(const Statement& st) {
  return GateRow{
      st.Text(0), st.Text(1), st.Text(2), st.Int(3), st.Text(4), st.Blob(5), static_cast<uint32_t>(st.Int(6)),
      st.Blob(7)};
}

class SqliteGateRepository : public GateRepository {
 public:
  SqliteGateRepository(sqlite3* db, bool upgraded, bool manifest_pending)
      : db_(db), upgraded_(upgraded), manifest_pending_(manifest_pending) {}
  ~SqliteGateRepository() override { sqlite3_close(db_); }

  absl::Status Save(const GateRow& row) override {
    absl::MutexLock lock(&mu_);
    Transaction txn(db_);
    if (!txn.status().ok()) return txn.status();
    Statement st(db_, absl::StrCat("INSERT OR REPLACE INTO query_gates(", kGateColumns,
                                   ") VALUES (?, ?, ?, ?, ?, ?, ?, ?)"));
    if (auto s = st.status(); !s.ok()) return s;
    st.Bind(1, row.name_space);
    st.Bind(2, row.mode);
    st.Bind(3, row.embedder);
    st.Bind(4, row.fitted_at_us);
    st.Bind(5, row.source);
    st.BindBlob(6, row.model.data(), row.model.size());
    st.Bind(7, int64_t{row.sign_key_id});
    st.BindBlob(8, row.tag.data(), row.tag.size());
    if (auto s = st.Run("save query gate"); !s.ok()) return s;
    if (auto s = ReplaceManifestLocked(); !s.ok()) return s;
    return txn.Commit();
  }

  absl::StatusOr<std::optional<GateRow>> Find(std::string_view name_space) override {
    absl::MutexLock lock(&mu_);
    Statement st(db_, absl::StrCat("SELECT ", kGateColumns, " FROM query_gates WHERE namespace = ?"));
    if (auto s = st.status(); !s.ok()) return s;
    st.Bind(1, name_space);
    const int rc = st.Step();
    if (rc == SQLITE_DONE) return std::optional<GateRow>();
    if (rc != SQLITE_ROW) return SqliteError(db_, "load query gate");
    return std::optional<GateRow>(DecodeGateRow(st));
  }

  absl::StatusOr<std::vector<GateRow>> List() override {
    absl::MutexLock lock(&mu_);
    Statement st(db_, absl::StrCat("SELECT ", kGateColumns, " FROM query_gates ORDER BY namespace"));
    if (auto s = st.status(); !s.ok()) return s;
    std::vector<GateRow> out;
    int rc;
    while ((rc = st.Step()) == SQLITE_ROW) out.push_back(DecodeGateRow(st));
    if (rc != SQLITE_DONE) return SqliteError(db_, "list query gates");
    return out;
  }

  absl::Status Remove(std::string_view name_space) override {
    absl::MutexLock lock(&mu_);
    Transaction txn(db_);
    if (!txn.status().ok()) return txn.status();
    Statement st(db_, "DELETE FROM query_gates WHERE namespace = ?");
    if (auto s = st.status(); !s.ok()) return s;
    st.Bind(1, name_space);
    if (auto s = st.Run("remove query gate"); !s.ok()) return s;
    if (sqlite3_changes(db_) == 0) {
      return absl::NotFoundError(absl::StrCat("no query gate for namespace ", std::string(name_space)));
    }
    if (auto s = ReplaceManifestLocked(); !s.ok()) return s;
    return txn.Commit();
  }

  void SetManifestSigner(ManifestSigner signer) override {
    absl::MutexLock lock(&mu_);
    manifest_signer_ = std::move(signer);
  }

  absl::StatusOr<std::optional<GateManifest>> Manifest() override {
    absl::MutexLock lock(&mu_);
    Statement st(db_, "SELECT value FROM meta WHERE key = ?");
    if (auto s = st.status(); !s.ok()) return s;
    st.Bind(1, kGateManifestKey);
    const int rc = st.Step();
    if (rc == SQLITE_DONE) return std::optional<GateManifest>();
    if (rc != SQLITE_ROW) return SqliteError(db_, "read the query gate manifest");
    return DecodeGateManifest(st.Text(0));
  }

  bool manifest_pending() const override { return manifest_pending_; }

  absl::Status WriteManifest() override {
    absl::MutexLock lock(&mu_);
    if (!manifest_signer_) return absl::FailedPreconditionError("no manifest signer");
    Transaction txn(db_);
    if (!txn.status().ok()) return txn.status();
    if (auto s = ReplaceManifestLocked(); !s.ok()) return s;
    if (auto s = DeleteMeta(db_, kGateManifestMarker); !s.ok()) return s;
    if (auto s = txn.Commit(); !s.ok()) return s;
    manifest_pending_ = false;
    return absl::OkStatus();
  }

  bool upgraded_from_unsigned() const override {
    absl::MutexLock lock(&mu_);
    return upgraded_;
  }

  absl::Status FinishSigningUpgrade() override {
    absl::MutexLock lock(&mu_);
    if (auto s = DeleteMeta(db_, kUnsignedGateMarker); !s.ok()) return s;
    upgraded_ = false;
    return absl::OkStatus();
  }

 private:
  mutable absl::Mutex mu_;  // serializes all use of db_
  sqlite3* db_ ABSL_GUARDED_BY(mu_);
  bool upgraded_ ABSL_GUARDED_BY(mu_);
  bool manifest_pending_;
  ManifestSigner manifest_signer_ ABSL_GUARDED_BY(mu_);

  // With a signer: the manifest of the rows as they are in the caller's transaction. Requires mu_.
  absl::Status ReplaceManifestLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (!manifest_signer_) return absl::OkStatus();
    GateManifest manifest;
    {
      Statement st(db_, "SELECT namespace FROM query_gates ORDER BY namespace");
      if (auto s = st.status(); !s.ok()) return s;
      int rc;
      while ((rc = st.Step()) == SQLITE_ROW) manifest.namespaces.push_back(st.Text(0));
      if (rc != SQLITE_DONE) return SqliteError(db_, "list the namespaces with a gate");
    }
    manifest_signer_(&manifest);
    const std::string json = EncodeGateManifest(manifest);
    Statement put(
        db_,
        "INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value");
    if (auto s = put.status(); !s.ok()) return s;
    put.Bind(1, kGateManifestKey);
    put.Bind(2, json);
    return put.Run("write the query gate manifest");
  }
};

}  // namespace

absl::StatusOr<std::unique_ptr<GateRepository>> OpenSqliteGateRepository(
    const std::filesystem::path& db_path) {
  auto db = OpenStoreDatabase(db_path);
  if (!db.ok()) return db.status();
  absl::StatusOr<bool> upgraded = HasMeta(*db, kUnsignedGateMarker);
  absl::StatusOr<bool> manifest_pending = HasMeta(*db, kGateManifestMarker);
  if (upgraded.ok() && !manifest_pending.ok()) upgraded = manifest_pending.status();
  if (!upgraded.ok()) {
    sqlite3_close(*db);
    return upgraded.status();
  }
  return std::unique_ptr<GateRepository>(new SqliteGateRepository(*db, *upgraded, *manifest_pending));
}

}  // namespace bulwark
