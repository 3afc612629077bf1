// StoreUnderTest (tests only): the factory of the storage contract tests. One store, either an
// SQLite database file in a temporary directory or a fresh database on the binary's shared
// PostgreSQL test cluster, and connections to it (each Open* call is a new connection, as another
// process would have). The contract tests run one test body against both kinds.
#pragma once

#include <absl/status/status.h>
#include <absl/status/statusor.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "storage/access_repository.h"
#include "storage/audit_repository.h"
#include "storage/gate_repository.h"
#include "storage/honeypot_repository.h"
#include "storage/storage_backend.h"
#include "testing/temp_dir.h"

namespace bulwark::testing {

enum class StoreKind { kSqlite, kPostgres };
std::string StoreKindName(StoreKind kind);

class StoreUnderTest {
 public:
  // A new, empty store location (no schema yet: the first OpenBackend(create=true) makes it).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<StoreUnderTest>> Create(StoreKind kind);

  StoreKind kind() const { return kind_; }
  // A new connection to the store's entries (SqliteBackend or PostgresBackend; both are also the
  // DefenseStateRepository).
  [[nodiscard]] absl::StatusOr<std::unique_ptr<StorageBackend>> OpenBackend(bool create = true);
  // New connections to the other repositories (the store must exist: OpenBackend first).
  [[nodiscard]] absl::StatusOr<std::unique_ptr<AccessRepository>> OpenAccess();
  [[nodiscard]] absl::StatusOr<std::unique_ptr<GateRepository>> OpenGate();
  [[nodiscard]] absl::StatusOr<std::unique_ptr<HoneypotRepository>> OpenHoneypot();
  // SQLite: the audit database beside the store's (created on first open), as the opener does.
  [[nodiscard]] absl::StatusOr<std::unique_ptr<AuditRepository>> OpenAudit();
  // Runs SQL on the store behind the repositories' back (a tamperer with database access).
  [[nodiscard]] absl::Status ExecSql(const std::string& sql);
  // A SQL literal for these raw bytes in this store's dialect.
  std::string BytesLiteral(std::string_view bytes) const;

  const std::string& conninfo() const { return conninfo_; }                     // PostgreSQL only
  std::filesystem::path db_path() const { return dir_.path() / "bulwark.db"; }  // SQLite only

 private:
  explicit StoreUnderTest(StoreKind kind) : kind_(kind) {}
  StoreKind kind_;
  TempDir dir_;
  std::string conninfo_;
};

}  // namespace bulwark::testing
