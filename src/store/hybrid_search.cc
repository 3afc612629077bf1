// EntryStore::SearchHybrid: the fused lexical + vector ranking of one namespace, read and verified
// like EntryStore::Search (see entry_store.h and hybrid_ranking.h).
#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>
#include <absl/strings/str_cat.h>
#include <absl/synchronization/mutex.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <optional>

#include "core/status_macros.h"
#include "core/strings.h"
#include "index/vector_index.h"
#include "store/entry_keys.h"
#include "store/entry_store.h"
#include "store/namespace_index.h"
#include "store/query_feedback.h"

namespace bulwark {
namespace {

bool MatchesFilter(const nlohmann::json& metadata, const nlohmann::json& filter) {
  for (const auto& [key, value] : filter.items()) {
    auto it = metadata.find(key);
    if (it == metadata.end() || *it != value) return false;
  }
  return true;
}

float Cosine(const std::vector<float>& a, const std::vector<float>& b) {
  float dot = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) dot += a[i] * b[i];
  return dot;  // stored and query embeddings are L2-normalized by the embedders
}

std::vector<int64_t> IdsOf(const std::vector<IndexHit>& hits) {
  std::vector<int64_t> ids;
  ids.reserve(hits.size());
  for (const IndexHit& h : hits) ids.push_back(h.row_id);
  return ids;
}

std::vector<int64_t> IdsOf(const std::vector<Bm25Hit>& hits) {
  std::vector<int64_t> ids;
  ids.reserve(hits.size());
  for (const Bm25Hit& h : hits) ids.push_back(h.id);
  return ids;
}

// Bm25Index::Accept over the metadata filter's candidate rows.
bool InAllowed(const void* context, int64_t id) {
  return static_cast<const absl::flat_hash_set<int64_t>*>(context)->contains(id);
}

}  // namespace

EntryStore::LexicalStats EntryStore::Lexical(std::string_view name_space) {
  if (absl::Status s = EnsureSideIndexes(name_space, /*lexical=*/true, /*metadata=*/false); !s.ok()) {
    spdlog::warn("the lexical index of namespace {} could not be built: {}", name_space, s.ToString());
    return {};
  }
  absl::ReaderMutexLock lock(&mu_);
  const auto it = indexes_.find(ToAbsl(name_space));
  if (it == indexes_.end()) return {};
  return {it->second->lexical.size(), it->second->lexical.term_count()};
}

absl::Status EntryStore::TakeVerified(std::string_view name_space, std::span<const int64_t> ordered,
                                      std::span<const float> scores, const IndexFilter& filter,
                                      const SearchOptions& options, const std::vector<float>& query, size_t k,
                                      absl::flat_hash_set<int64_t>* seen, SearchResult* result) {
  size_t next = 0;
  std::vector<int64_t> batch;
  std::vector<size_t> positions;  // of the batch's rows in `ordered`
  while (result->hits.size() < k) {
    batch.clear();
    positions.clear();
    for (; next < ordered.size() && batch.size() < k - result->hits.size(); ++next) {
      const int64_t row_id = ordered[next];
      if (!seen->insert(row_id).second) continue;
      {
        absl::MutexLock bad_lock(&bad_mu_);
        if (bad_rows_.contains(row_id)) continue;
      }
      batch.push_back(row_id);
      positions.push_back(next);
    }
    if (batch.empty()) return absl::OkStatus();
    const auto verify_start = std::chrono::steady_clock::now();
    BULWARK_ASSIGN_OR_RETURN(std::vector<std::optional<StoredRow>> rows, backend_->GetRows(batch));
    result->rows_read += static_cast<int64_t>(batch.size());
    const int64_t now_us = options_.env->NowMicros();
    for (size_t i = 0; i < batch.size() && i < rows.size(); ++i) {
      std::optional<StoredRow>& row = rows[i];
      if (!row.has_value()) {
        ReportBadRow(batch[i], "", name_space, "indexed row is missing from storage");
        ++result->rejected_candidates;
        continue;
      }
      if (auto s = CheckRow(*row, name_space); !s.ok()) {
        ReportBadRow(batch[i], row->entry.id, name_space, ToStd(s.message()));
        ++result->rejected_candidates;
        continue;
      }
      if (!filter.Accepts(row->entry.state, row->entry.kind)) continue;
      if (!MatchesFilter(row->entry.metadata, options.metadata_filter)) continue;
      if (IsExpired(row->entry, now_us)) continue;  // never returned after its expiry
      const float score =
          positions[i] < scores.size() ? scores[positions[i]] : Cosine(query, row->entry.embedding);
      result->hits.push_back({std::move(row->entry), score});
    }
    result->verify_seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - verify_start).count();
  }
  return absl::OkStatus();
}

