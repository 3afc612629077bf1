// The `bulwark` subcommands of the read-time defenses (issue #5, DESIGN 4.6):
//
//   search QUERY [--gate MODE] [--k-high N] [--smooth] [--m M] [--smooth-k K] [--nruns N]
//                [--responder extractive|llm] [--seed HEX] [--llm JSON]
//                                       the gate and smoothing flags of `search` (cli.cc owns the rest)
//   answer QUESTION [same flags]        the smoothed answer, its certificate and the ids behind each run
//   certificate --m M --k K --t T --nruns N   delta(m, k, t, nruns) of SMSR
//   gate fit (--benign FILE | --from-history [N]) [--triggered FILE | --trigger TEXT] [--fpr F]
//            [--score S] [--shrinkage A] [--folds K] [--mode MODE] [--labelled FILE] [--report]
//   gate show | remove | score QUERY
//
// cli.cc registers them with Register() / AddSearchFlags() before parsing and hands over with
// Run() / RunSearch() after.
#pragma once

#include <CLI/CLI.hpp>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>

#include "cli/command_env.h"
#include "store/store_options.h"

namespace bulwark {
class GateStore;
class MemoryStore;
}  // namespace bulwark

namespace bulwark::cli {

class ReadDefenseCommands : public CommandGroup {
 public:
  ReadDefenseCommands();
  ~ReadDefenseCommands() override;

  // Adds the subcommands to `app`. Call once, before app.parse().
  void Register(CLI::App& app) override;
  // Adds the gate and smoothing flags to the `search` subcommand.
  void AddSearchFlags(CLI::App* search);
  // Runs the subcommand that was parsed if it is one of these; nullopt if none of them was.
  // Returns the exit code: 0 success, 1 failure (message on err).
  std::optional<int> Run(const CommandEnv& env) override;
  // `search`: the defended read path with `options` (k, filter, include_quarantined) and the flags.
  int RunSearch(const CommandEnv& env, const std::string& query, const SearchOptions& options);

 private:
  struct Flags;
  int RunCertificate(const CommandEnv& env);
  int RunGate(const CommandEnv& env);  // gate show | score | remove | fit
  int FitGate(const CommandEnv& env, MemoryStore& store, GateStore& gates);
  std::unique_ptr<Flags> flags_;
};

}  // namespace bulwark::cli
