// `bulwark-lab eval poisoning` (issue #6): the attack x defense matrix of MemSAD Tables 2-3 on a real
// store. For every seed, attack/poisoning_eval.h's protocol: one store per seed in a temporary
// directory (lexical embedder, every write-time detector enabled), a namespace per attack
// calibrated on its query history and benign reference set and filled with benign memories from
// data/corpora, then AgentPoison, MINJA, InjecMEM and the SMSR variants through the store's API;
// agentpoison_triggered is AgentPoison against triggered calibration (MemSAD App. D).
// Reported per attack and detector (and the OR composites): TPR, FPR (Clopper-Pearson 95 %),
// AUROC over the pooled seeds, and ASR-R@k, ASR-A and ASR-T of the victim queries with no defense
// and with that detector filtering the top k (ASR-A / ASR-T: the extractive answer and the agent's
// action step of attack/agent_action.h, Clopper-Pearson 95 % in the JSON). --plots writes one ROC curve per
// attack (all detectors).
#include <sstream>

#include "attack/poisoning_eval.h"
#include "cli/eval_commands.h"
#include "core/status_macros.h"
#include "eval/report.h"
#include "eval/roc.h"
#include "eval/roc_svg.h"

namespace bulwark::cli {
namespace {

class EvalPoisoningCommand final : public EvalSubcommand {
 public:
  std::string name() const override { return "poisoning"; }
  std::string description() const override {
    return "attack x defense matrix: TPR/FPR/AUROC and ASR-R/ASR-A/ASR-T of AgentPoison (plain and triggered "
           "calibration), MINJA, InjecMEM, SMSR injections";
  }
  void AddFlags(CLI::App* sub) override {
    sub->add_option("--corpora", corpora_dir_, "directory of the evaluation corpora (default: data/corpora)");
    sub->add_option("--memories", config_.memories, "benign memories per namespace")
        ->check(CLI::Range(1, 1400))
        ->capture_default_str();
    sub->add_option("--history", config_.history_queries, "benign queries in the MemSAD history H")
        ->check(CLI::Range(1, 350))
        ->capture_default_str();
    sub->add_option("--reference", config_.reference, "benign reference memories N for calibration")
        ->check(CLI::Range(2, 280))
        ->capture_default_str();
    sub->add_option("--topics", config_.topics, "victim topics per seed")
        ->check(CLI::Range(1, 42))
        ->capture_default_str();
    sub->add_option("--scenarios", config_.scenarios, "enterprise scenarios per seed (SMSR)")
        ->check(CLI::Range(1, 20))
        ->capture_default_str();
    sub->add_option("-k,--k", config_.k, "retrieval depth")->check(CLI::Range(1, 100))->capture_default_str();
    sub->add_option("--attacks", config_.attacks,
                    "attacks to run (default: all; agentpoison_triggered = AgentPoison against triggered "
                    "calibration, MemSAD App. D)")
        ->check(CLI::IsMember(attack::kPoisoningAttacks()));
    sub->add_flag("--no-synonyms", no_synonyms_, "lexical embedder without WordNet canonicalization");
  }
  int Run(const EvalContext& ctx) override {
    config_.synonyms = !no_synonyms_;
    const std::string dir =
        corpora_dir_.empty()
            ? std::filesystem::path(DefaultCorpusPath("benign_memories.jsonl")).parent_path().string()
            : corpora_dir_;
    auto corpora = attack::LoadEvalCorpora(dir);
    if (!corpora.ok()) return ctx.Fail(corpora.status());
    auto tmp = EvalTempDir::Create();
    if (!tmp.ok()) return ctx.Fail(tmp.status());
    const int seeds = ctx.Seeds(kDefaultSeeds);
    std::vector<nlohmann::json> results;
    EvalProgress progress = ctx.Progress("poisoning", static_cast<size_t>(seeds) * config_.attacks.size());
    for (int i = 0; i < seeds; ++i) {
      auto seed = attack::RunPoisoningSeed(*corpora, config_, ctx.flags().seed + static_cast<uint64_t>(i),
                                           tmp->path(), [&](size_t, size_t) { progress.Step(); });
      if (!seed.ok()) return ctx.Fail(seed.status());
      results.push_back(*std::move(seed));
    }
    const attack::PoisoningSummary summary = attack::SummarizePoisoning(results, config_.k);
    if (auto status = WritePlots(ctx, results); !status.ok()) return ctx.Fail(status);
    nlohmann::json json = summary.json;
    json["config"] = {{"memories", config_.memories},
                      {"history_queries", config_.history_queries},
                      {"reference", config_.reference},
                      {"topics", config_.topics},
                      {"scenarios", config_.scenarios},
                      {"k", config_.k},
                      {"synonyms", config_.synonyms},
                      {"seed", ctx.flags().seed},
                      {"seeds", seeds},
                      {"attacks", config_.attacks}};
    std::ostringstream md;
    md << "Poisoning: " << seeds << " seed(s), " << config_.memories
       << " benign memories per attack, k = " << config_.k << "\n\n"
       << summary.markdown;
    return ctx.Finish(md.str(), json);
  }

 private:
  static constexpr int kDefaultSeeds = 5;

  absl::Status WritePlots(const EvalContext& ctx, const std::vector<nlohmann::json>& results) const {
    for (const std::string& attack : config_.attacks) {
      const auto path = ctx.PlotPath("poisoning-" + attack);
      if (!path) continue;
      std::vector<eval::RocSeries> series;
      for (const std::string& det : attack::kEvalDetectors()) {
        std::vector<double> pos, neg;
        for (const nlohmann::json& seed : results) {
          const nlohmann::json scores = seed["attacks"][attack]["scores"][det];
          for (double x : scores["poison"]) pos.push_back(x);
          for (double x : scores["benign"]) neg.push_back(x);
        }
        series.push_back({det, eval::RocCurve(pos, neg), eval::Auroc(pos, neg)});
      }
      BULWARK_RETURN_IF_ERROR(eval::WriteRocSvg(*path, "ROC: " + attack, series));
    }
    return absl::OkStatus();
  }

  attack::PoisoningEvalConfig config_;
  std::string corpora_dir_;
  bool no_synonyms_ = false;
};

}  // namespace

std::unique_ptr<EvalSubcommand> MakeEvalPoisoningCommand() {
  return std::make_unique<EvalPoisoningCommand>();
}

}  // namespace bulwark::cli
