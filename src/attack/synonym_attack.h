// The adaptive white-box attacker of MemSAD Sec. 4.5 / 6.4 (Eq. 11): greedy WordNet synonym
// substitution that minimizes the chosen detectors' scores subject to the poison staying in the
// victims' top k,
//
//   c* = argmin_{c' in Syn(c)} s(c'; H)   s.t.   rank(E(c'), M) <= k for every victim query.
//
// White-box: the attacker knows the thresholds and calls the store's own write gate
// (the store's WriteDefenses gate) to score candidates, and reads the stored embeddings
// (MemoryStore::Export) to check the top-k constraint, without searching (so it leaves no trace
// in the query history H). Synonyms come from SynonymTable (WordNet same-sense groups). With the
// lexical embedder's synonym canonicalization on, those substitutions leave the embedding
// unchanged (epsilon_syn = 0), so embedding-only scores (memsad) cannot move at all while
// character n-gram scores (memsad_plus) do -- Proposition 13 and Appendix R in their extreme.
#pragma once

#include <absl/status/statusor.h>

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "embed/synonym_table.h"
#include "store/memory_store.h"

namespace bulwark::attack {

struct SynonymAttackOptions {
  // Detectors to evade, by name ("memsad", "memsad_plus", "validation", "proactive", "watermark");
  // each must be enabled in the store's gate. The objective is the largest normalized flagging
  // margin (score - threshold) / max(|threshold|, 1e-3) over them (sign flipped for watermark).
  std::vector<std::string> detectors = {"memsad"};
  int k = 5;                   // top-k constraint, 1 .. 1000
  int max_substitutions = 16;  // r, >= 0
};

struct SynonymAttackResult {
  std::string original;
  std::string text;                                                // the substituted poison c*
  std::vector<std::pair<std::string, std::string>> substitutions;  // (from, to), in order applied
  double objective_before = 0, objective_after = 0;
  bool flagged_before = false, flagged_after = false;         // by any target detector
  bool in_top_k_before = false, in_top_k_after = false;       // for every victim query
  double similarity_before = 0, similarity_after = 0;         // mean cos(victim query, poison)
  std::map<std::string, double> scores_before, scores_after;  // per target detector
};

// Runs the greedy search for one poison text against the namespace's current state (entries,
// history, calibration). InvalidArgument for an empty text, no victim queries, bad options or a
// detector that is not enabled; errors of the embedder and of Export.
[[nodiscard]] absl::StatusOr<SynonymAttackResult> RunSynonymAttack(
    MemoryStore& store, std::string_view name_space, std::string_view poison_text,
    const std::vector<std::string>& victim_queries, const SynonymTable& synonyms,
    const SynonymAttackOptions& options);

}  // namespace bulwark::attack
