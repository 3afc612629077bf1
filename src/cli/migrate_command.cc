// `bulwark migrate` (see migrate_command.h).
#include "cli/migrate_command.h"

#include <absl/strings/str_cat.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "audit/audit_chain.h"
#include "audit/audit_log.h"
#include "auth/principal_registry.h"
#include "bulwark/env.h"
#include "core/status_macros.h"
#include "gate/gate_store.h"
#include "storage/storage_opener.h"
#include "storage/store_copy.h"
#include "storage/store_layout.h"
#include "store/memory_store.h"

namespace bulwark::cli {

struct MigrateCommand::Flags {
  CLI::App* command = nullptr;
  std::string from;
  std::string to;
};

namespace {

// What one full verification of a store found: its counts, and one line per row that failed.
struct StoreCheck {
  int64_t entries = 0;
  int64_t events = 0;
  size_t principals = 0;
  size_t keys = 0;
  int64_t audit_records = 0;
  std::vector<std::string> problems;
  bool same_counts(const StoreCheck& o) const {
    return entries == o.entries && events == o.events && principals == o.principals && keys == o.keys &&
           audit_records == o.audit_records;
  }
};

// Verifies every signed thing of the store at `location` with the keyring at `keyring`: entries,
// the history chain, the engine's integrity check, principals and keys, gate rows and manifest,
// the audit chain. Errors only when the store cannot be opened or read.
absl::StatusOr<StoreCheck> CheckStore(const std::string& location, const std::filesystem::path& keyring) {
  StoreCheck check;
  StoreOptions options;
  options.keyring_path = keyring;
  BULWARK_ASSIGN_OR_RETURN(std::unique_ptr<MemoryStore> store, MemoryStore::Open(location, options));
  BULWARK_ASSIGN_OR_RETURN(const VerifyReport report, store->Verify());
  check.entries = report.rows_checked;
  check.events = report.events_checked;
  for (const BadRow& b : report.bad_rows) {
    check.problems.push_back(absl::StrCat("entry row ", b.row_id, " (id ", b.id.empty() ? "(none)" : b.id,
                                          ", namespace ", b.name_space, "): ", b.reason));
  }
  for (const BadEvent& b : report.bad_events) {
    check.problems.push_back(absl::StrCat("history event ", b.seq, " (entry ", b.entry_id, "): ", b.reason));
  }
  if (!report.integrity_problem.empty()) check.problems.push_back("database: " + report.integrity_problem);
  const std::filesystem::path db = StoreLayout(location).database();
  BULWARK_ASSIGN_OR_RETURN(std::unique_ptr<PrincipalRegistry> registry,
                           PrincipalRegistry::Open(db, Env::Default(), keyring));
  BULWARK_ASSIGN_OR_RETURN(const AccessVerifyReport access, registry->Verify());
  check.principals = access.principals;
  check.keys = access.keys;
  check.problems.insert(check.problems.end(), access.problems.begin(), access.problems.end());
  BULWARK_ASSIGN_OR_RETURN(std::unique_ptr<GateStore> gates, GateStore::Open(db, keyring));
  BULWARK_ASSIGN_OR_RETURN(const std::vector<std::string> gate_problems, gates->Verify());
  check.problems.insert(check.problems.end(), gate_problems.begin(), gate_problems.end());
  BULWARK_ASSIGN_OR_RETURN(std::unique_ptr<AuditLog> audit,
                           AuditLog::OpenForStore(db, 50, AuditLog::kDefaultQueueCapacity, keyring));
  BULWARK_ASSIGN_OR_RETURN(const AuditVerification chain, audit->Verify());
  check.audit_records = chain.records;
  for (const AuditVerification::Bad& b : chain.bad) {
    check.problems.push_back(absl::StrCat("audit record ", b.seq, ": ", b.reason));
  }
  return check;
}

// OK if `to` holds no store yet; FailedPrecondition if it does.
absl::Status RequireNoStore(const std::string& to) {
  if (!IsPostgresLocation(to)) {
    if (!StoreLayout(to).StoreExists()) return absl::OkStatus();
  } else {
    absl::StatusOr<StorageRepositories> existing = OpenEntryRepositories(to, /*create=*/false);
    if (!existing.ok()) {
      return existing.status().code() == absl::StatusCode::kNotFound ? absl::OkStatus() : existing.status();
    }
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "the target ", DisplayLocation(to), " already holds a store; migrate only into an empty one"));
}

// Creates the empty target store (its tables only). A directory target without --keyring gets a
// copy of the keyring.
absl::Status CreateTarget(const std::string& to, const std::filesystem::path& keyring, bool keyring_given) {
  std::error_code ec;
  if (!IsPostgresLocation(to)) {
    std::filesystem::create_directories(to, ec);
    if (ec) return absl::UnavailableError(absl::StrCat("cannot create ", to, ": ", ec.message()));
    if (!keyring_given) {
      const std::filesystem::path copy = StoreLayout(to).keyring();
      std::filesystem::copy_file(keyring, copy, ec);
      if (ec) return absl::UnavailableError(absl::StrCat("cannot copy the keyring to ", copy.string()));
      std::filesystem::permissions(
          copy, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write, ec);
    }
  }
  return OpenStorage(to, /*create=*/true).status();
}

int Refuse(const CommandEnv& env, const std::string& what, const std::vector<std::string>& problems) {
  for (const std::string& p : problems) env.err << "BAD " << p << "\n";
  env.err << "error: " << what << "\n";
  return 1;
}

int Migrate(const CommandEnv& env, const std::string& from, const std::string& to) {
  const bool keyring_given = !env.keyring.empty();
  const std::filesystem::path keyring =
      keyring_given ? std::filesystem::path(env.keyring) : StoreLayout(from).keyring();
  if (keyring.empty()) {
    return FailCommand(env,
                       absl::InvalidArgumentError("a PostgreSQL source needs its keyring: --keyring FILE"));
  }
  if (from == to) return FailCommand(env, absl::InvalidArgumentError("--from and --to name the same store"));
  if (absl::Status s = RequireNoStore(to); !s.ok()) return FailCommand(env, s);
  absl::StatusOr<StoreCheck> source = CheckStore(from, keyring);
  if (!source.ok()) return FailCommand(env, source.status());
  if (!source->problems.empty()) {
    return Refuse(env, "the source does not verify; nothing was migrated", source->problems);
  }
  if (absl::Status s = CreateTarget(to, keyring, keyring_given); !s.ok()) return FailCommand(env, s);
  absl::StatusOr<std::vector<CopiedTable>> copied = CopyStoreRows(from, to);
  if (!copied.ok()) return FailCommand(env, copied.status());
  // The copy made beside a directory target, else the same file.
  const bool copied_keyring = !keyring_given && !IsPostgresLocation(to);
  const std::filesystem::path target_keyring = copied_keyring ? StoreLayout(to).keyring() : keyring;
  absl::StatusOr<StoreCheck> target = CheckStore(to, target_keyring);
  if (!target.ok()) return FailCommand(env, target.status());
  if (!target->problems.empty()) return Refuse(env, "the copy does not verify", target->problems);
  if (!target->same_counts(*source)) {
    return FailCommand(env, absl::DataLossError("the copy's counts differ from the source's"));
  }
  nlohmann::json tables = nlohmann::json::object();
  for (const CopiedTable& t : *copied) tables[t.table] = t.rows;
  if (env.json) {
    env.out << nlohmann::json{{"from", DisplayLocation(from)},
                              {"to", DisplayLocation(to)},
                              {"tables", tables},
                              {"verified",
                               {{"entries", target->entries},
                                {"history_events", target->events},
                                {"principals", target->principals},
                                {"keys", target->keys},
                                {"audit_records", target->audit_records}}}}
                   .dump()
            << "\n";
    return 0;
  }
  env.out << "migrated " << DisplayLocation(from) << " -> " << DisplayLocation(to) << "\n";
  for (const CopiedTable& t : *copied) env.out << "  " << t.table << ": " << t.rows << " rows\n";
  env.out << "verified: " << target->entries << " entries, " << target->events << " history events, "
          << target->principals << " principals, " << target->keys << " API keys, " << target->audit_records
          << " audit records\n";
  return 0;
}

}  // namespace

MigrateCommand::MigrateCommand() : flags_(std::make_unique<Flags>()) {}
MigrateCommand::~MigrateCommand() = default;

void MigrateCommand::Register(CLI::App& app) {
  flags_->command = app.add_subcommand(
      "migrate", "copy a store between SQLite and PostgreSQL, verifying every signature (doc/scale-out.md)");
  flags_->command->add_option("--from", flags_->from, "source store: a directory or a postgresql:// URL")
      ->required();
  flags_->command->add_option("--to", flags_->to, "new, empty target: a directory or a postgresql:// URL")
      ->required();
}

std::optional<int> MigrateCommand::Run(const CommandEnv& env) {
  if (!flags_->command->parsed()) return std::nullopt;
  return Migrate(env, flags_->from, flags_->to);
}

}  // namespace bulwark::cli
