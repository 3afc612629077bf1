// `bulwark migrate --from LOCATION --to LOCATION` (issue #17 point 1; doc/scale-out.md): copies a
// store between engines (an SQLite directory and a postgresql:// URL, either way, or between two
// of one kind) with everything in it -- entries with their history and its chain, the audit
// chain, principals and keys, query-gate models, the write gate's calibration and query history,
// honeypot runs, blocks and settings -- and verifies every signature and chain on the way:
//
//   1. the target must hold no store (FailedPrecondition otherwise; nothing is written);
//   2. the source is verified completely with the keyring (`bulwark verify` and `bulwark audit
//      --verify`'s checks); any row that fails is reported by name and nothing is written;
//   3. the rows are copied byte for byte (storage/store_copy.h: COPY FROM STDIN into PostgreSQL,
//      batched INSERTs in one transaction into SQLite), never re-signed;
//   4. the target is verified the same way, and its counts must equal the source's.
//
// The keyring is --keyring, else the source directory's keyring.json; a PostgreSQL source needs
// --keyring. A directory target without --keyring gets a copy of the keyring (mode 0600), so that
// it is a complete store of its own.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <optional>

#include "cli/command_env.h"

namespace bulwark::cli {

class MigrateCommand : public CommandGroup {
 public:
  MigrateCommand();
  ~MigrateCommand() override;

  void Register(CLI::App& app) override;
  // Exit code when `migrate` was parsed: 0 copied and verified, 1 refused or failed (the reason,
  // and every row that failed verification, on err); nullopt otherwise.
  std::optional<int> Run(const CommandEnv& env) override;

 private:
  struct Flags;
  std::unique_ptr<Flags> flags_;
};

}  // namespace bulwark::cli
