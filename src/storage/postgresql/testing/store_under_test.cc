// StoreUnderTest (see store_under_test.h).
#include "storage/postgresql/testing/store_under_test.h"

#include <absl/strings/escaping.h>
#include <absl/strings/str_cat.h>
#include <sqlite3.h>

#include "storage/postgresql/pg_connection.h"
#include "storage/postgresql/postgres_access_repository.h"
#include "storage/postgresql/postgres_audit_repository.h"
#include "storage/postgresql/postgres_backend.h"
#include "storage/postgresql/postgres_gate_repository.h"
#include "storage/postgresql/postgres_honeypot_repository.h"
#include "storage/postgresql/testing/pg_test_environment.h"
#include "storage/sqlite/sqlite_access_repository.h"
#include "storage/sqlite/sqlite_audit_repository.h"
#include "storage/sqlite/sqlite_backend.h"
#include "storage/sqlite/sqlite_gate_repository.h"
#include "storage/sqlite/sqlite_honeypot_repository.h"
#include "storage/sqlite/sqlite_util.h"

namespace bulwark::testing {

std::string StoreKindName(StoreKind kind) { return kind == StoreKind::kSqlite ? "Sqlite" : "Postgres"; }

absl::StatusOr<std::unique_ptr<StoreUnderTest>> StoreUnderTest::Create(StoreKind kind) {
  std::unique_ptr<StoreUnderTest> store(new StoreUnderTest(kind));
  if (kind == StoreKind::kPostgres) {
    auto db = NewPgTestDatabase();
    if (!db.ok()) return db.status();
    store->conninfo_ = *db;
  }
  return store;
}

absl::StatusOr<std::unique_ptr<StorageBackend>> StoreUnderTest::OpenBackend(bool create) {
  if (kind_ == StoreKind::kSqlite) {
    auto db = SqliteBackend::Open(db_path(), create);
    if (!db.ok()) return db.status();
    return std::unique_ptr<StorageBackend>(std::move(*db));
  }
  auto db = PostgresBackend::Open(conninfo_, create);
  if (!db.ok()) return db.status();
  return std::unique_ptr<StorageBackend>(std::move(*db));
}

absl::StatusOr<std::unique_ptr<AccessRepository>> StoreUnderTest::OpenAccess() {
  if (kind_ == StoreKind::kSqlite) return OpenSqliteAccessRepository(db_path());
  return OpenPostgresAccessRepository(conninfo_);
}

absl::StatusOr<std::unique_ptr<GateRepository>> StoreUnderTest::OpenGate() {
  if (kind_ == StoreKind::kSqlite) return OpenSqliteGateRepository(db_path());
  return OpenPostgresGateRepository(conninfo_);
}

absl::StatusOr<std::unique_ptr<HoneypotRepository>> StoreUnderTest::OpenHoneypot() {
  if (kind_ == StoreKind::kSqlite) {
    auto repo = SqliteHoneypotRepository::Open(db_path());
    if (!repo.ok()) return repo.status();
    return std::unique_ptr<HoneypotRepository>(std::move(*repo));
  }
  return OpenPostgresHoneypotRepository(conninfo_);
}

absl::StatusOr<std::unique_ptr<AuditRepository>> StoreUnderTest::OpenAudit() {
  if (kind_ == StoreKind::kSqlite)
    return OpenSqliteAuditRepository(dir_.path() / "audit.db", /*create=*/true);
  return OpenPostgresAuditRepository(conninfo_);
}

absl::Status StoreUnderTest::ExecSql(const std::string& sql) {
  if (kind_ == StoreKind::kPostgres) {
    auto conn = pg::PgConnection::Open(conninfo_);
    if (!conn.ok()) return conn.status();
    return (*conn)->Exec(sql);
  }
  sqlite3* db = nullptr;
  if (sqlite3_open(db_path().c_str(), &db) != SQLITE_OK) {
    sqlite3_close(db);
    return absl::UnavailableError("cannot open the SQLite store");
  }
  sqlite3_busy_timeout(db, 5000);
  absl::Status status = Exec(db, sql.c_str());
  sqlite3_close(db);
  return status;
}

std::string StoreUnderTest::BytesLiteral(std::string_view bytes) const {
  const std::string hex = absl::BytesToHexString(absl::string_view(bytes.data(), bytes.size()));
  return kind_ == StoreKind::kSqlite ? absl::StrCat("x'", hex, "'") : absl::StrCat("'\\x", hex, "'::bytea");
}

}  // namespace bulwark::testing
