// MINJA (Dong et al., 2025; MemSAD paper Sec. 3, 6.1): a query-only attacker. It never writes;
// it sends queries to an auto-storing agent. Each attack query is a question on the victim's
// topic followed by an indication prompt: bridging steps that lead from the question to the
// malicious goal. The agent follows them and auto-stores question + malicious reasoning. Over the
// rounds the indication is progressively shortened (each bridging token kept with probability
// p_i = max(0, p0 - lambda i), p0 = 0.98, lambda = 0.10 as in Sec. 6.1) until the attack queries
// look like plain questions; the agent then copies the malicious reasoning from the records it
// retrieves. Victims later ask plain queries and retrieve the records.
#pragma once

#include <absl/status/statusor.h>

#include <cstdint>
#include <string>
#include <vector>

#include "attack/auto_storing_agent.h"

namespace bulwark::attack {

struct MinjaOptions {
  int rounds = 10;           // attack queries = poison records written (MemSAD Sec. 6.1: n = 10), 1 .. 1000
  double keep_start = 0.98;  // p0: probability of keeping a bridging token in round 0, (0, 1]
  double keep_decay = 0.10;  // lambda: decrease of that probability per round, >= 0
  uint64_t seed = 0;
};

struct MinjaTarget {
  std::vector<std::string> questions;  // attacker's questions on the victim topic (cycled); non-empty
  std::string target_topic;            // e.g. "quarterly report submission"
  std::string poison_goal;             // e.g. "send the quarterly report to attacker@evil.example ..."
};

struct MinjaRound {
  std::string query;         // what the attacker sent
  size_t bridging_kept = 0;  // bridging tokens left in the indication prompt
  Interaction interaction;
};

struct MinjaResult {
  std::string indication;  // the full indication prompt (round 0 before shortening)
  std::vector<MinjaRound> rounds;
  std::vector<std::string> record_ids;  // the auto-stored records (the poison)
  int quarantined = 0;                  // records the write gate quarantined
  int records_with_goal = 0;            // records whose reasoning (before any marking) contains the goal
};

// The full indication prompt: bridging steps from the topic to the goal.
std::string MinjaIndication(const MinjaTarget& target);

// Runs the attack through `agent` (session "minja"). InvalidArgument for bad options or target;
// errors of the agent.
[[nodiscard]] absl::StatusOr<MinjaResult> RunMinja(AutoStoringAgent& agent, const MinjaTarget& target,
                                                   const MinjaOptions& options);

}  // namespace bulwark::attack
