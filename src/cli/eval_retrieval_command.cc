// `bulwark-lab eval retrieval` (issue #19, point 1): retrieval quality on labelled queries.
// Builds a store (in a temporary directory unless --store is given) through the normal write path
// with the default embedder (lexical + WordNet synonyms) unless --embedder is given, writes the
// --memories file and the first N lines of the --distractors file, runs every query of the
// --labels file through MemoryStore::Search (record_query = false), and prints recall@k, MRR and
// nDCG@10 with bootstrap 95 % intervals, overall and per label group
// (eval/experiments/retrieval_eval.h). --ranking bm25|rrf ranks with an in-memory BM25 index, or
// fuses it with the store's ranking, in the evaluation only (doc/retrieval.md).
// data/retrieval/README.md describes the labelled sets.
#include <absl/strings/str_cat.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <sstream>

#include "cli/eval_commands.h"
#include "cli/jsonl_import.h"
#include "core/status_macros.h"
#include "eval/experiments/retrieval_eval.h"

namespace bulwark::cli {
namespace {

absl::StatusOr<std::vector<NewEntry>> ReadRetrievalEntries(const std::string& path, const std::string& what) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open the ", what, " file ", path));
  auto entries = ParseImportJsonl(in, ImportLimits{});
  if (!entries.ok()) return absl::InvalidArgumentError(absl::StrCat(path, ": ", entries.status().message()));
  return entries;
}

absl::StatusOr<std::vector<eval::LabelledQuery>> ReadRetrievalLabels(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open the labels file ", path));
  auto labels = eval::ParseRetrievalLabels(in);
  if (!labels.ok()) return absl::InvalidArgumentError(absl::StrCat(path, ": ", labels.status().message()));
  return labels;
}

class EvalRetrievalCommand final : public EvalSubcommand {
 public:
  std::string name() const override { return "retrieval"; }
  std::string description() const override {
    return "retrieval quality on labelled queries: recall@k (any relevant in the top k), MRR, nDCG@10 with "
           "bootstrap CIs, overall and per group";
  }
  void AddFlags(CLI::App* sub) override {
    sub->add_option("--memories", memories_file_, "JSONL memories (import format) the labels refer to")
        ->required();
    sub->add_option("--labels", labels_file_,
                    "JSONL labels: {\"query\", \"relevant\": [memory text, ...], \"group\"}")
        ->required();
    sub->add_option("--distractors", distractors_file_, "JSONL distractor memories (import format)");
    auto* count = sub->add_option("--distractor-count", distractor_count_,
                                  "use only the first N distractors (default: all)")
                      ->check(CLI::Range(0, 100'000));
    sub->add_option("--store-size", store_size_,
                    "use the first (N - memories) distractors, for a store of exactly N entries")
        ->check(CLI::Range(1, 200'000))
        ->excludes(count);
    sub->add_option("--k-list", config_.recall_ks, "recall@k for these k (default 1 5)")
        ->check(CLI::Range(1, 100));
    sub->add_option("--embedder", embedder_json_,
                    R"(embedder configuration JSON (default {"kind":"lexical"}))");
    sub->add_option(
           "--ranking", ranking_,
           "vector (MemoryStore::Search), bm25 (in-memory BM25 over the lexical embedder's tokens) or rrf "
           "(reciprocal-rank fusion of both, k = 60) in the eval; hybrid: the store's hybrid ranking")
        ->check(CLI::IsMember({"vector", "bm25", "rrf", "hybrid"}))
        ->capture_default_str();
    sub->add_option("--retrieval-config", retrieval_json_,
                    "the store's retrieval_config JSON (hybrid ranking's constants; doc/retrieval.md)");
    sub->add_option("--resamples", config_.bootstrap.resamples, "bootstrap resamples")
        ->check(CLI::Range(1, 100'000))
        ->capture_default_str();
  }
  int Run(const EvalContext& ctx) override {
    auto memories = ReadRetrievalEntries(memories_file_, "memories");
    if (!memories.ok()) return ctx.Fail(memories.status());
    auto labels = ReadRetrievalLabels(labels_file_);
    if (!labels.ok()) return ctx.Fail(labels.status());
    auto distractors = ReadDistractors(memories->size());
    if (!distractors.ok()) return ctx.Fail(distractors.status());
    auto options = Options(ctx);
    if (!options.ok()) return ctx.Fail(options.status());
    auto created = ctx.CreateStore(*options);
    if (!created.ok()) return ctx.Fail(created.status());
    std::unique_ptr<MemoryStore>* store = &created->store;
    config_.ranking = eval::ParseRanking(ranking_).value_or(eval::Ranking::kVector);
    if (config_.ranking == eval::Ranking::kBm25 || config_.ranking == eval::Ranking::kRrf) {
      auto tokenizer = Tokenizer(*options);
      if (!tokenizer.ok()) return ctx.Fail(tokenizer.status());
      tokenizer_ = *std::move(tokenizer);
      config_.tokenizer = tokenizer_.get();
    }
    config_.name_space = ctx.env().name_space;
    config_.bootstrap.seed = ctx.flags().seed;
    config_.depth =
        std::max(config_.ndcg_k, *std::max_element(config_.recall_ks.begin(), config_.recall_ks.end()));
    EvalProgress progress = ctx.Progress("retrieval", labels->size());
    auto result = eval::RunRetrievalEval(**store, *memories, *distractors, *labels, config_,
                                         [&](size_t, size_t) { progress.Step(); });
    if (!result.ok()) return ctx.Fail(result.status());
    nlohmann::json json = eval::ToJson(*result);
    json["config"] = {{"memories", memories_file_},
                      {"labels", labels_file_},
                      {"distractors", distractors_file_},
                      {"recall_ks", config_.recall_ks},
                      {"ndcg_k", config_.ndcg_k},
                      {"depth", config_.depth},
                      {"ranking", ranking_},
                      {"retrieval_config", retrieval_json_},
                      {"resamples", config_.bootstrap.resamples},
                      {"seed", ctx.flags().seed}};
    return ctx.Finish(eval::ToMarkdown(*result), json);
  }

 private:
  // The distractors to write: all, the first --distractor-count, or enough for --store-size.
  absl::StatusOr<std::vector<NewEntry>> ReadDistractors(size_t memories) const {
    std::optional<size_t> wanted = distractor_count_;
    if (store_size_) {
      if (*store_size_ < memories) {
        return absl::InvalidArgumentError(
            absl::StrCat("--store-size ", *store_size_, " is smaller than the ", memories, " memories"));
      }
      wanted = *store_size_ - memories;
    }
    if (distractors_file_.empty()) {
      if (wanted.value_or(0) > 0)
        return absl::InvalidArgumentError("distractors wanted but no --distractors file");
      return std::vector<NewEntry>{};
    }
    BULWARK_ASSIGN_OR_RETURN(std::vector<NewEntry> all,
                             ReadRetrievalEntries(distractors_file_, "distractors"));
    if (wanted) {
      if (*wanted > all.size()) {
        return absl::InvalidArgumentError(
            absl::StrCat(*wanted, " distractors wanted but ", distractors_file_, " has only ", all.size()));
      }
      all.resize(*wanted);
    }
    return all;
  }

  absl::StatusOr<StoreOptions> Options(const EvalContext& ctx) const {
    StoreOptions options = ctx.env().store_options;
    if (!embedder_json_.empty()) {
      nlohmann::json config = nlohmann::json::parse(embedder_json_, nullptr, /*allow_exceptions=*/false);
      if (config.is_discarded() || !config.is_object()) {
        return absl::InvalidArgumentError("--embedder must be a JSON object");
      }
      options.embedder_config = std::move(config);
    }
    if (!retrieval_json_.empty()) {
      nlohmann::json config = nlohmann::json::parse(retrieval_json_, nullptr, /*allow_exceptions=*/false);
      if (config.is_discarded() || !config.is_object()) {
        return absl::InvalidArgumentError("--retrieval-config must be a JSON object");
      }
      options.retrieval_config = std::move(config);
    }
    return options;
  }

  // BM25's tokenizer: the store's embedder configuration when it is lexical, else the default
  // lexical embedder (WordNet synonyms when the data is installed).
  static absl::StatusOr<std::unique_ptr<LexicalEmbedder>> Tokenizer(const StoreOptions& options) {
    const nlohmann::json& config = options.embedder_config;
    if (config.is_object() && config.value("kind", "") == "lexical")
      return LexicalEmbedder::FromConfig(config);
    return LexicalEmbedder::FromConfig({{"kind", "lexical"}});
  }

  std::string memories_file_, labels_file_, distractors_file_, embedder_json_, retrieval_json_,
      ranking_ = "vector";
  std::unique_ptr<LexicalEmbedder> tokenizer_;
  std::optional<size_t> distractor_count_, store_size_;
  eval::RetrievalEvalConfig config_;
};

}  // namespace

std::unique_ptr<EvalSubcommand> MakeEvalRetrievalCommand() {
  return std::make_unique<EvalRetrievalCommand>();
}

}  // namespace bulwark::cli
