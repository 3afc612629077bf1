// `bulwark-lab eval extraction` (issue #13 point 5, reduced): MemPot detection of the built-in
// extraction attacks on the shipped memories, attack x estimator, in-family and
// leave-one-attack-family-out, against benign sessions of 8 and 64 queries
// (eval/experiments/extraction_eval.h; what is not covered: doc/REPRODUCTION.md).
#include <absl/strings/str_cat.h>
#include <spdlog/spdlog.h>

#include <fstream>

#include "cli/eval_commands.h"
#include "eval/experiments/extraction_eval.h"
#include "eval/experiments/session_file.h"

namespace bulwark::cli {
namespace {

class EvalExtractionCommand final : public EvalSubcommand {
 public:
  std::string name() const override { return "extraction"; }
  std::string description() const override {
    return "MemPot honeypots vs the built-in extraction attacks: attack x estimator, in-family and "
           "leave-one-family-out, benign sessions of 8 and 64 queries";
  }
  void AddFlags(CLI::App* sub) override {
    sub->add_option("--memories", memories_, "shipped memories to store")
        ->check(CLI::Range(10, 1400))
        ->capture_default_str();
    sub->add_option("--attack-sessions", config_.attack_sessions, "evaluation sessions per attack family")
        ->check(CLI::Range(1, 10000))
        ->capture_default_str();
    sub->add_option("--benign-sessions", config_.benign_sessions, "benign sessions per length (8, 64)")
        ->check(CLI::Range(1, 10000))
        ->capture_default_str();
    sub->add_flag("--no-held-out", no_held_out_, "skip the leave-one-family-out fits");
    sub->add_option("--external-memories", config_.external_memories,
                    "WordNet glosses in the external store (0: no external store)")
        ->check(CLI::Range(0, 50000))
        ->capture_default_str();
    sub->add_option("--coverage-probes", config_.base.fit.coverage_probes,
                    "memories drawn as extra fit positives (honeypot FitOptions::coverage_probes)")
        ->check(CLI::Range(0, 1000000))
        ->capture_default_str();
    sub->add_option("--unseen-weight", config_.base.unseen_weight,
                    "count_calibrated: weight rho of the unseen-family component of the alternative "
                    "(0: the plain table)")
        ->check(CLI::Range(0.0, 0.99))
        ->capture_default_str();
    sub->add_option("--intent-cap", config_.base.intent_cap,
                    "cap of the intent grammar's per-query LLR (0: derived so that two requests block, "
                    "honeypot/intent_cap.h; 1.1 before 2026-11-24 late)")
        ->check(CLI::Range(0.0, 20.0))
        ->capture_default_str();
    sub->add_option("--coverage-window", config_.base.coverage_window,
                    "+coverage: memory ids remembered per principal (honeypot/coverage_evidence.h)")
        ->check(CLI::Range(1, 4096))
        ->capture_default_str();
    sub->add_option("--coverage-floor", config_.base.coverage_floor,
                    "+coverage: lower clamp of the novelty LLR (0: one-sided evidence)")
        ->check(CLI::Range(-20.0, 0.0))
        ->capture_default_str();
    sub->add_flag("--coverage-unconstrained", coverage_unconstrained_,
                  "+coverage: the unconstrained novelty table (default: non-decreasing in novelty)");
    sub->add_option("--coverage-benign-sessions", config_.base.coverage_benign_sessions,
                    "+coverage: extra benign-simulator sessions per length for the novelty table")
        ->check(CLI::Range(0, 1000))
        ->capture_default_str();
    sub->add_flag("--answer-deciding-search", answer_deciding_,
                  "answer the search that decides a block (refused by default)");
    sub->add_option("--trace", trace_path_,
                    "write every replayed session's per-round observation here (JSONL)");
    sub->add_option("--estimators", config_.estimators,
                    "count_calibrated, count, similarity; NAME+intent adds the intent grammar's evidence, "
                    "+relevance the relevance evidence, +coverage the coverage (novelty) evidence")
        ->capture_default_str();
  }
  int Run(const EvalContext& ctx) override {
    if (ctx.Seeds(1) != 1) {
      ctx.Fail(absl::InvalidArgumentError("eval extraction runs one seed (--seeds 1)"));
      return 2;
    }
    std::ifstream in(DefaultCorpusPath("benign_memories.jsonl"));
    auto memories = eval::ParseMemoryFile(in);
    if (!memories.ok()) return ctx.Fail(memories.status());
    memories->resize(std::min<size_t>(memories->size(), memories_));
    config_.memories = *std::move(memories);
    config_.leave_one_out = !no_held_out_;
    config_.base.trace = !trace_path_.empty();
    config_.base.refuse_deciding_search = !answer_deciding_;
    config_.base.coverage_monotone = !coverage_unconstrained_;
    config_.base.benign_query_files = {DefaultCorpusPath("benign_queries.jsonl")};
    config_.base.fit.seed = ctx.flags().seed;
    config_.base.generator_seed = ctx.flags().seed;
    config_.session_seed = ctx.flags().seed + 1000003;
    config_.store_options = ctx.env().store_options;
    config_.store_options.write_gate_config = {
        {"memsad", {{"enabled", false}}},     {"memsad_plus", {{"enabled", false}}},
        {"validation", {{"enabled", false}}}, {"proactive", {{"enabled", false}}},
        {"conflict", {{"enabled", false}}},   {"flood", {{"enabled", false}}}};
    auto dir = EvalTempDir::Create();
    if (!dir.ok()) return ctx.Fail(dir.status());
    const spdlog::level::level_enum level = spdlog::get_level();
    spdlog::set_level(spdlog::level::err);  // every block logs a warning
    const bool terminal = ctx.env().err_is_terminal;
    auto result = eval::RunExtractionEval(config_, dir->path(), [&](std::string_view stage) {
      if (terminal) ctx.err() << "eval extraction: " << stage << "\n";
    });
    spdlog::set_level(level);
    if (!result.ok()) return ctx.Fail(result.status());
    if (!trace_path_.empty()) {
      std::ofstream trace(trace_path_);
      for (const nlohmann::json& line : result->traces) trace << line.dump() << "\n";
      if (!trace.good()) return ctx.Fail(absl::UnavailableError("cannot write " + trace_path_));
    }
    nlohmann::json json = eval::ToJson(*result);
    json["config"] = {{"memories", config_.memories.size()},
                      {"attack_sessions", config_.attack_sessions},
                      {"benign_sessions", config_.benign_sessions},
                      {"leave_one_out", config_.leave_one_out},
                      {"external_memories", config_.external_memories},
                      {"coverage_probes", config_.base.fit.coverage_probes},
                      {"unseen_weight", config_.base.unseen_weight},
                      {"intent_cap", config_.base.intent_cap},
                      {"coverage_window", config_.base.coverage_window},
                      {"coverage_floor", config_.base.coverage_floor},
                      {"coverage_monotone", config_.base.coverage_monotone},
                      {"coverage_benign_sessions", config_.base.coverage_benign_sessions},
                      {"refuse_deciding_search", config_.base.refuse_deciding_search},
                      {"seed", ctx.flags().seed}};
    return ctx.Finish(eval::ToMarkdown(*result), json);
  }

 private:
  size_t memories_ = 300;
  bool no_held_out_ = false;
  std::string trace_path_;
  bool answer_deciding_ = false;
  bool coverage_unconstrained_ = false;
  eval::ExtractionEvalConfig config_;
};

}  // namespace

std::unique_ptr<EvalSubcommand> MakeEvalExtractionCommand() {
  return std::make_unique<EvalExtractionCommand>();
}

}  // namespace bulwark::cli
