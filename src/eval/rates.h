// Rates reported by the evaluation commands (ASR-R, ASR-A, ASR-T, TPR, FPR, utility): a count of
// successes out of trials with its Clopper–Pearson interval, so every table cell can be traced
// back to plain counts.
//   ASR-R: a poison entry is in the top-k of a targeted query;  ASR-A: the answer is the
//   attacker's;  ASR-T: the agent takes the attacker's action (MemSAD Sec. 6 / AgentPoison).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>

#include "eval/binomial.h"

namespace bulwark::eval {

struct Rate {
  int64_t successes = 0;
  int64_t trials = 0;

  double value() const {
    return trials > 0 ? static_cast<double>(successes) / static_cast<double>(trials) : 0.0;
  }
  Interval ci(double confidence = 0.95) const { return ClopperPearson(successes, trials, confidence); }
  void Add(bool success) {
    ++trials;
    if (success) ++successes;
  }
};

// {"value", "successes", "trials", "ci95": [lo, hi]}
inline nlohmann::json ToJson(const Rate& rate) {
  const Interval ci = rate.ci();
  return {{"value", rate.value()},
          {"successes", rate.successes},
          {"trials", rate.trials},
          {"ci95", {ci.lo, ci.hi}}};
}

}  // namespace bulwark::eval