absl::StatusOr<SearchResult> EntryStore::SearchHybrid(std::string_view name_space,
                                                      const std::vector<float>& query,
                                                      std::string_view query_text,
                                                      const SearchOptions& options) {
  BULWARK_RETURN_IF_ERROR(PrepareSearch(name_space, query, options, /*lexical=*/true));
  SearchObservation* const observation = options.observation;
  QueryTerms terms = terms_.Query(query_text);
  bool expand = options_.hybrid.prf_docs > 0;  // until the first rankings gave the feedback

  IndexFilter filter;
  if (options.include_quarantined) filter.states |= StateBit(State::kQuarantined);
  SearchResult result;
  absl::ReaderMutexLock lock(&mu_);
  auto it = indexes_.find(ToAbsl(name_space));
  if (it == indexes_.end()) return result;
  const NamespaceIndex& index = *it->second;

  std::optional<std::vector<int64_t>> allowed;  // nullopt: every row may match the metadata filter
  absl::flat_hash_set<int64_t> allowed_set;
  if (!options.metadata_filter.empty()) allowed = index.metadata.Candidates(options.metadata_filter);
  // As in Search: the observation comes from this search's rankings when they are the unfiltered
  // ones over the active memories, else from rankings of its own (no row reads either way).
  const bool own_scan = !allowed && !options.include_quarantined;
  const size_t k_obs = observation ? static_cast<size_t>(observation->k_obs) : 0;
  if (observation != nullptr && !own_scan) {
    BULWARK_ASSIGN_OR_RETURN(observation->rows, ObserveLocked(index, query, &terms, k_obs));
    observation->observed = true;
  }
  if (allowed && allowed->empty()) return result;
  if (allowed) allowed_set.insert(allowed->begin(), allowed->end());
  const size_t searchable = allowed ? allowed->size() : index.vectors->size();
  const size_t k = static_cast<size_t>(options.k);

  // Fuse the top `depth` of each ranking; if fewer than k of the fused rows pass, deepen both.
  absl::flat_hash_set<int64_t> seen;
  size_t depth = std::max({k, k_obs, static_cast<size_t>(options_.hybrid.depth)});
  std::vector<IndexHit> pots;  // the k_obs best pots, from the first vector scan when observing
  while (true) {
    const bool observe_here = observation != nullptr && own_scan && !observation->observed;
    auto vector_hits = allowed ? index.vectors->SearchRows(query, static_cast<int>(depth), filter, *allowed)
                       : observe_here ? index.vectors->SearchWithSide(query, static_cast<int>(depth), filter,
                                                                      static_cast<int>(k_obs),
                                                                      NamespaceIndex::kPotFilter, &pots)
                                      : index.vectors->Search(query, static_cast<int>(depth), filter);
    if (!vector_hits.ok()) return vector_hits.status();
    std::vector<Bm25Hit> lexical_hits =
        index.lexical.Search(terms.tokens, static_cast<int>(depth), allowed ? &InAllowed : nullptr,
                             allowed ? &allowed_set : nullptr, terms.weights);
    if (expand) {  // pseudo-relevance feedback (query_feedback.h) from the first fused ranking
      expand = false;
      terms = ExpandWithFeedback(index.lexical, terms,
                                 FuseRankings(IdsOf(*vector_hits), IdsOf(lexical_hits), options_.hybrid),
                                 options_.hybrid);
      lexical_hits =
          index.lexical.Search(terms.tokens, static_cast<int>(depth), allowed ? &InAllowed : nullptr,
                               allowed ? &allowed_set : nullptr, terms.weights);
    }
    if (observe_here) {
      // The observation's depth is k_obs, not the search's (ObserveFused): each ranking's first
      // k_obs rows (depth >= k_obs here).
      const std::span<const IndexHit> vector_best(vector_hits->data(), std::min(vector_hits->size(), k_obs));
      const std::span<const Bm25Hit> lexical_best(lexical_hits.data(), std::min(lexical_hits.size(), k_obs));
      *observation = {observation->k_obs, /*observed=*/true, /*own_scan=*/true,
                      ObserveFused(index, query, terms, vector_best, lexical_best, k_obs, k_obs, &pots)};
    }
    const std::vector<int64_t> fused =
        FuseRankings(IdsOf(*vector_hits), IdsOf(lexical_hits), options_.hybrid);
    BULWARK_RETURN_IF_ERROR(TakeVerified(name_space, fused, {}, filter, options, query, k, &seen, &result));
    const bool exhausted = vector_hits->size() < depth && lexical_hits.size() < depth;
    if (result.hits.size() >= k || exhausted || depth >= searchable) break;
    depth = std::min(searchable, depth * 2);
  }
  return result;
}

