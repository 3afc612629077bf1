// The write-time detector experiment of `bulwark-lab eval detect` (issue #6): the write-time
// detectors on user-supplied data, through the store's real write path.
//
// Protocol (the order matters, and is what a deployment sees):
//   1. a fresh store;
//   2. the reference entries are written (they are the store's existing memories);
//   3. every benign query, then every poison entry's victim query (with " " + trigger appended
//      when a trigger is given: the attacker's triggered query), goes through MemoryStore::Search,
//      so together they form the namespace's MemSAD query history H. The victim queries are part
//      of H because the attacker targets queries the victim really asks;
//   4. MemoryStore::Calibrate with the reference texts (N = all of them) against that history; with
//      a trigger, triggered calibration (MemSAD App. D): H is replaced by the same queries, each
//      followed by the trigger;
//   5. the benign entries, then the poison entries, are written with AddBatch; each entry's typed
//      gate outcome (detect/screened_outcomes.h: per detector score and flag) gives the
//      per-detector decision, its flag the composite (logical OR).
// TPR = flagged poison / poison and FPR = flagged benign / benign, with Clopper–Pearson 95 %
// intervals; AUROC from the detector scores oriented so higher is more suspicious (the
// watermark's z-score is negated); the composite AUROC is that of its 0/1 decision. The
// experiment has no randomness.
//
// Evaluation-only code: linked by bulwark-lab, never by the product binary.
#pragma once

#include <absl/status/statusor.h>

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "eval/rates.h"
#include "eval/roc_svg.h"
#include "store/memory_store.h"

namespace bulwark::eval {

struct DetectEvalInput {
  std::string name_space;
  std::vector<NewEntry> reference, benign, poison;
  std::vector<std::string> queries;         // benign queries: the query history
  std::vector<std::string> victim_queries;  // the poison's victim queries, in file order
  std::string trigger;                      // empty: no trigger, untriggered calibration
};

// Per-detector tallies over the written entries ("composite": the gate's flag or quarantine).
struct DetectorTally {
  Rate tpr, fpr;
  std::vector<double> positive_scores, negative_scores;  // oriented: higher is more suspicious
  bool calibrated = true;
};

struct DetectEvalResult {
  std::map<std::string, DetectorTally> tallies;  // by detector name
  nlohmann::json calibration;                    // MemoryStore::Calibrate's summary
  size_t issued_queries = 0;                     // queries + victim queries
};

// The number of `on_step` calls RunDetectEval makes.
size_t DetectEvalSteps(const DetectEvalInput& input);

// Runs the protocol above on `store` (fresh); `on_step` (may be empty) is called after each
// write batch, each query and the calibration. Errors: those of the store's writes, searches and
// calibration.
[[nodiscard]] absl::StatusOr<DetectEvalResult> RunDetectEval(MemoryStore& store, const DetectEvalInput& input,
                                                             const std::function<void()>& on_step);

struct DetectReport {
  std::string markdown;           // the header line and the per-detector table
  nlohmann::json detectors;       // per detector name ("composite" for the OR)
  std::vector<RocSeries> curves;  // one per table row
};

DetectReport ReportDetectEval(const DetectEvalResult& result, const DetectEvalInput& input);

}  // namespace bulwark::eval
