// `bulwark-lab attack extraction`: runs the extraction attacks (MEXTRA, DGEA, RAG-Thief, IKEA) and
// the benign-session simulator against a store, through the API a user has: the local store
// (--store, -n) or a running service (--url with $BULWARK_API_KEY), and writes the attack log that
// `honeypots fit` reads (doc/attacks.md, "Extraction attacks").
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <optional>

#include "cli/command_env.h"

namespace bulwark::cli {

class ExtractionAttackCommand {
 public:
  ExtractionAttackCommand();
  ~ExtractionAttackCommand();
  // Adds `extraction` under `attack`.
  void Register(CLI::App* attack);
  // The exit code if `attack extraction` was parsed; nullopt otherwise.
  std::optional<int> Run(const CommandEnv& env);

 private:
  struct Flags;
  std::unique_ptr<Flags> flags_;
};

}  // namespace bulwark::cli
