// The `bulwark retrieval` subcommands (issue #19 point 2): which ranking a namespace's searches
// use, stored in the store (store/retrieval_settings.h).
//
//   retrieval show                 the namespace's (-n) ranking and whether it is its own setting
//                                  or the store's default
//   retrieval set vector|hybrid    stores the namespace's setting; a running server sees it within
//                                  other_writers_check_ms (100 ms by default)
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "cli/command_env.h"

namespace bulwark::cli {

class RetrievalCommands : public CommandGroup {
 public:
  void Register(CLI::App& app) override;
  // The exit code (0 success, 1 failure with the message on err) when a `retrieval` subcommand
  // was parsed; nullopt otherwise.
  std::optional<int> Run(const CommandEnv& env) override;

 private:
  CLI::App* show_ = nullptr;
  CLI::App* set_ = nullptr;
  std::string value_;
};

}  // namespace bulwark::cli
