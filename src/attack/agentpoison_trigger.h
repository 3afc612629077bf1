// AgentPoison (Chen et al., 2024; MemSAD paper Sec. 3 and 6.1): a write-access attacker that
// stores poison passages carrying a trigger T and, controlling the query channel, appends T to
// the victims' queries (the triggered-query protocol). T is optimized against the configured
// embedder by a black-box coordinate search over a vocabulary (the embedder is treated as an
// oracle; no gradients, so it works for any Embedder) maximizing
//
//   J(T) = mean_q cos(E(q + T), E(p + T))                      retrieval of the poison
//        + uniqueness_weight  * (1 - mean_q cos(E(q + T), c_b))  triggered queries leave the
//                                                                 benign query cluster (L_uni)
//        + compactness_weight * mean_q cos(E(q + T), c_T)        triggered queries form one tight
//                                                                 cluster (L_cpt)
//
// over the victim queries q, with p the centroid passage, c_b the normalized centroid of benign
// queries and c_T that of the triggered victim queries.
#pragma once

#include <absl/status/statusor.h>

#include <cstdint>
#include <string>
#include <vector>

#include "bulwark/embedder.h"
#include "bulwark/entry.h"

namespace bulwark::attack {

struct AgentPoisonOptions {
  int trigger_tokens = 3;            // |T|, 1 .. 16
  int sweeps = 4;                    // coordinate-search passes over the trigger positions, >= 0
  int candidates_per_position = 32;  // vocabulary words tried per position and pass, >= 1
  double uniqueness_weight = 0.5;    // weight of L_uni, >= 0
  double compactness_weight = 0.5;   // weight of L_cpt, >= 0
  int poison_count = 5;              // n passages written (MemSAD Sec. 6.1: n = 5), 1 .. 64
  uint64_t seed = 0;
};

struct AgentPoisonTarget {
  std::vector<std::string> victim_queries;  // the plain Q_v of one target topic; non-empty
  std::vector<std::string> benign_queries;  // for the uniqueness term; may be empty (term = 0)
  std::string payload;                      // the malicious instruction (poison_goal)
  std::string passage;  // the poison passage; empty: CentroidPassage(victim_queries, payload)
};

struct TriggerScore {
  double objective = 0;
  double retrieval = 0;    // mean_q cos(E(q + T), E(p + T))
  double uniqueness = 0;   // 1 - mean_q cos(E(q + T), c_b)
  double compactness = 0;  // mean_q cos(E(q + T), c_T)
};

struct AgentPoisonAttack {
  std::string trigger;           // T*, words joined by single spaces
  std::string passage;           // the centroid passage p, without the trigger
  TriggerScore score;            // J(T*) and its terms
  TriggerScore initial_score;    // J of the random starting trigger
  std::vector<double> trace;     // J after each pass (the first value is the start)
  std::vector<NewEntry> poison;  // n entries: p variants with T prefixed, metadata.attack = "agentpoison"
};

// Optimizes the trigger from a random start drawn from `vocabulary` (seeded). With sweeps = 0 the
// result is that random trigger: the unoptimized baseline. InvalidArgument for options out of
// range, no victim queries, or fewer than 2 vocabulary words; errors of the embedder.
[[nodiscard]] absl::StatusOr<AgentPoisonAttack> RunAgentPoison(const Embedder& embedder,
                                                               const AgentPoisonTarget& target,
                                                               const std::vector<std::string>& vocabulary,
                                                               const AgentPoisonOptions& options);

// J(T) for a given trigger (the objective the search maximizes).
[[nodiscard]] absl::StatusOr<TriggerScore> ScoreTrigger(const Embedder& embedder,
                                                        const AgentPoisonTarget& target,
                                                        const std::string& passage,
                                                        const std::string& trigger,
                                                        const AgentPoisonOptions& options);

// The centroid passage: the victim query closest to the victim queries' centroid, followed by the
// payload (AgentPoison's passage that sits where the victim queries are).
[[nodiscard]] absl::StatusOr<std::string> CentroidPassage(const Embedder& embedder,
                                                          const std::vector<std::string>& victim_queries,
                                                          const std::string& payload);

// A trigger vocabulary of `size` words drawn (seeded) from the single-word WordNet lemmas of 4-14
// letters, or from a small built-in list of rare words when WordNet is not installed. Sorted.
std::vector<std::string> DefaultTriggerVocabulary(size_t size, uint64_t seed);

}  // namespace bulwark::attack
