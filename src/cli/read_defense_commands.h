// The `bulwark` subcommands of the read-time defenses (issue #5, DESIGN 4.6):
//
//   certificate --m M --k K --t T --nruns N   the SMSR certificate delta(m, k, t, nruns)
//
// cli.cc registers them with Register() before parsing and hands over with Run() after.
#pragma once

#include <iosfwd>
#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "bulwark/options.h"

namespace bulwark::cli {

// What the commands need from the global flags.
struct CommandEnv {
  std::string store;
  std::string name_space;
  bool json = false;
  StoreOptions store_options;
  std::ostream& out;
  std::ostream& err;
};

class ReadDefenseCommands {
 public:
  ReadDefenseCommands();
  ~ReadDefenseCommands();

  // Adds the subcommands to `app`. Call once, before app.parse().
  void Register(CLI::App& app);
  // Runs the subcommand that was parsed if it is one of these; nullopt if none of them was.
  // Returns the exit code: 0 success, 1 failure (message on err).
  std::optional<int> Run(const CommandEnv& env);

 private:
  struct Flags;
  std::unique_ptr<Flags> flags_;
};

}  // namespace bulwark::cli
