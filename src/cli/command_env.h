// What the subcommands that live outside cli.cc (read defenses, attacks, evaluations) need from
// the global flags, how they report a failure, and the CommandGroup they implement.
#pragma once

#include <absl/status/status.h>

#include <CLI/CLI.hpp>
#include <optional>
#include <ostream>
#include <string>

#include "store/store_options.h"

namespace bulwark::cli {

struct CommandEnv {
  std::string store;
  std::string name_space;
  bool json = false;
  StoreOptions store_options;
  std::ostream& out;
  std::ostream& err;
  bool store_given = false;      // --store (or $BULWARK_STORE) was given, not the default
  bool err_is_terminal = false;  // progress bars only then
  bool namespace_given = false;  // -n/--namespace was given, not the default
  std::string principal;         // --principal: who is writing (default local:$USER)
  std::string keyring;           // --keyring; empty: the store's own (StoreLayout::keyring)
};

// A group of subcommands kept outside cli.cc. The binary registers each group before parsing
// (Register adds its subcommands and flags to the app) and offers it the parsed command line
// after (Run returns the exit code when one of its subcommands was parsed, nullopt otherwise).
// `bulwark` runs the product's groups; `bulwark-lab` adds the attack and evaluation groups, so the
// product binary links no red-team code (tools/).
class CommandGroup {
 public:
  virtual ~CommandGroup() = default;
  virtual void Register(CLI::App& app) = 0;
  virtual std::optional<int> Run(const CommandEnv& env) = 0;
};

// Prints "error: <message>" on env.err; returns the failure exit code, 1.
inline int FailCommand(const CommandEnv& env, const absl::Status& status) {
  env.err << "error: " << status.message() << "\n";
  return 1;
}

}  // namespace bulwark::cli
