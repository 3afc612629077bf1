// EntryStore (see entry_store.h): the verified vector search of a namespace and the honeypot
// observation computed from the in-memory indexes (hybrid search is in hybrid_search.cc).
#include <absl/strings/str_cat.h>
#include <absl/synchronization/mutex.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "core/ids.h"
#include "core/status_macros.h"
#include "core/strings.h"
#include "core/text_validation.h"
#include "provenance/keyring.h"
#include "provenance/signer.h"
#include "store/entry_keys.h"
#include "store/entry_store.h"
#include "store/namespace_index.h"

namespace bulwark {

absl::StatusOr<SearchResult> EntryStore::Search(std::string_view name_space, const std::vector<float>& query,
                                                const SearchOptions& options) {
  BULWARK_RETURN_IF_ERROR(PrepareSearch(name_space, query, options, /*lexical=*/false));
  SearchObservation* const observation = options.observation;

  IndexFilter filter;
  if (options.include_quarantined) filter.states |= StateBit(State::kQuarantined);
  SearchResult result;
  absl::ReaderMutexLock lock(&mu_);
  auto it = indexes_.find(ToAbsl(name_space));
  if (it == indexes_.end()) return result;
  const VectorIndex& index = *it->second->vectors;

  // A metadata filter narrows the rows by the in-memory metadata: one that matches no row costs no
  // scan and no read. (nullopt: every row may match.)
  std::optional<std::vector<int64_t>> allowed;
  if (!options.metadata_filter.empty()) allowed = it->second->metadata.Candidates(options.metadata_filter);
  // The observation comes from this search's scan when that is the unfiltered ranking of the active
  // memories; otherwise from one more scan of k_obs memories (no row reads either way).
  const bool own_scan = !allowed && !options.include_quarantined;
  const size_t k_obs = observation ? static_cast<size_t>(observation->k_obs) : 0;
  if (observation != nullptr && !own_scan) {
    BULWARK_ASSIGN_OR_RETURN(observation->rows, ObserveLocked(*it->second, query, nullptr, k_obs));
    observation->observed = true;
  }
  if (allowed && allowed->empty()) return result;
  const size_t searchable = allowed ? allowed->size() : index.size();
  const size_t k = static_cast<size_t>(options.k);

  // Take candidates best first, reading and verifying only as many as are still needed, in one
  // storage read per batch. Over-fetch from the index until k pass or it is exhausted.
  absl::flat_hash_set<int64_t> seen;
  std::vector<int64_t> ids;
  std::vector<float> scores;
  size_t fetch = std::max(k, k_obs);  // observing: the scan keeps the k_obs best memory scores too
  std::vector<IndexHit> pots;         // and the k_obs best pots (VectorIndex::SearchWithSide)
  while (true) {
    const bool observe_here = observation != nullptr && own_scan && !observation->observed;
    BULWARK_ASSIGN_OR_RETURN(
        const std::vector<IndexHit> hits,
        allowed        ? index.SearchRows(query, static_cast<int>(fetch), filter, *allowed)
        : observe_here ? index.SearchWithSide(query, static_cast<int>(fetch), filter, static_cast<int>(k_obs),
                                              NamespaceIndex::kPotFilter, &pots)
                       : index.Search(query, static_cast<int>(fetch), filter));
    if (observe_here) {
      const std::span<const IndexHit> best(hits.data(), std::min(hits.size(), k_obs));
      observation->rows = ObserveVector(*it->second, query, best, k_obs, &pots);
      observation->observed = true;
      observation->own_scan = true;
    }
    ids.clear();
    scores.clear();
    for (const IndexHit& hit : hits) {
      ids.push_back(hit.row_id);
      scores.push_back(hit.score);
    }
    BULWARK_RETURN_IF_ERROR(TakeVerified(name_space, ids, scores, filter, options, query, k, &seen, &result));
    if (result.hits.size() >= k || hits.size() < fetch || fetch >= searchable) break;
    fetch = std::min(searchable, fetch * 2);
  }
  return result;
}

absl::Status EntryStore::PrepareSearch(std::string_view name_space, const std::vector<float>& query,
                                       const SearchOptions& options, bool lexical) {
  if (query.size() != static_cast<size_t>(options_.dimension)) {
    return absl::InvalidArgumentError("the query embedding does not have the embedder's dimension");
  }
  BULWARK_RETURN_IF_ERROR(CheckObservation(options.observation));
  if (!Holds(name_space)) return NotHeldError(name_space);
  BULWARK_RETURN_IF_ERROR(CatchUpWithOtherWriters());
  return EnsureSideIndexes(name_space, lexical, /*metadata=*/!options.metadata_filter.empty());
}

absl::Status EntryStore::CheckObservation(const SearchObservation* observation) {
  if (observation != nullptr && (observation->k_obs < 1 || observation->k_obs > 64)) {
    return absl::InvalidArgumentError("k_obs must be between 1 and 64");
  }
  return absl::OkStatus();
}

bool EntryStore::HasHoneypots(std::string_view name_space) const {
  absl::ReaderMutexLock lock(&mu_);
  auto it = indexes_.find(ToAbsl(name_space));
  return it != indexes_.end() && !it->second->honeypots.empty();
}

absl::StatusOr<std::vector<EntryStore::ObservedRow>> EntryStore::Observe(std::string_view name_space,
                                                                         const std::vector<float>& query,
                                                                         int k_obs,
                                                                         std::string_view query_text) {
  if (query.size() != static_cast<size_t>(options_.dimension)) {
    return absl::InvalidArgumentError("the query embedding does not have the embedder's dimension");
  }
  if (k_obs < 1 || k_obs > 64) return absl::InvalidArgumentError("k_obs must be between 1 and 64");
  if (!Holds(name_space)) return NotHeldError(name_space);
  QueryTerms terms;
  if (!query_text.empty()) {
    terms = terms_.Query(query_text);
    BULWARK_RETURN_IF_ERROR(EnsureSideIndexes(name_space, /*lexical=*/true, /*metadata=*/false));
  }
  absl::ReaderMutexLock lock(&mu_);
  auto it = indexes_.find(ToAbsl(name_space));
  if (it == indexes_.end()) return std::vector<ObservedRow>();
  return ObserveLocked(*it->second, query, query_text.empty() ? nullptr : &terms, static_cast<size_t>(k_obs));
}

std::vector<EntryStore::ObservedRow> EntryStore::ObserveVector(
    const NamespaceIndex& index, const std::vector<float>& query, std::span<const IndexHit> memory_hits,
    size_t k_obs, const std::vector<IndexHit>* scanned_pots) const {
  const std::vector<IndexHit> pots = index.BestPots(query, k_obs, scanned_pots);
  // Merge two best-first lists; on equal scores the memory ranks first.
  std::vector<ObservedRow> observed;
  size_t m = 0, p = 0;
  while (observed.size() < k_obs && (m < memory_hits.size() || p < pots.size())) {
    const bool take_pot =
        p < pots.size() && (m == memory_hits.size() || pots[p].score > memory_hits[m].score);
    const IndexHit& hit = take_pot ? pots[p++] : memory_hits[m++];
    observed.push_back(ObservedRow{hit.score, take_pot, hit.row_id});
  }
  return observed;
}

absl::StatusOr<std::vector<EntryStore::ObservedRow>> EntryStore::ObserveLocked(
    const NamespaceIndex& index, const std::vector<float>& query, const QueryTerms* terms, size_t k_obs,
    bool cosines) const {
  const IndexFilter memories;  // active memories
  // The observation's depth is k_obs for hybrid ranking too (ObserveFused); the pots from the same
  // scan.
  std::vector<IndexHit> pots;
  BULWARK_ASSIGN_OR_RETURN(
      std::vector<IndexHit> hits,
      index.vectors->SearchWithSide(query, static_cast<int>(k_obs), memories, static_cast<int>(k_obs),
                                    NamespaceIndex::kPotFilter, &pots));
  if (terms == nullptr) return ObserveVector(index, query, hits, k_obs, &pots);
  const std::vector<Bm25Hit> lexical =
      index.lexical.Search(terms->tokens, static_cast<int>(k_obs), nullptr, nullptr, terms->weights);
  return ObserveFused(index, query, *terms, hits, lexical, k_obs, k_obs, &pots, cosines);
}

}  // namespace bulwark
