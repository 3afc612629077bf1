// `bulwark-lab eval <sub>`: the evaluation commands (issue #6, DESIGN 4.8). Each subcommand runs an
// experiment against real stores built in a temporary directory, prints a markdown table on
// stdout, and accepts the common flags
//
//   --seed S     base seed (default kDefaultEvalSeed): a run is deterministic for a given seed
//   --seeds N    repetitions with seeds S, S+1, ..., S+N-1 (default: the subcommand's)
//   --json FILE  write the full results as JSON to FILE
//   --plots DIR  write ROC curves (SVG) to DIR, for the subcommands that have curves
//
// and shows progress on stderr when stderr is a terminal.
//
// HOW TO ADD A SUBCOMMAND (e.g. `bulwark-lab eval poisoning`):
//   1. Create src/cli/eval_poisoning_command.cc defining
//        std::unique_ptr<EvalSubcommand> MakeEvalPoisoningCommand();
//      which returns a subclass of EvalSubcommand (name(), description(), AddFlags(), Run()).
//      Run() gets an EvalContext: ctx.flags() (seed, seeds, json_file, plots_dir), ctx.out(),
//      ctx.Progress(label, total), ctx.Finish(markdown, json) (prints the table, writes --json),
//      ctx.PlotPath(name) (where to write an SVG, nullopt without --plots) and ctx.MakeTempDir().
//   2. Add ONE line to the kEvalSubcommands table in eval_commands.cc (and the declaration
//      above it), and the .cc file to bulwark_cli's SRCS in src/cli/CMakeLists.txt.
//   Statistics live in src/eval (binomial.h, roc.h, bootstrap.h, rates.h), tables and files in
//   src/eval/report.h and src/eval/roc_svg.h.
#pragma once

#include <absl/status/statusor.h>

#include <CLI/CLI.hpp>
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/command_env.h"
#include "store/memory_store.h"
#include "store/store_options.h"

namespace bulwark::cli {

inline constexpr uint64_t kDefaultEvalSeed = 20260522;

struct EvalFlags {
  uint64_t seed = kDefaultEvalSeed;
  std::optional<int> seeds;  // unset: the subcommand's default
  std::string json_file;     // empty: no JSON file
  std::string plots_dir;     // empty: no plots
};

// What the global flags give an eval command.
struct EvalEnv {
  std::optional<std::string> store;  // --store when given explicitly; eval stores are temporary otherwise
  std::string name_space;
  StoreOptions store_options;
  std::ostream& out;
  std::ostream& err;
  bool err_is_terminal = false;  // progress is shown only then
};

// A "label: done/total" line on stderr, redrawn in place; silent when stderr is not a terminal.
class EvalProgress {
 public:
  EvalProgress(std::ostream* err, std::string label, size_t total);  // err null: silent
  ~EvalProgress();
  EvalProgress(const EvalProgress&) = delete;
  EvalProgress& operator=(const EvalProgress&) = delete;
  EvalProgress(EvalProgress&&) noexcept;
  void Step(size_t n = 1);

 private:
  std::ostream* err_;
  std::string label_;
  size_t total_, done_ = 0;
};

// A temporary directory removed when the object dies.
class EvalTempDir {
 public:
  static absl::StatusOr<EvalTempDir> Create();
  EvalTempDir(EvalTempDir&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
  EvalTempDir& operator=(EvalTempDir&&) = delete;
  ~EvalTempDir();
  const std::filesystem::path& path() const { return path_; }

 private:
  explicit EvalTempDir(std::filesystem::path path) : path_(std::move(path)) {}
  std::filesystem::path path_;
};

// A store for one experiment: in --store DIR when given, else in a temporary directory removed with
// this object.
struct EvalStore {
  std::optional<EvalTempDir> temp;
  std::filesystem::path dir;
  std::unique_ptr<MemoryStore> store;
};

class EvalContext {
 public:
  EvalContext(const EvalEnv& env, const EvalFlags& flags) : env_(env), flags_(flags) {}
  const EvalEnv& env() const { return env_; }
  const EvalFlags& flags() const { return flags_; }
  std::ostream& out() const { return env_.out; }
  std::ostream& err() const { return env_.err; }
  // --seeds, or `default_seeds` when not given.
  int Seeds(int default_seeds) const { return flags_.seeds.value_or(default_seeds); }
  EvalProgress Progress(std::string label, size_t total) const;
  // <plots_dir>/<name>.svg, or nullopt without --plots.
  std::optional<std::filesystem::path> PlotPath(const std::string& name) const;
  // Prints `markdown` on stdout and writes `json` to --json FILE. Returns the exit code (0, or 1
  // with a message when the file cannot be written).
  int Finish(const std::string& markdown, const nlohmann::json& json) const;
  // A new store with `options` (EvalStore). The errors of MemoryStore::Create and EvalTempDir.
  absl::StatusOr<EvalStore> CreateStore(const StoreOptions& options) const;
  // Prints "error: ..." and returns 1.
  int Fail(const absl::Status& status) const;

 private:
  const EvalEnv& env_;
  const EvalFlags& flags_;
};

// The path of an evaluation corpus file (data/corpora/<name>): under the working directory when it
// is there, else in the source tree the binary was built from.
std::string DefaultCorpusPath(const std::string& name);

// One `bulwark-lab eval` subcommand.
class EvalSubcommand {
 public:
  virtual ~EvalSubcommand() = default;
  virtual std::string name() const = 0;
  virtual std::string description() const = 0;
  // Adds the subcommand's own flags (the common ones are already there). Bind them to members.
  virtual void AddFlags(CLI::App* sub) = 0;
  // Runs the experiment. Returns the exit code: 0 success, 1 failure (message on ctx.err()).
  virtual int Run(const EvalContext& ctx) = 0;
};

// Registers `eval` and its subcommands with the app (cli.cc calls Register before parsing and
// Run after).
class EvalCommands : public CommandGroup {
 public:
  EvalCommands();
  ~EvalCommands() override;
  void Register(CLI::App& app) override;
  std::optional<int> Run(const CommandEnv& env) override;
  // Runs the eval subcommand that was parsed; nullopt if `eval` was not.
  std::optional<int> Run(const EvalEnv& env);

 private:
  CLI::App* eval_ = nullptr;
  EvalFlags flags_;
  std::vector<std::pair<CLI::App*, std::unique_ptr<EvalSubcommand>>> subcommands_;
};

}  // namespace bulwark::cli
