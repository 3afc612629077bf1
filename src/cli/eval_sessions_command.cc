// `bulwark-lab eval sessions` (issue #13 point 6): MemPot detection on user-supplied data.
//
//   bulwark-lab eval sessions --memories F --sessions F [--attack-log F ...] [--json F]
//
// Builds a fresh store (temporary unless --store is given; write gate off: the memories are taken
// as given) from the --memories file, fits honeypots on the --attack-log files (default: logs
// made by the built-in extraction attacks against this store, never the scored sessions) and on
// benign queries (--benign-queries, default data/corpora/benign_queries.jsonl, plus simulated
// benign sessions against this store), replays every session of the --sessions file through the
// defended search path under its own session id and principal, and prints AUROC, TPR@1%FPR, FPR
// at the block threshold, mean first-detection time, detected fraction and leakage, overall and
// per style (eval/experiments/session_eval.h; file formats in session_file.h, doc/eval.md).
// Bad input (a missing or malformed file, a bad flag) exits 2 and names the file and line.
#include <absl/strings/str_cat.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <fstream>

#include "cli/eval_commands.h"
#include "cli/query_file.h"
#include "core/status_macros.h"
#include "eval/experiments/session_eval.h"

namespace bulwark::cli {
namespace {

constexpr uintmax_t kMaxFileBytes = uintmax_t{256} << 20;
constexpr int kBadInput = 2;

// Opens `path` for a parser after checking it exists and is at most 256 MiB.
absl::StatusOr<std::ifstream> OpenInput(const std::string& path, absl::string_view what) {
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) return absl::NotFoundError(absl::StrCat("cannot read the ", what, " file ", path));
  if (size > kMaxFileBytes) {
    return absl::InvalidArgumentError(absl::StrCat("the ", what, " file ", path, " is larger than 256 MiB"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read the ", what, " file ", path));
  return in;
}

// The parser's error, prefixed with the file's path.
absl::Status InFile(const std::string& path, const absl::Status& status) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", status.message()));
}

absl::StatusOr<std::vector<NewEntry>> ReadMemories(const std::string& path) {
  BULWARK_ASSIGN_OR_RETURN(auto in, OpenInput(path, "memories"));
  auto parsed = eval::ParseMemoryFile(in);
  if (!parsed.ok()) return InFile(path, parsed.status());
  return parsed;
}

absl::StatusOr<std::vector<eval::LabelledSession>> ReadSessions(const std::string& path) {
  BULWARK_ASSIGN_OR_RETURN(auto in, OpenInput(path, "sessions"));
  auto parsed = eval::ParseSessionFile(in);
  if (!parsed.ok()) return InFile(path, parsed.status());
  return parsed;
}

class EvalSessionsCommand final : public EvalSubcommand {
 public:
  std::string name() const override { return "sessions"; }
  std::string description() const override {
    return "MemPot honeypots + SPRT on user-supplied memories and labelled sessions: AUROC, TPR@1%FPR, FPR "
           "at "
           "block, first-detection time, detected fraction, leakage; overall and per style";
  }
  void AddFlags(CLI::App* sub) override {
    sub->add_option("--memories", memories_file_,
                    "memories: JSONL with \"text\" (import format) or plain lines")
        ->required();
    sub->add_option("--sessions", sessions_file_,
                    "JSONL sessions: {\"session\", \"label\": benign|attack, \"style\", \"queries\": [...]}")
        ->required();
    sub->add_option(
        "--attack-log", attack_logs_,
        "attack log(s) the honeypots are fitted on (JSONL with \"query\", or plain lines); default: "
        "logs of the built-in extraction attacks against this store");
    sub->add_option("--benign-queries", benign_files_,
                    "benign query file(s) for the fit (JSONL {\"query\", \"category\"}); default "
                    "data/corpora/benign_queries.jsonl");
    sub->add_option("-k,--k", config_.k, "hits per query")->check(CLI::Range(1, 1000))->capture_default_str();
    sub->add_option("--k-obs", config_.k_obs, "rows of the monitor's observation")
        ->check(CLI::Range(1, 64))
        ->capture_default_str();
    sub->add_option("--estimator", estimator_,
                    "per-query LLR: count_calibrated, count (Eq. 17) or similarity")
        ->check(CLI::IsMember({"count_calibrated", "count", "similarity"}))
        ->capture_default_str();
    sub->add_option("--lower-boundary", lower_boundary_, "SPRT policy at H0: restart, floor, cusum or none")
        ->check(CLI::IsMember({"restart", "floor", "cusum", "none"}))
        ->capture_default_str();
    sub->add_option("--ratio", config_.fit.ratio, "pots per memory")
        ->check(CLI::Range(1e-6, 0.5))
        ->capture_default_str();
    sub->add_option("--calibration-cap", config_.calibration_cap,
                    "cap on |LLR| of the count_calibrated table (0: none; 1.1 needs two pot rounds to block)")
        ->check(CLI::Range(0.0, 100.0))
        ->capture_default_str();
    sub->add_flag("--no-intent", no_intent_, "without the extraction-intent grammar's evidence (pots alone)");
    sub->add_option("--intent-cap", config_.intent_cap,
                    "cap of the intent grammar's per-query LLR (0: derived so that two requests block, "
                    "honeypot/intent_cap.h)")
        ->check(CLI::Range(0.0, 20.0))
        ->capture_default_str();
    sub->add_option("--generated-sessions", config_.generated_sessions,
                    "sessions per built-in attack (64 queries) and per benign length (8, 64) for the fit")
        ->check(CLI::Range(1, 1000))
        ->capture_default_str();
  }

  int Run(const EvalContext& ctx) override {
    if (ctx.Seeds(1) != 1)
      return Bad(ctx, absl::InvalidArgumentError("eval sessions runs one seed (--seeds 1)"));
    auto memories = ReadMemories(memories_file_);
    if (!memories.ok()) return Bad(ctx, memories.status());
    auto sessions = ReadSessions(sessions_file_);
    if (!sessions.ok()) return Bad(ctx, sessions.status());
    for (const std::string& path : attack_logs_) {
      auto queries = ReadQueryFile(path);
      if (!queries.ok()) return Bad(ctx, queries.status());
      config_.attack_queries.insert(config_.attack_queries.end(), queries->begin(), queries->end());
    }
    if (benign_files_.empty()) benign_files_.push_back(DefaultCorpusPath("benign_queries.jsonl"));
    for (const std::string& path : benign_files_) {
      auto queries = ReadQueryFile(path);
      if (!queries.ok()) return Bad(ctx, queries.status());
      config_.benign_queries.insert(config_.benign_queries.end(), queries->begin(), queries->end());
    }
    config_.benign_query_files = benign_files_;
    config_.estimator = *honeypot::ParseLlrEstimatorKind(estimator_);
    config_.intent_evidence = !no_intent_;
    config_.sprt.lower_boundary = *honeypot::ParseLowerBoundary(lower_boundary_);
    config_.fit.seed = ctx.flags().seed;
    config_.generator_seed = ctx.flags().seed;
    config_.name_space = ctx.env().name_space;

    StoreOptions options = ctx.env().store_options;
    options.write_gate_config = {{"memsad", {{"enabled", false}}},     {"memsad_plus", {{"enabled", false}}},
                                 {"validation", {{"enabled", false}}}, {"proactive", {{"enabled", false}}},
                                 {"conflict", {{"enabled", false}}},   {"flood", {{"enabled", false}}}};
    auto created = ctx.CreateStore(options);
    if (!created.ok()) return ctx.Fail(created.status());
    MemoryStore& store = *created->store;
    // Every block would log a warning; the report lists them.
    const spdlog::level::level_enum log_level = spdlog::get_level();
    spdlog::set_level(spdlog::level::err);
    struct RestoreLevel {
      spdlog::level::level_enum level;
      ~RestoreLevel() { spdlog::set_level(level); }
    } restore{log_level};
    const bool terminal = ctx.env().err_is_terminal;
    auto defended = eval::BuildDefendedStore(store, *memories, config_, [&](std::string_view stage) {
      if (terminal) ctx.err() << "eval sessions: " << stage << "\n";
    });
    if (!defended.ok()) return ctx.Fail(defended.status());
    std::vector<eval::SessionOutcome> outcomes;
    {
      EvalProgress progress = ctx.Progress("sessions", sessions->size());
      auto replayed = eval::ReplaySessions(store, *defended, *sessions, config_,
                                           [&](size_t, size_t) { progress.Step(); });
      if (!replayed.ok()) return ctx.Fail(replayed.status());
      outcomes = *std::move(replayed);
    }
    const eval::SessionEvalSummary summary = eval::SummarizeSessions(outcomes);
    nlohmann::json json = eval::ToJson(summary, *defended, outcomes, config_);
    json["detail"]["config"]["memories_file"] = memories_file_;
    json["detail"]["config"]["sessions_file"] = sessions_file_;
    json["detail"]["config"]["attack_logs"] = attack_logs_;
    json["detail"]["config"]["benign_queries"] = benign_files_;
    return ctx.Finish(eval::ToMarkdown(summary, *defended, config_), json);
  }

 private:
  static int Bad(const EvalContext& ctx, const absl::Status& status) {
    ctx.Fail(status);
    return kBadInput;
  }

  std::string memories_file_, sessions_file_, estimator_ = "count_calibrated", lower_boundary_ = "restart";
  bool no_intent_ = false;
  std::vector<std::string> attack_logs_, benign_files_;
  eval::SessionEvalConfig config_;
};

}  // namespace

std::unique_ptr<EvalSubcommand> MakeEvalSessionsCommand() { return std::make_unique<EvalSessionsCommand>(); }

}  // namespace bulwark::cli
