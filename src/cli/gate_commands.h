// CLI commands of the write gate (DESIGN 4.5): `bulwark calibrate`, `bulwark quarantine
// list|release|reject` and `bulwark watermark mark|check`. Each runs against an open store and
// returns the process exit code (0 ok, 1 failure), printing text or, with `json`, JSON;
// GateCommands registers them and opens the store of the global flags.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <ostream>
#include <string>

#include "cli/command_env.h"
#include "store/memory_store.h"

namespace bulwark::cli {

struct CalibrateFlags {
  std::string queries_file;    // one query per line, or JSONL objects with "query"
  std::string reference_file;  // import JSONL (text per line object)
  size_t from_store = 50;
  std::string trigger;
  std::optional<double> target_fpr;
  std::optional<double> kappa;
};

int RunCalibrate(MemoryStore& store, const std::string& name_space, const CalibrateFlags& flags, bool json,
                 std::ostream& out, std::ostream& err);

// action: list | release | reject | show
int RunQuarantine(MemoryStore& store, const std::string& name_space, const std::string& action,
                  const std::string& id, const std::string& actor, bool json, std::ostream& out,
                  std::ostream& err);

// action: mark | check. `text` is the text itself (or read from stdin when "-").
int RunWatermark(MemoryStore& store, const std::string& action, const std::string& text, double z_target,
                 bool json, std::ostream& out, std::ostream& err);

// `calibrate`, `quarantine` and `watermark`: Run opens env.store (its errors: exit code 1 with the
// message on env.err) and runs the function above for the subcommand that was parsed.
class GateCommands : public CommandGroup {
 public:
  void Register(CLI::App& app) override;
  std::optional<int> Run(const CommandEnv& env) override;

 private:
  CalibrateFlags calibrate_flags_;
  std::string id_, watermark_text_;
  double z_target_ = 1.5;
  CLI::App* calibrate_ = nullptr;
  CLI::App* quarantine_ = nullptr;
  CLI::App* quarantine_list_ = nullptr;
  CLI::App* quarantine_release_ = nullptr;
  CLI::App* watermark_ = nullptr;
  CLI::App* watermark_mark_ = nullptr;
};

}  // namespace bulwark::cli
