// `bulwark-lab eval smoothing` (issue #6; SMSR Component 2, DESIGN 4.6): the empirical attack success
// rate of smoothed retrieval against its certificate, for t = 1 .. --max-t poisoned entries, with
// and without provenance, under the equivalence and the string vote
// (eval/experiments/smoothing_eval.h describes the protocol). Scenarios: --scenarios, default
// data/corpora/enterprise_scenarios.jsonl.
#include "cli/eval_commands.h"
#include "eval/experiments/smoothing_eval.h"

namespace bulwark::cli {
namespace {

class EvalSmoothingCommand : public EvalSubcommand {
 public:
  std::string name() const override { return "smoothing"; }
  std::string description() const override {
    return "smoothed retrieval: empirical ASR against the certificate (t poisoned entries, string vs "
           "equivalence "
           "vote, with/without provenance), utility";
  }
  void AddFlags(CLI::App* sub) override {
    sub->add_option("--scenarios", scenarios_,
                    "scenario file (default data/corpora/enterprise_scenarios.jsonl)");
    sub->add_option("--max-t", max_t_, "poisoned entries t = 1 .. max-t")
        ->capture_default_str()
        ->check(CLI::Range(1, 5));
    sub->add_option("--k", k_, "entries per run")->capture_default_str()->check(CLI::Range(1, 10));
    sub->add_option("--nruns", nruns_, "runs per smoothed answer")
        ->capture_default_str()
        ->check(CLI::Range(1, 101));
    sub->add_option("--trials", trials_, "smoothed answers per scenario, condition and seed")
        ->capture_default_str()
        ->check(CLI::Range(1, 10000));
  }

  int Run(const EvalContext& ctx) override {
    const std::string path =
        scenarios_.empty() ? DefaultCorpusPath("enterprise_scenarios.jsonl") : scenarios_;
    auto scenarios = eval::ReadSmoothingScenarios(path);
    if (!scenarios.ok()) return ctx.Fail(scenarios.status());
    const eval::SmoothingEvalConfig config{.seed = ctx.flags().seed,
                                           .seeds = ctx.Seeds(5),
                                           .max_t = max_t_,
                                           .k = k_,
                                           .nruns = nruns_,
                                           .trials = trials_};
    auto created = ctx.CreateStore(ctx.env().store_options);
    if (!created.ok()) return ctx.Fail(created.status());
    EvalProgress progress =
        ctx.Progress("eval smoothing", eval::SmoothingConditions(config).size() * scenarios->size());
    auto result =
        eval::RunSmoothingEval(*created->store, *scenarios, config, [&progress] { progress.Step(); });
    if (!result.ok()) return ctx.Fail(result.status());
    auto report = eval::ReportSmoothingEval(*result, config, path, scenarios->size());
    if (!report.ok()) return ctx.Fail(report.status());
    return ctx.Finish(report->markdown, report->json);
  }

 private:
  std::string scenarios_;
  int max_t_ = 3;
  int k_ = 5;
  int nruns_ = 5;
  int trials_ = 10;
};

}  // namespace

std::unique_ptr<EvalSubcommand> MakeEvalSmoothingCommand() {
  return std::make_unique<EvalSmoothingCommand>();
}

}  // namespace bulwark::cli
