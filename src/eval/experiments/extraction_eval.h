// The extraction experiment of `bulwark-lab eval extraction` (issue #13 point 5; a reduced MemPot
// Tables 2-6 in our setting), built on the session experiment (session_eval.h):
//
//   1. A store of the first N shipped memories (data/corpora/benign_memories.jsonl; N = 300, the
//      paper's internal-memory scale), pots fitted by BuildDefendedStore on the built-in attacks'
//      logs (the eval's --seed) and benign queries.
//   2. Evaluation sessions generated with another seed against that store (pots are invisible,
//      so the hits equal an undefended store's): `attack_sessions` of 64 queries per attack family
//      and `benign_sessions` benign-simulator sessions of 8 and of 64 queries.
//   3. Rows attack x estimator (count_calibrated, count = Eq. 17, similarity = Eq. 18; a name with
//      "+intent" fuses the extraction-intent grammar's per-query LLR into the SPRT) against the
//      benign sessions of each length, in-family (the fit saw every family) and, with
//      leave_one_out, held-out (a store whose pots were fitted without that family).
//
//   4. Pot-free baselines on the in-family replay's sessions (protocol "pot-free"; no fit, so
//      nothing is held out): distinct memories returned per query, and a keyword filter (the
//      fraction of a session's queries holding an extraction keyword); session scores only.
//
//   5. With external_memories > 0, the external store (MemPot's "external" setting, a general-
//      knowledge corpus): the glosses of that many WordNet noun synsets (every n-th one, as
//      "lemma: gloss"), pots fitted on every family, its own evaluation sessions (generated against
//      it), rows in-family only (protocol "external"), estimators as above.
//
// Not here (doc/REPRODUCTION.md): a sequential pot-free
// detector with a block decision, the QOE per-query baseline, Eq. 19, several seeds, plots. Evaluation-only
// code: linked by bulwark-lab, never by the product binary.
#pragma once

#include <absl/status/statusor.h>

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "eval/experiments/session_eval.h"

namespace bulwark::eval {

struct ExtractionEvalConfig {
  std::vector<NewEntry> memories;  // the store's memories
  int attack_sessions = 17;        // per family (6 families: 102), 64 queries each; 1 .. 10000
  // Per length (8 and 64: 800 in all); 1 .. 10000. 400 so that 0 blocks shows an FPR at the block
  // threshold <= 1 % per length (Clopper-Pearson 95 % upper bound 0.0092; 300 would give 0.0122).
  int benign_sessions = 400;
  uint64_t session_seed = 1;  // of the evaluation sessions (not the fit's)
  // "+intent" after a name adds the extraction-intent grammar's evidence (intent_evidence.h),
  // "+relevance" the relevance evidence (relevance_evidence.h).
  std::vector<std::string> estimators = {"count_calibrated+intent", "count_calibrated", "count+intent",
                                         "similarity"};
  bool leave_one_out = true;
  int external_memories = 10000;  // WordNet glosses of the external store; 0: none; <= 50000
  SessionEvalConfig base;         // fit, k, k_obs, SPRT; base.fit.seed seeds the fit's generators
  StoreOptions store_options;
};

struct ExtractionRow {
  std::string protocol;  // "in-family" | "held-out" | "pot-free" | "external"
  std::string attack;
  std::string estimator;
  int benign_length = 0;  // 8 or 64
  SessionMetrics metrics;
  double tpr_at_10fpr = 0;
};

struct ExtractionEvalResult {
  std::vector<ExtractionRow> rows;
  // The defended replay of the benign sessions (guard, session bookkeeping, defended read path)
  // minus plain searches of the same queries, wall clock per query: more than the monitor's cost
  // (bench/honeypot_guard_bench measures the monitor alone).
  double added_us_per_search = 0;
  size_t pots = 0;
  size_t external_memories = 0;  // memories of the external store (0: not run)
  size_t external_pots = 0;
  double seconds = 0;
  // With config.base.trace: one JSON object per replayed session and estimator, {"protocol",
  // "estimator", "session", "style", "label", "detected_at", "rounds": [[pots, llr, text_llr,
  // session statistic], ...]} (for reading why a session did or did not block).
  std::vector<nlohmann::json> traces;
  // With a "+coverage" estimator: each store's coverage table (CoverageCalibration::ToJson), keyed
  // "in-family", "held-out NAME" or "external".
  nlohmann::json coverage_calibrations = nlohmann::json::object();
};

// Runs the experiment, creating stores in subdirectories of `dir`. `progress` gets a stage name.
// Errors: InvalidArgument for a bad config; the errors of the stores, generators, fit and replay.
[[nodiscard]] absl::StatusOr<ExtractionEvalResult> RunExtractionEval(
    const ExtractionEvalConfig& config, const std::filesystem::path& dir,
    const std::function<void(std::string_view)>& progress = {});

// {"rows": [{"protocol", "attack", "estimator", "benign_length", "auroc", "tpr_at_1fpr",
// "tpr_at_10fpr", "fpr_at_block", "fpr_at_block_ci95", "fdt_mean", "fdt_median",
// "detected_fraction", "leakage"}], "added_us_per_search", "pots", "external_memories",
// "external_pots", "seconds", "coverage_calibrations"}.
nlohmann::json ToJson(const ExtractionEvalResult& result);
std::string ToMarkdown(const ExtractionEvalResult& result);

}  // namespace bulwark::eval
