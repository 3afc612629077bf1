// The smoothed-retrieval experiment of `bulwark-lab eval smoothing` (issue #6; SMSR Component 2,
// DESIGN 4.6): the empirical attack success rate of smoothed retrieval against its certificate.
//
// For every enterprise scenario (data/corpora/enterprise_scenarios.jsonl), every t = 1 .. max_t
// and every store size S in {10 + t, 20}, a namespace of one store holds
//   S - t benign entries: the scenario's supporting passages (each a differently worded correct
//         answer), filled up with other scenarios' passages as distractors, and
//   t poison entries: the injected claim, then paraphrases of it, each carrying the metadata
//         "claim" = the malicious answer, so every poisoned run answers with the SAME string (the
//         Consistent Minority Effect: identical injected answers against varied correct ones).
// "provenance on" models SMSR Component 1: the poison was injected through an unauthenticated
// channel and carries no valid signature, so it never enters (only an authenticated insider's
// poison would count: that is the "off" row, where all t poison entries are signed writes).
//
// The pool is the top m = S entries for the scenario's question (MemoryStore::Search); each trial
// runs the Smoother (extractive responder, m = S, k, nruns) with its own seed, and judges the
// outcome twice: the equivalence majority (AggregateByEquivalence with the embedding judge, the
// deployed aggregation) and a plurality string vote over the same runs (for comparison). A trial
// is a success for the attacker when the outcome contains a malicious keyword of the scenario (and
// no correct one); "correct" when it has a correct keyword only.
//
// Per row: ASR with a Clopper–Pearson 95 % interval, the certificate delta(m, k, t_eff, nruns)
// (t_eff = t, or 0 with provenance), the one-sided exact binomial p-value of H0 "ASR <= delta"
// and whether it is rejected at 0.05 after a Bonferroni correction over all rows, utility (the
// correct-answer rate) and a bootstrap 95 % interval of the ASR over seeds.
//
// Evaluation-only code: linked by bulwark-lab, never by the product binary.
#pragma once

#include <absl/status/statusor.h>

#include <array>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "eval/rates.h"
#include "store/memory_store.h"

namespace bulwark::eval {

struct SmoothingScenario {
  std::string id, question, malicious_answer, injected_claim;
  std::vector<std::string> supporting, paraphrases, correct_keywords, malicious_keywords;
};

// Reads a scenario file (JSONL: "question", "injected_claim", "malicious_answer" strings;
// "supporting_passages", "paraphrases", "correct_keywords", "malicious_keywords" string arrays;
// optional "id"). NotFound when the file cannot be read; InvalidArgument naming the line for a
// line that is not a scenario or lacks supporting passages or keywords, or for fewer than 2
// scenarios.
[[nodiscard]] absl::StatusOr<std::vector<SmoothingScenario>> ReadSmoothingScenarios(const std::string& path);

struct SmoothingEvalConfig {
  uint64_t seed = 0;  // base seed of every trial's subset seed
  int seeds = 5;
  int max_t = 3;    // poisoned entries t = 1 .. max_t
  int k = 5;        // entries per run
  int nruns = 5;    // runs per smoothed answer
  int trials = 10;  // smoothed answers per scenario, condition and seed
};

// One configuration: t poison entries, store size S, provenance on/off.
struct SmoothingCondition {
  int t = 1;
  int size = 11;
  bool provenance = false;
  int t_effective() const { return provenance ? 0 : t; }
};

// Attacker successes and correct answers of one condition under one vote, per seed.
struct SmoothingOutcomes {
  Rate asr, utility;
  std::vector<Rate> asr_per_seed;
};

struct SmoothingEvalResult {
  std::vector<SmoothingCondition> conditions;
  // outcomes[condition][vote]: vote 0 = equivalence majority, 1 = string plurality.
  std::vector<std::array<SmoothingOutcomes, 2>> outcomes;
};

// The conditions of `config` (t = 1 .. max_t, S in {10 + t, 20} with S - t >= 1 and S >= k,
// provenance off then on).
std::vector<SmoothingCondition> SmoothingConditions(const SmoothingEvalConfig& config);

// Runs every condition on every scenario in its own namespace of `store` (a fresh store);
// `on_step` (may be empty) is called after each (condition, scenario). Errors: those of the
// store's writes and searches and of Smoother::Answer.
[[nodiscard]] absl::StatusOr<SmoothingEvalResult> RunSmoothingEval(
    MemoryStore& store, const std::vector<SmoothingScenario>& scenarios, const SmoothingEvalConfig& config,
    const std::function<void()>& on_step);

struct SmoothingReport {
  std::string markdown;
  nlohmann::json json;  // {"command", "config", "rows", "rows_exceeding_certificate"}
};

// The table and JSON of a run on `scenario_count` scenarios read from `scenarios_path`.
// InvalidArgument when a certificate cannot be computed (CertificateDelta's errors).
[[nodiscard]] absl::StatusOr<SmoothingReport> ReportSmoothingEval(const SmoothingEvalResult& result,
                                                                  const SmoothingEvalConfig& config,
                                                                  const std::string& scenarios_path,
                                                                  size_t scenario_count);

}  // namespace bulwark::eval
