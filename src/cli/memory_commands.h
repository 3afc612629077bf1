// The everyday `bulwark` commands on one store's memories:
//
//   init [--embedder JSON] [--no-synonyms]    create a store
//   keys create|rotate|list                   the signing keyring
//   add TEXT [-m JSON] [-s SOURCE] | add -f FILE.jsonl    through the write path (one batch)
//   search QUERY [-k K] [--filter JSON] [--include-quarantined] [read-defense flags]
//   get ID | history ID | update ID [--text T] [-m JSON] | delete ID | purge ID
//   export [-o FILE] [--all-states]           verified memories as JSONL
//
// in the namespace of -n, as the principal of --principal. Every command prints --json on request.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "cli/command_env.h"
#include "cli/read_defense_commands.h"

namespace bulwark::cli {

class MemoryCommands : public CommandGroup {
 public:
  // `read_defenses` adds its flags to `search` and runs it (the defended read path); not owned.
  explicit MemoryCommands(ReadDefenseCommands* read_defenses) : read_defenses_(read_defenses) {}
  void Register(CLI::App& app) override;
  // The exit code when one of these commands was parsed; nullopt otherwise.
  std::optional<int> Run(const CommandEnv& env) override;

  struct Flags {
    std::string embedder_json;
    bool no_synonyms = false;
    std::string key_action;
    std::optional<std::string> text;
    std::string file, metadata_json, source_name = "user";
    std::string query, filter_json;
    int k = 5;
    bool include_quarantined = false;
    std::string id;
    std::string output;
    bool all_states = false;
  };

 private:
  ReadDefenseCommands* read_defenses_;
  Flags f_;
  CLI::App *init_ = nullptr, *keys_ = nullptr, *add_ = nullptr, *search_ = nullptr, *get_ = nullptr,
           *history_ = nullptr, *update_ = nullptr, *delete_ = nullptr, *purge_ = nullptr, *export_ = nullptr;
};

}  // namespace bulwark::cli
