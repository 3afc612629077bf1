// Victim-query protocol and retrieval measurement shared by the attacks.
#include "attack/attack.h"

#include <absl/container/flat_hash_set.h>

#include <algorithm>

#include "core/status_macros.h"

namespace bulwark::attack {

std::vector<std::string> VictimQueries(const std::vector<std::string>& plain, VictimProtocol protocol,
                                       std::string_view trigger) {
  std::vector<std::string> out;
  out.reserve(plain.size());
  for (const std::string& q : plain) {
    if (protocol == VictimProtocol::kTriggered && !trigger.empty()) {
      out.push_back(q + " " + std::string(trigger));
    } else {
      out.push_back(q);
    }
  }
  return out;
}

std::mt19937_64 AttackRng(uint64_t seed, std::string_view attack_name) {
  // FNV-1a over the name, mixed into the seed, so streams differ per attack.
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : attack_name) {
    h ^= static_cast<uint8_t>(c);
    h *= 0x100000001b3ull;
  }
  std::seed_seq seq{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32), static_cast<uint32_t>(h),
                    static_cast<uint32_t>(h >> 32)};
  return std::mt19937_64(seq);
}

absl::StatusOr<RetrievalOutcome> MeasureRetrieval(MemoryStore& store, std::string_view name_space,
                                                  const std::vector<std::string>& queries,
                                                  const std::vector<std::string>& poison_ids, int k) {
  const absl::flat_hash_set<std::string> poison(poison_ids.begin(), poison_ids.end());
  RetrievalOutcome out;
  int hits = 0;
  double rr = 0;
  for (const std::string& q : queries) {
    BULWARK_ASSIGN_OR_RETURN(auto result, store.Search(name_space, q, {.k = k}));
    QueryOutcome qo{.query = q};
    for (size_t i = 0; i < result.hits.size(); ++i) {
      if (poison.contains(result.hits[i].entry.id)) {
        qo.best_rank = static_cast<int>(i) + 1;
        break;
      }
    }
    if (qo.best_rank > 0) {
      ++hits;
      rr += 1.0 / qo.best_rank;
    }
    out.per_query.push_back(std::move(qo));
  }
  if (!queries.empty()) {
    out.asr_r = hits / static_cast<double>(queries.size());
    out.mean_reciprocal_rank = rr / static_cast<double>(queries.size());
  }
  return out;
}

std::vector<std::string> IdsOf(const std::vector<Entry>& entries) {
  std::vector<std::string> ids;
  ids.reserve(entries.size());
  for (const Entry& e : entries) ids.push_back(e.id);
  return ids;
}

double Cosine(const std::vector<float>& a, const std::vector<float>& b) {
  double dot = 0;
  const size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) dot += static_cast<double>(a[i]) * b[i];
  return dot;
}

}  // namespace bulwark::attack
