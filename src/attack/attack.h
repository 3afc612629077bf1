// Common vocabulary of the red-team attacks (DESIGN 4.8; MemSAD paper Sec. 3, SMSR): what an
// attack writes (PoisonEntry), how its victims later query (the victim-query protocol) and how its
// retrieval success is measured against a real store through the public MemoryStore API.
//
// Every attack is deterministic given its seed (std::mt19937_64 seeded from AttackSeed), so an
// evaluation run can be replayed.
#pragma once

#include <absl/status/statusor.h>

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "store/memory_store.h"

namespace bulwark::attack {

// The victim-query protocol (MemSAD Sec. 3, "Protocol distinction"): victims ask their plain
// queries (MINJA, InjecMEM, SMSR), or the attacker also controls the query channel and appends
// the optimized trigger (AgentPoison: q + " " + T*).
enum class VictimProtocol { kPlain, kTriggered };

// The victim queries as they reach the store under `protocol`.
std::vector<std::string> VictimQueries(const std::vector<std::string>& plain, VictimProtocol protocol,
                                       std::string_view trigger);

// A deterministic generator for an attack, derived from the run seed and the attack's name (so
// two attacks of one run draw independent streams).
std::mt19937_64 AttackRng(uint64_t seed, std::string_view attack_name);

// Where the poison landed for one victim query.
struct QueryOutcome {
  std::string query;
  int best_rank = -1;  // 1-based rank of the best-ranked poison entry in the top k; -1 if absent
};

// ASR-R (MemSAD Eq. 2) of a set of stored poison ids for the queries: the fraction of queries whose
// top k (through MemoryStore::Search, so verification and quarantine apply) holds a poison id.
struct RetrievalOutcome {
  double asr_r = 0;
  double mean_reciprocal_rank = 0;  // mean over queries of 1/rank (0 when absent)
  std::vector<QueryOutcome> per_query;
};
// Searches every query with SearchOptions{.k = k}. Errors: those of Search.
[[nodiscard]] absl::StatusOr<RetrievalOutcome> MeasureRetrieval(MemoryStore& store,
                                                                std::string_view name_space,
                                                                const std::vector<std::string>& queries,
                                                                const std::vector<std::string>& poison_ids,
                                                                int k);

// Applied by a legitimate writer (the agent's own write path) to every text before it is
// stored, e.g. watermark marking; empty: texts are stored as they are.
using TextMarker = std::function<std::string(std::string_view)>;

// Ids of `entries` (e.g. the result of AddBatch).
std::vector<std::string> IdsOf(const std::vector<Entry>& entries);

// Cosine (inner product) of two L2-normalized vectors of the same size.
double Cosine(const std::vector<float>& a, const std::vector<float>& b);

}  // namespace bulwark::attack
