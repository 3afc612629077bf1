// What the subcommands that live outside cli.cc (read defenses, attacks) need from the global
// flags, and how they report a failure.
#pragma once

#include <ostream>
#include <string>

#include <absl/status/status.h>

#include "bulwark/options.h"

namespace bulwark::cli {

struct CommandEnv {
  std::string store;
  std::string name_space;
  bool json = false;
  StoreOptions store_options;
  std::ostream& out;
  std::ostream& err;
};

// Prints "error: <message>" on env.err; returns the failure exit code, 1.
inline int FailCommand(const CommandEnv& env, const absl::Status& status) {
  env.err << "error: " << status.message() << "\n";
  return 1;
}

}  // namespace bulwark::cli
