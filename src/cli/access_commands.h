// `bulwark principals add|list|revoke|key|keys|revoke-key` (API principals and their keys, written
// offline into the store, signed rows: auth/principal_registry.h) and `bulwark audit` (the audit
// log newest first, filtered by principal, session, entry, namespace and age; `--verify` checks its
// signed chain and exits 1 if any record fails).
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "auth/principal_registry.h"
#include "cli/command_env.h"

namespace bulwark::cli {

// The principal registry of an existing store (NotFound when there is no store), with the store's
// keyring: the registry's own errors otherwise.
[[nodiscard]] absl::StatusOr<std::unique_ptr<PrincipalRegistry>> OpenPrincipalRegistry(const CommandEnv& env);

class AccessCommands : public CommandGroup {
 public:
  void Register(CLI::App& app) override;
  // The exit code when `principals ...` or `audit` was parsed; nullopt otherwise.
  std::optional<int> Run(const CommandEnv& env) override;

  struct PrincipalFlags {
    std::string name;
    std::string role = "reader";
    std::vector<std::string> namespaces;
    bool no_key = false;
    std::string key_id;
  };
  struct AuditFlags {
    std::string principal, session, entry_id, since;
    int limit = 100;
    bool verify = false;
  };

 private:
  CLI::App* principals_ = nullptr;
  CLI::App* audit_ = nullptr;
  PrincipalFlags principal_;
  AuditFlags audit_flags_;
};

}  // namespace bulwark::cli
