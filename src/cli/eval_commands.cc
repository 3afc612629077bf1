// The `bulwark-lab eval` group: common flags, progress, output, and the table of subcommands
// (see eval_commands.h).
#include "cli/eval_commands.h"

#include <absl/strings/str_cat.h>
#include <stdlib.h>

#include <ostream>

#include "core/status_macros.h"
#include "eval/report.h"
#include "eval/roc_svg.h"

namespace bulwark::cli {

// The subcommands, one file each (src/cli/eval_<name>_command.cc).
std::unique_ptr<EvalSubcommand> MakeEvalDetectCommand();
std::unique_ptr<EvalSubcommand> MakeEvalSmoothingCommand();
std::unique_ptr<EvalSubcommand> MakeEvalGateCommand();
std::unique_ptr<EvalSubcommand> MakeEvalPoisoningCommand();
std::unique_ptr<EvalSubcommand> MakeEvalAdaptiveCommand();
std::unique_ptr<EvalSubcommand> MakeEvalRetrievalCommand();
std::unique_ptr<EvalSubcommand> MakeEvalInjectionCommand();
std::unique_ptr<EvalSubcommand> MakeEvalSessionsCommand();
std::unique_ptr<EvalSubcommand> MakeEvalExtractionCommand();

namespace {

using EvalSubcommandFactory = std::unique_ptr<EvalSubcommand> (*)();

// One line per subcommand, in the order `bulwark-lab eval --help` lists them.
constexpr EvalSubcommandFactory kEvalSubcommands[] = {
    &MakeEvalDetectCommand,    &MakeEvalSmoothingCommand, &MakeEvalGateCommand,
    &MakeEvalPoisoningCommand, &MakeEvalAdaptiveCommand,  &MakeEvalRetrievalCommand,
    &MakeEvalInjectionCommand, &MakeEvalSessionsCommand,  &MakeEvalExtractionCommand,
};

}  // namespace

std::string DefaultCorpusPath(const std::string& name) {
  const std::filesystem::path local = std::filesystem::path("data") / "corpora" / name;
  std::error_code ec;
  if (std::filesystem::exists(local, ec)) return local.string();
  return (std::filesystem::path(BULWARK_DATA_DIR) / "corpora" / name).string();
}

EvalProgress::EvalProgress(std::ostream* err, std::string label, size_t total)
    : err_(err), label_(std::move(label)), total_(total) {
  if (err_) *err_ << "\r" << label_ << ": 0/" << total_ << std::flush;
}

EvalProgress::EvalProgress(EvalProgress&& other) noexcept
    : err_(other.err_), label_(std::move(other.label_)), total_(other.total_), done_(other.done_) {
  other.err_ = nullptr;
}

EvalProgress::~EvalProgress() {
  if (err_) *err_ << "\n" << std::flush;
}

void EvalProgress::Step(size_t n) {
  done_ += n;
  if (err_) *err_ << "\r" << label_ << ": " << done_ << "/" << total_ << std::flush;
}

absl::StatusOr<EvalTempDir> EvalTempDir::Create() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base && *base ? base : "/tmp") + "/bulwark-eval-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    return absl::UnavailableError(absl::StrCat("cannot create a temporary directory from ", pattern));
  }
  return EvalTempDir(std::filesystem::path(pattern));
}

EvalTempDir::~EvalTempDir() {
  std::error_code ec;
  if (!path_.empty()) std::filesystem::remove_all(path_, ec);
}

EvalProgress EvalContext::Progress(std::string label, size_t total) const {
  return EvalProgress(env_.err_is_terminal ? &env_.err : nullptr, std::move(label), total);
}

std::optional<std::filesystem::path> EvalContext::PlotPath(const std::string& name) const {
  if (flags_.plots_dir.empty()) return std::nullopt;
  return std::filesystem::path(flags_.plots_dir) / (eval::PlotFileName(name) + ".svg");
}

int EvalContext::Finish(const std::string& markdown, const nlohmann::json& json) const {
  env_.out << markdown;
  if (!flags_.json_file.empty()) {
    if (auto s = eval::WriteJsonFile(flags_.json_file, json); !s.ok()) return Fail(s);
  }
  return 0;
}

absl::StatusOr<EvalStore> EvalContext::CreateStore(const StoreOptions& options) const {
  EvalStore out;
  if (env_.store) {
    out.dir = *env_.store;
  } else {
    BULWARK_ASSIGN_OR_RETURN(auto made, EvalTempDir::Create());
    out.temp.emplace(std::move(made));
    out.dir = out.temp->path() / "store";
  }
  BULWARK_ASSIGN_OR_RETURN(auto store, MemoryStore::Create(out.dir, options));
  out.store = std::move(store);
  return out;
}

int EvalContext::Fail(const absl::Status& status) const {
  env_.err << "error: " << status.message() << "\n";
  return 1;
}

EvalCommands::EvalCommands() = default;
EvalCommands::~EvalCommands() = default;

void EvalCommands::Register(CLI::App& app) {
  eval_ =
      app.add_subcommand("eval", "evaluation experiments: markdown table on stdout, JSON with --json FILE");
  eval_->require_subcommand(1);
  for (EvalSubcommandFactory make : kEvalSubcommands) {
    std::unique_ptr<EvalSubcommand> command = make();
    CLI::App* sub = eval_->add_subcommand(command->name(), command->description());
    sub->add_option("--seed", flags_.seed, "base seed; runs are deterministic for a given seed")
        ->capture_default_str();
    sub->add_option("--seeds", flags_.seeds, "repetitions (seeds S .. S+N-1)")->check(CLI::Range(1, 1000));
    sub->add_option("--json", flags_.json_file, "write the full results as JSON to FILE");
    sub->add_option("--plots", flags_.plots_dir, "write ROC curves as SVG files to DIR");
    command->AddFlags(sub);
    subcommands_.emplace_back(sub, std::move(command));
  }
}

std::optional<int> EvalCommands::Run(const CommandEnv& env) {
  // Eval stores are temporary unless --store was given explicitly.
  return Run(EvalEnv{env.store_given ? std::optional<std::string>(env.store) : std::nullopt, env.name_space,
                     env.store_options, env.out, env.err, env.err_is_terminal});
}

std::optional<int> EvalCommands::Run(const EvalEnv& env) {
  if (eval_ == nullptr || !eval_->parsed()) return std::nullopt;
  for (auto& [sub, command] : subcommands_) {
    if (!sub->parsed()) continue;
    EvalContext ctx(env, flags_);
    return command->Run(ctx);
  }
  return 2;
}

}  // namespace bulwark::cli
