// The Consistent Minority attack (SMSR, "Consistent Minority Effect"): an authenticated writer
// stores t identical copies of one malicious claim. In smoothed retrieval every run whose subset
// holds a copy answers with the same string, while the clean runs answer correctly in different
// words; a plurality vote over raw strings (eval::StringVote) then elects the malicious answer
// even when it came from a minority of the runs. The deployed verdict/equivalence aggregation
// (AggregateByEquivalence) groups the correct answers and is not fooled.
// src/eval/consistent_minority_test.cc checks the effect for t = 1; this attack generalizes the
// injection to t copies and measures both aggregations over many seeds.
#pragma once

#include <absl/status/statusor.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "eval/oracle_judge.h"
#include "smoothing/smoother.h"
#include "store/memory_store.h"

namespace bulwark::attack {

// t identical entries of `claim` (metadata {"attack": "consistent_minority"}). InvalidArgument
// unless 1 <= t <= 100 and the claim is non-empty.
[[nodiscard]] absl::StatusOr<std::vector<NewEntry>> ConsistentMinorityEntries(std::string_view claim, int t);

struct ConsistentMinorityOptions {
  SmoothingOptions smoothing{.m = 12, .k = 5, .nruns = 5};
  int trials = 200;  // smoothing seeds, 1 .. 100000
  uint64_t seed = 0;
};

struct ConsistentMinorityOutcome {
  int trials = 0;
  double string_vote_asr = 0;    // trials whose string-vote winner the oracle judges malicious
  double equivalence_asr = 0;    // trials whose equivalence majority is malicious
  int minority_wins = 0;         // string vote malicious although malicious runs < nruns / 2
  int poison_in_pool = 0;        // pool entries with an "attack" metadata field (t)
  double certificate_delta = 1;  // delta(m, k, t, nruns) of the smoothed answers (1 when t = 0)
};

// Over-fetches the pool for `question` once (Search k = m), then runs the smoother with the
// extractive responder and the embedding-equivalence judge for `trials` seeds and scores both
// aggregations with `oracle`. Errors: bad options, Search, smoother.
[[nodiscard]] absl::StatusOr<ConsistentMinorityOutcome> MeasureConsistentMinority(
    MemoryStore& store, std::string_view name_space, std::string_view question,
    const eval::OracleJudge& oracle, const ConsistentMinorityOptions& options);

}  // namespace bulwark::attack
