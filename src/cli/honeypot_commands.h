// The `bulwark honeypots` subcommands (issue #13 point 1; DESIGN 4.7, doc/honeypots.md): MemPot
// honeypots of a namespace, fitted and written by the operator through the store's privileged
// system write (kind = honeypot, source = system, principal "bulwark:honeypots"; the write gate and
// the calibration never see them), with each run's metrics kept in the store's HoneypotRepository.
//
//   honeypots fit --attack-log F [--attack-log F ...] --benign-queries F [--ratio R] [--seed S]
//                 [--stack]          fit pots for the namespace (-n), write them, store the run
//                                    and its signed extraction-intent table (serve adds it)
//   honeypots show                   the namespace's current runs and their metrics
//   honeypots list                   its pots (id, batch, text): admin only, as the CLI is
//   honeypots remove                 deletes every pot of the namespace and retires its runs
//   honeypots mode off|monitor|block [--k-obs N] [--intent on|off] ...   the namespace's stored
//                                    monitor setting (a running server applies it within a second)
//   sessions list                    the blocks the monitor stored for the namespace
//   sessions unblock --principal P [--session S]   clears one (a running server: within a second)
// `mode` and `sessions` are in honeypot_monitor_commands.h; their changes are audited.
//
// An attack log is read for its "query" fields (JSONL as `bulwark-lab attack extraction` writes
// it; plain lines also count as queries), so the product binary links no attack code.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <optional>

#include "cli/command_env.h"

namespace bulwark::cli {

class HoneypotCommands : public CommandGroup {
 public:
  HoneypotCommands();
  ~HoneypotCommands() override;

  void Register(CLI::App& app) override;
  // Returns the exit code (0 success, 1 failure with the message on err) when a `honeypots`
  // subcommand was parsed; nullopt otherwise.
  std::optional<int> Run(const CommandEnv& env) override;

 private:
  struct Flags;
  std::unique_ptr<Flags> flags_;
};

}  // namespace bulwark::cli
