// `bulwark-lab eval gate` (issue #6; QOE paper, DESIGN 4.6): how well the query OOD gate separates
// triggered queries from benign ones, and what each gate mode does to retrieval poisoning
// (eval/experiments/gate_eval.h describes the protocol). Data: benign queries
// (data/corpora/benign_queries.jsonl), victim queries (victim_queries.jsonl), each victim query
// followed by its topic's trigger, and --memory-count benign memories (benign_memories.jsonl).
// --triggers optimized (default: AgentPoison's, one per victim topic) | fixed (four strings).
#include <absl/strings/str_cat.h>

#include <fstream>

#include "cli/eval_commands.h"
#include "cli/jsonl_import.h"
#include "core/status_macros.h"
#include "eval/experiments/gate_eval.h"
#include "eval/roc_svg.h"

namespace bulwark::cli {
namespace {

absl::StatusOr<std::vector<nlohmann::json>> ReadJsonl(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::vector<nlohmann::json> out;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object())
      return absl::InvalidArgumentError(absl::StrCat(path, ": line ", number, ": not a JSON object"));
    out.push_back(std::move(j));
  }
  return out;
}

class EvalGateCommand : public EvalSubcommand {
 public:
  std::string name() const override { return "gate"; }
  std::string description() const override {
    return "query OOD gate: AUROC and FPR at 99% TPR per score on held-out queries; ASR under "
           "off/escalate/reject/strip";
  }
  void AddFlags(CLI::App* sub) override {
    sub->add_option("--benign-queries", benign_path_, "default data/corpora/benign_queries.jsonl");
    sub->add_option("--victim-queries", victim_path_, "default data/corpora/victim_queries.jsonl");
    sub->add_option("--memories", memories_path_,
                    "benign memories (default data/corpora/benign_memories.jsonl)");
    sub->add_option("--memory-count", memory_count_, "benign memories in the store")
        ->capture_default_str()
        ->check(CLI::Range(10, 100000));
    sub->add_option("--target-fpr", target_fpr_, "gate threshold's benign flag rate")
        ->capture_default_str()
        ->check(CLI::Range(0.001, 0.5));
    sub->add_option("--triggers", triggers_, "optimized (AgentPoison, one per topic) | fixed (four strings)")
        ->capture_default_str()
        ->check(CLI::IsMember({"optimized", "fixed"}));
    sub->add_option("--uniqueness-weight", uniqueness_weight_,
                    "optimized triggers: weight of AgentPoison's uniqueness term (lower evades the gate)")
        ->capture_default_str()
        ->check(CLI::Range(0.0, 10.0));
    sub->add_flag(
        "--held-out-triggers", held_out_triggers_,
        "split the victim topics by trigger: the held-out queries carry triggers the gate never saw");
    sub->add_option("-k", k_, "hits per query")->capture_default_str()->check(CLI::Range(1, 50));
  }

  int Run(const EvalContext& ctx) override {
    auto queries = ReadQueries();
    if (!queries.ok()) return ctx.Fail(queries.status());
    auto memories = ReadMemories();
    if (!memories.ok()) return ctx.Fail(memories.status());
    auto created = ctx.CreateStore(ctx.env().store_options);
    if (!created.ok()) return ctx.Fail(created.status());
    const eval::GateEvalConfig config{.name_space = ctx.env().name_space,
                                      .seed = ctx.flags().seed,
                                      .seeds = ctx.Seeds(3),
                                      .target_fpr = target_fpr_,
                                      .k = k_,
                                      .optimized_triggers = triggers_ == "optimized",
                                      .uniqueness_weight = uniqueness_weight_,
                                      .held_out_triggers = held_out_triggers_};
    EvalProgress progress = ctx.Progress("eval gate", static_cast<size_t>(config.seeds));
    auto result = eval::RunGateEval(*created->store, created->dir, *memories, *queries, config,
                                    [&progress] { progress.Step(); });
    if (!result.ok()) return ctx.Fail(result.status());
    nlohmann::json json = eval::ToJson(*result, *queries, config);
    json["plots"] = nlohmann::json::array();
    if (auto path = ctx.PlotPath("gate_roc")) {
      if (auto s = eval::WriteRocSvg(*path, "bulwark-lab eval gate: held-out ROC per score (first seed)",
                                     result->first_seed_curves);
          !s.ok()) {
        return ctx.Fail(s);
      }
      json["plots"].push_back(path->string());
    }
    return ctx.Finish(eval::ToMarkdown(*result, *queries, config), json);
  }

 private:
  absl::StatusOr<eval::GateEvalQueries> ReadQueries() const {
    BULWARK_ASSIGN_OR_RETURN(
        std::vector<nlohmann::json> benign_rows,
        ReadJsonl(benign_path_.empty() ? DefaultCorpusPath("benign_queries.jsonl") : benign_path_));
    BULWARK_ASSIGN_OR_RETURN(
        std::vector<nlohmann::json> victim_rows,
        ReadJsonl(victim_path_.empty() ? DefaultCorpusPath("victim_queries.jsonl") : victim_path_));
    return eval::ParseGateQueries(benign_rows, victim_rows);
  }

  // The first --memory-count benign memories.
  absl::StatusOr<std::vector<NewEntry>> ReadMemories() const {
    const std::string memories_path =
        memories_path_.empty() ? DefaultCorpusPath("benign_memories.jsonl") : memories_path_;
    std::ifstream memories_in(memories_path);
    if (!memories_in) return absl::NotFoundError(absl::StrCat("cannot read ", memories_path));
    BULWARK_ASSIGN_OR_RETURN(std::vector<NewEntry> memories, ParseImportJsonl(memories_in, {}));
    if (memories.size() > static_cast<size_t>(memory_count_)) memories.resize(memory_count_);
    return memories;
  }

  std::string benign_path_, victim_path_, memories_path_;
  int memory_count_ = 400;
  double target_fpr_ = 0.05;
  int k_ = 5;
  bool held_out_triggers_ = false;
  std::string triggers_ = "optimized";
  double uniqueness_weight_ = 0.5;
};

}  // namespace

std::unique_ptr<EvalSubcommand> MakeEvalGateCommand() { return std::make_unique<EvalGateCommand>(); }

}  // namespace bulwark::cli
