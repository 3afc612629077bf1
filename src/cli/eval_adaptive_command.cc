// `bulwark-lab eval adaptive` (issue #6): the white-box synonym-substitution attacker of MemSAD
// Sec. 6.4 (Table 4) against memsad and MemSAD+ (Table 18). For every seed and attack
// (AgentPoison, AgentPoison against triggered calibration, MINJA, InjecMEM by default;
// attack/poisoning_eval.h's protocol), each poison is
// rewritten by greedy WordNet substitution to minimize the targeted detectors' scores while it
// stays in its victims' top k (attack/synonym_attack.h), then written to a namespace prepared
// like the original one. Reported: TPR before and after, evasion rate (flagged before, not
// after), ASR-R before and after and its change, substitutions per entry, and the mean change of
// the poison's similarity to its victim queries.
//
// With the default embedder (lexical with WordNet canonicalization) same-sense synonyms share
// features, so substitutions cannot move embedding-only scores; --no-synonyms shows the setting
// of the paper's neural encoders, where they do.
#include <sstream>

#include "attack/adaptive_eval.h"
#include "cli/eval_commands.h"

namespace bulwark::cli {
namespace {

class EvalAdaptiveCommand final : public EvalSubcommand {
 public:
  std::string name() const override { return "adaptive"; }
  std::string description() const override {
    return "synonym-substitution adaptive attacker vs memsad and memsad_plus: evasion, delta ASR-R, "
           "subs/entry";
  }
  void AddFlags(CLI::App* sub) override {
    sub->add_option("--corpora", corpora_dir_, "directory of the evaluation corpora (default: data/corpora)");
    sub->add_option("--memories", config_.base.memories, "benign memories per namespace")
        ->check(CLI::Range(1, 1400))
        ->capture_default_str();
    sub->add_option("--history", config_.base.history_queries, "benign queries in H")
        ->check(CLI::Range(1, 350))
        ->capture_default_str();
    sub->add_option("--reference", config_.base.reference, "benign reference memories N")
        ->check(CLI::Range(2, 280))
        ->capture_default_str();
    sub->add_option("--topics", config_.base.topics, "victim topics per seed")
        ->check(CLI::Range(1, 42))
        ->capture_default_str();
    sub->add_option("-k,--k", config_.base.k, "retrieval depth (top-k constraint)")
        ->check(CLI::Range(1, 100))
        ->capture_default_str();
    sub->add_option("--max-substitutions", config_.max_substitutions, "r: substitutions per entry at most")
        ->check(CLI::Range(0, 64))
        ->capture_default_str();
    sub->add_option("--attacks", config_.base.attacks,
                    "attacks to run (agentpoison_triggered: AgentPoison against triggered calibration, one "
                    "namespace per victim topic)")
        ->check(CLI::IsMember(
            std::vector<std::string>{"agentpoison", "agentpoison_triggered", "minja", "injecmem"}));
    sub->add_option("--targets", config_.targets, "detector sets to evade")
        ->check(CLI::IsMember(std::vector<std::string>{"memsad", "memsad_plus"}));
    sub->add_flag("--no-synonyms", no_synonyms_, "lexical embedder without WordNet canonicalization");
  }
  int Run(const EvalContext& ctx) override {
    config_.base.synonyms = !no_synonyms_;
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
    EvalProgress progress = ctx.Progress(
        "adaptive", static_cast<size_t>(seeds) * config_.base.attacks.size() * (1 + config_.targets.size()));
    for (int i = 0; i < seeds; ++i) {
      auto seed = attack::RunAdaptiveSeed(*corpora, config_, ctx.flags().seed + static_cast<uint64_t>(i),
                                          tmp->path(), [&](size_t, size_t) { progress.Step(); });
      if (!seed.ok()) return ctx.Fail(seed.status());
      results.push_back(*std::move(seed));
    }
    const attack::PoisoningSummary summary = attack::SummarizeAdaptive(results);
    nlohmann::json json = summary.json;
    json["config"] = {{"memories", config_.base.memories},
                      {"topics", config_.base.topics},
                      {"k", config_.base.k},
                      {"max_substitutions", config_.max_substitutions},
                      {"synonyms", config_.base.synonyms},
                      {"seed", ctx.flags().seed},
                      {"seeds", seeds},
                      {"attacks", config_.base.attacks},
                      {"targets", config_.targets}};
    std::ostringstream md;
    md << "Adaptive synonym attacker: " << seeds << " seed(s), embedder "
       << (config_.base.synonyms ? "lexical+WordNet" : "lexical (no synonyms)") << ", k = " << config_.base.k
       << "\n\n"
       << summary.markdown;
    return ctx.Finish(md.str(), json);
  }

 private:
  static constexpr int kDefaultSeeds = 3;
  attack::AdaptiveEvalConfig config_{.base = DefaultBase()};
  std::string corpora_dir_;
  bool no_synonyms_ = false;

  static attack::PoisoningEvalConfig DefaultBase() {
    attack::PoisoningEvalConfig base;
    base.attacks = {"agentpoison", "agentpoison_triggered", "minja", "injecmem"};
    return base;
  }
};

}  // namespace

std::unique_ptr<EvalSubcommand> MakeEvalAdaptiveCommand() { return std::make_unique<EvalAdaptiveCommand>(); }

}  // namespace bulwark::cli
