// The one opener of a store's storage: given a store location, it returns the repositories of
// every concern (issue #12 point 2), so that no module above src/storage opens a database itself
// or knows which engine holds its rows.
//
//   location                     engine
//   a directory path             SQLite: <dir>/bulwark.db and <dir>/audit.db (store_layout.h)
//   postgresql://... (or postgres://...)  PostgreSQL: every table in that database
//                                          (storage/postgresql/, doc/scale-out.md)
//
// Opening brings every table to the store's schema version (sqlite_schema.h) before any
// repository is returned, so callers never see an older layout.
#pragma once

#include <absl/status/statusor.h>

#include <memory>
#include <string>
#include <string_view>

#include "storage/access_repository.h"
#include "storage/audit_repository.h"
#include "storage/defense_state_repository.h"
#include "storage/gate_repository.h"
#include "storage/honeypot_repository.h"
#include "storage/storage_backend.h"

namespace bulwark {

// Every repository of one store.
struct StorageRepositories {
  std::unique_ptr<StorageBackend> entries;  // entries + history + meta
  // The write gate's state (calibration, query history). Owned by the object behind `entries`
  // (one connection in SQLite): valid while that object lives, wherever `entries` is moved to.
  DefenseStateRepository* defense_state = nullptr;
  std::unique_ptr<AuditRepository> audit;
  std::unique_ptr<AccessRepository> access;  // principals + API keys
  std::unique_ptr<GateRepository> gate;      // query-gate models
  std::unique_ptr<HoneypotRepository> honeypot;
};

// True if `location` names a PostgreSQL database rather than a directory.
bool IsPostgresLocation(std::string_view location);

// `location` as it may be printed or logged: a PostgreSQL URL's password (user:PASSWORD@ and a
// password= parameter) replaced by "***"; a directory unchanged.
std::string DisplayLocation(std::string_view location);

// The repositories of the store at `location`. With `create`, a store that does not exist yet is
// created (the caller checks that it should be); without, NotFound if there is none. NotFound /
// Unavailable (PostgreSQL: the server cannot be reached or refuses the login) / DataLoss /
// FailedPrecondition (a schema version newer than this build) from the engine.
[[nodiscard]] absl::StatusOr<StorageRepositories> OpenStorage(std::string_view location, bool create);

// One repository of an existing store, for the modules that need only theirs (they open after the
// store, so the schema is already current; opening still upgrades if it is not). Errors as
// OpenStorage without `create`.
// OpenEntryRepositories fills `entries` and `defense_state` only (creating the store with `create`).
[[nodiscard]] absl::StatusOr<StorageRepositories> OpenEntryRepositories(std::string_view location,
                                                                        bool create);
[[nodiscard]] absl::StatusOr<std::unique_ptr<AuditRepository>> OpenAuditRepository(std::string_view location);
[[nodiscard]] absl::StatusOr<std::unique_ptr<AccessRepository>> OpenAccessRepository(
    std::string_view location);
[[nodiscard]] absl::StatusOr<std::unique_ptr<GateRepository>> OpenGateRepository(std::string_view location);
[[nodiscard]] absl::StatusOr<std::unique_ptr<HoneypotRepository>> OpenHoneypotRepository(
    std::string_view location);

}  // namespace bulwark