// The lexical side of the observation: the active memories' BM25 hits (best first) merged with
// the active honeypots scored against the same statistics, best first, at most `depth`.
std::vector<int64_t> EntryStore::ObservedLexicalRanking(const NamespaceIndex& index, const QueryTerms& terms,
                                                        std::span<const Bm25Hit> memory_hits,
                                                        size_t depth) const {
  std::vector<Bm25Hit> hits(memory_hits.begin(), memory_hits.end());
  // A pot below the depth-th memory cannot enter (on equal scores the lower id ranks first: kept).
  const double floor = memory_hits.size() >= depth && depth > 0 ? memory_hits[depth - 1].score : 0.0;
  const std::vector<Bm25Hit> pots = index.pot_lexical.SearchWithStatisticsOf(
      index.lexical, terms.tokens, static_cast<int>(std::min<size_t>(depth, INT_MAX)), terms.weights, floor);
  hits.insert(hits.end(), pots.begin(), pots.end());
  std::sort(hits.begin(), hits.end(), [](const Bm25Hit& a, const Bm25Hit& b) {
    return a.score != b.score ? a.score > b.score : a.id < b.id;
  });
  if (hits.size() > depth) hits.resize(depth);
  std::vector<int64_t> ids;
  ids.reserve(hits.size());
  for (const Bm25Hit& h : hits) ids.push_back(h.id);
  return ids;
}

std::vector<EntryStore::ObservedRow> EntryStore::ObserveFused(
    const NamespaceIndex& index, const std::vector<float>& query, const QueryTerms& terms,
    std::span<const IndexHit> memory_vector_hits, std::span<const Bm25Hit> memory_lexical_hits, size_t depth,
    size_t k_obs, const std::vector<IndexHit>* scanned_pots) const {
  const IndexFilter pot_filter = NamespaceIndex::kPotFilter;
  // The vector ranking over memories and pots: the best `depth` of each, merged.
  std::vector<IndexHit> vector_hits(memory_vector_hits.begin(), memory_vector_hits.end());
  const std::vector<IndexHit> pots = index.BestPots(query, depth, scanned_pots);
  vector_hits.insert(vector_hits.end(), pots.begin(), pots.end());
  std::stable_sort(vector_hits.begin(), vector_hits.end(),
                   [](const IndexHit& a, const IndexHit& b) { return a.score > b.score; });
  if (vector_hits.size() > depth) vector_hits.resize(depth);
  std::vector<int64_t> vector_ids;
  vector_ids.reserve(vector_hits.size());
  // Row id -> cosine of the few rows (at most 2 x depth): a linear search, no hash map.
  std::vector<IndexHit> cosine(vector_hits.begin(), vector_hits.end());
  const auto cosine_of = [&](int64_t id) {
    return std::find_if(cosine.begin(), cosine.end(), [id](const IndexHit& h) { return h.row_id == id; });
  };
  for (const IndexHit& h : vector_hits) vector_ids.push_back(h.row_id);
  std::vector<int64_t> fused = FuseRankings(
      vector_ids, ObservedLexicalRanking(index, terms, memory_lexical_hits, depth), options_.hybrid);
  if (fused.size() > k_obs) fused.resize(k_obs);
  // Rows only the lexical side ranked: their cosine from their own index (a few dot products).
  std::vector<int64_t> lexical_memories, lexical_pots;
  for (const int64_t id : fused) {
    if (cosine_of(id) == cosine.end()) {
      (index.honeypots.contains(id) ? lexical_pots : lexical_memories).push_back(id);
    }
  }
  auto score_rows = [&](const VectorIndex* vectors, const IndexFilter& filter,
                        const std::vector<int64_t>& ids) {
    if (vectors == nullptr || ids.empty()) return;
    auto hits = vectors->SearchRows(query, static_cast<int>(ids.size()), filter, ids);
    if (!hits.ok()) return;
    cosine.insert(cosine.end(), hits->begin(), hits->end());  // ids not there yet
  };
  score_rows(index.vectors.get(), IndexFilter{}, lexical_memories);
  score_rows(index.pot_vectors.get(), pot_filter, lexical_pots);
  std::vector<ObservedRow> observed;
  for (const int64_t id : fused) {
    const auto found = cosine_of(id);
    observed.push_back({found == cosine.end() ? 0.0f : found->score, index.honeypots.contains(id)});
  }
  return observed;
}

}  // namespace bulwark
