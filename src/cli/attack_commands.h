// `bulwark-lab attack ...`: the red-team attacks (DESIGN 4.8) as a command an operator runs against
// their own store, producing what the defenses are fitted on. Today one attack:
//
//   attack agentpoison --victim-queries FILE -o LOG [--benign-queries FILE] [--payload TEXT]
//                      [--trigger-tokens N] [--sweeps N] [--candidates N] [--vocabulary N]
//                      [--seed N] [--write]
//
// optimizes an AgentPoison trigger (src/attack/agentpoison_trigger.h) against the store's own
// embedder, one per target topic of the victim queries, and writes the attack log: one JSON line
// per triggered victim query, {"query": "<victim query> <trigger>", "attack": "agentpoison",
// "trigger", "victim_query", "target_topic"}, which `gate fit --triggered LOG` reads (QOE: the
// query gate's LDA direction is fitted on triggered queries "produced by the attack suite").
// With --write it also stores the poison passages in the namespace through the normal write path
// (signed, write gate applied), as the attacker with write access would.
//
// Nothing is written unless every input is valid: the log appears whole (written to a temporary
// file and renamed) only after the optional store write succeeded.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <optional>

#include "cli/command_env.h"
#include "cli/extraction_attack_command.h"

namespace bulwark::cli {

class AttackCommands : public CommandGroup {
 public:
  AttackCommands();
  ~AttackCommands() override;

  // Adds `attack` and its subcommands to `app`. Call once, before app.parse().
  void Register(CLI::App& app) override;
  // Runs the parsed attack subcommand; nullopt if none was parsed. Exit code 0 or 1 (message on
  // env.err).
  std::optional<int> Run(const CommandEnv& env) override;

 private:
  struct Flags;
  std::unique_ptr<Flags> flags_;
  ExtractionAttackCommand extraction_;
};

}  // namespace bulwark::cli
