// StoreLayout: the one place that names the files of a store directory. Every module that needs a
// store file asks the layout instead of spelling the name itself, so a file can be renamed (or a
// backend that keeps no files added) in one place.
//
//   <dir>/bulwark.db      entries, history, principals and keys, query-gate models, write-gate
//                         state (SQLite; doc/store_format.md)
//   <dir>/audit.db        the signed audit chain (SQLite; its own file so its group commits do not
//                         evict the entries' page cache)
//   <dir>/keyring.json    signing keys (mode 0600), unless configured elsewhere
//   <dir>/gate.json       the write-gate configuration (optional; doc/write_gate.md)
//   <dir>/index.snap      the index snapshot: an untrusted, MACed cache of the in-memory vector
//                         indexes that an open starts from (store/index_snapshot.h); deleting it
//                         only makes the next open scan the rows
//
// A PostgreSQL store (a postgresql:// or postgres:// location, storage_opener.h) keeps no files:
// every table, the audit log's included, is in its database, so database() and audit_database()
// are the location itself, there is no default keyring (keyring() is empty unless given: the
// caller must name the file) and no gate.json (write_gate_config() is empty: the configuration
// comes from StoreOptions). doc/scale-out.md "Running on PostgreSQL".
#pragma once

#include <filesystem>

namespace bulwark {

class StoreLayout {
 public:
  // `keyring_override`: the keyring file when it does not live in the store directory (empty:
  // <dir>/keyring.json).
  explicit StoreLayout(std::filesystem::path dir, std::filesystem::path keyring_override = {});
  // The layout of the store whose main database file is `database` (its directory).
  static StoreLayout ForDatabase(const std::filesystem::path& database);

  // The directory, or a PostgreSQL store's location.
  const std::filesystem::path& dir() const { return dir_; }
  // True for a PostgreSQL location (see the file comment).
  bool is_postgres() const { return postgres_; }
  std::filesystem::path database() const { return postgres_ ? dir_ : dir_ / kDatabaseFile; }
  std::filesystem::path audit_database() const { return postgres_ ? dir_ : dir_ / kAuditDatabaseFile; }
  std::filesystem::path keyring() const;
  std::filesystem::path write_gate_config() const {
    return postgres_ ? std::filesystem::path() : dir_ / kWriteGateConfigFile;
  }
  // The index snapshot; empty for a PostgreSQL store (its replicas load from the change feed).
  std::filesystem::path index_snapshot() const {
    return postgres_ ? std::filesystem::path() : dir_ / kIndexSnapshotFile;
  }
  // True if the directory holds a store (its main database file exists). Always true for a
  // PostgreSQL location: opening it tells (NotFound when the database holds no store).
  bool StoreExists() const;

  static constexpr char kDatabaseFile[] = "bulwark.db";
  static constexpr char kAuditDatabaseFile[] = "audit.db";
  static constexpr char kKeyringFile[] = "keyring.json";
  static constexpr char kWriteGateConfigFile[] = "gate.json";
  static constexpr char kIndexSnapshotFile[] = "index.snap";

 private:
  std::filesystem::path dir_;
  std::filesystem::path keyring_override_;
  bool postgres_ = false;
};

}  // namespace bulwark
