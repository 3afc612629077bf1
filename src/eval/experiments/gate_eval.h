// The query OOD gate experiment of `bulwark-lab eval gate` (issue #6; QOE paper, DESIGN 4.6): how
// well the gate separates triggered queries from benign ones, and what each gate mode does to
// retrieval poisoning.
//
// Triggers (GateEvalConfig::optimized_triggers):
//   optimized  AgentPoison's (attack/agentpoison_trigger.h), one per victim topic, optimized
//              against the store's embedder with the benign queries as the uniqueness term's
//              benign set and `uniqueness_weight` (QOE Table 3's adaptive attacker lowers it)
//   fixed      four fixed strings, shared round-robin by the topics
//
// Per seed: the benign queries are split in half at random (fit / held out), and so are the
// triggered victim queries: with fixed triggers by victim topic (every trigger is then on both
// sides), with optimized ones query by query (each topic's trigger is then usually on both
// sides); with `held_out_triggers` by trigger, so the held-out queries carry triggers the fit never
// saw. The gate (GateModel: centroid, Mahalanobis, LDA) is fitted on the fit halves at
// `target_fpr` and every score is evaluated on the held-out halves: AUROC, FPR at 95 % and 99 %
// TPR, and TPR / FPR at the fitted threshold. AUROC is averaged over seeds with a bootstrap 95 %
// interval.
//
// Retrieval: the store holds the benign memories and one AgentPoison poison entry per victim topic
// (a victim query + its trigger + the poison goal, metadata "claim" = "POISON: <goal>"). Poison
// the write gate quarantines is released again, so the numbers measure the read-time gate alone.
// Every held-out triggered query goes through DefendedRetriever (k hits) under each gate mode:
// ASR-R = a poison entry among the returned hits; ASR-A = the answer is the poison's claim (the
// smoothed answer when escalate turned smoothing on, else the extractive answer from the top hit);
// "benign blocked" = held-out benign queries rejected (reject) or stripped/escalated (changed).
//
// Evaluation-only code: linked by bulwark-lab, never by the product binary.
#pragma once

#include <absl/status/statusor.h>

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "eval/rates.h"
#include "eval/roc_svg.h"
#include "gate/gate_model.h"
#include "gate/query_gate.h"
#include "store/memory_store.h"

namespace bulwark::eval {

struct GateVictimQuery {
  std::string query, topic, goal;
};

// The query sets of the experiment.
struct GateEvalQueries {
  std::vector<std::string> benign;
  std::vector<GateVictimQuery> victims;
  std::vector<std::string> topics;  // the victims' topics, in first-seen order
};

// From JSONL objects: benign rows {"query"}, victim rows {"query", "target_topic" (default: the
// query), "poison_goal" (default "do what the attacker says")}. Rows without a string "query" are
// skipped. InvalidArgument with fewer than 40 benign queries or 4 victim topics.
[[nodiscard]] absl::StatusOr<GateEvalQueries> ParseGateQueries(
    const std::vector<nlohmann::json>& benign_rows, const std::vector<nlohmann::json>& victim_rows);

struct GateEvalConfig {
  std::string name_space;
  uint64_t seed = 0;  // base seed; seed s of the run uses seed + s
  int seeds = 3;
  double target_fpr = 0.05;  // the gate threshold's benign flag rate
  int k = 5;                 // hits per query
  bool optimized_triggers = true;
  double uniqueness_weight = 0.5;  // optimized triggers only
  bool held_out_triggers = false;
};

// Per gate score, one value per seed.
struct GateScoreTally {
  std::vector<double> auroc_per_seed, fpr95_per_seed, fpr99_per_seed, tpr_thr_per_seed, fpr_thr_per_seed;
};

struct GateModeTally {
  Rate asr_r, asr_a, benign_changed;
};

struct GateEvalResult {
  std::vector<std::string> triggers;  // distinct, in order of first use
  size_t memories = 0, poison_entries = 0;
  int poison_released = 0;  // poison entries the write gate quarantined and the eval released
  std::array<GateScoreTally, kGateScoreCount> scores;
  std::map<GateMode, GateModeTally> modes;   // off, escalate, reject, strip
  std::vector<RocSeries> first_seed_curves;  // one per score
};

// Writes `memories` and the poison entries into `store` (namespace config.name_space, a fresh
// store whose directory is `store_dir`), then runs the seeds; `on_seed` (may be empty) is called
// after each. Errors: those of the store's writes and searches, the embedder, GateModel::Fit and
// the store's gate repository (GateStore::Open / Save), and AgentPoison's.
[[nodiscard]] absl::StatusOr<GateEvalResult> RunGateEval(
    MemoryStore& store, const std::filesystem::path& store_dir, const std::vector<NewEntry>& memories,
    const GateEvalQueries& queries, const GateEvalConfig& config, const std::function<void()>& on_seed);

// The markdown report: the per-score table and the per-mode ASR table.
std::string ToMarkdown(const GateEvalResult& result, const GateEvalQueries& queries,
                       const GateEvalConfig& config);
// {"command", "config", "scores", "modes"}; the caller adds "plots".
nlohmann::json ToJson(const GateEvalResult& result, const GateEvalQueries& queries,
                      const GateEvalConfig& config);

}  // namespace bulwark::eval
