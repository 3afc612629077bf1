// EntryStore::SearchHybrid: the fused lexical + vector ranking of one namespace, read and verified
// like EntryStore::Search (see entry_store.h and hybrid_ranking.h).
#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>
#include <absl/container/inlined_vector.h>
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

// The few rows of one observation (2 x k_obs at most; k_obs is 4 by default): no allocation.
using SmallIds = absl::InlinedVector<int64_t, 16>;
using SmallFlags = absl::InlinedVector<bool, 16>;

// The lexical side of the observation: the active memories' BM25 hits (best first) merged with
// the active honeypots (`pot_lexical`) scored against the memories' statistics, best first, at most `depth`,
// with whether each is a pot. Requires the store's mu_ (shared).
void ObservedLexicalRanking(const Bm25Index& memories, const Bm25Index& pot_lexical, const QueryTerms& terms,
                            std::span<const Bm25Hit> memory_hits, size_t depth, SmallIds* ids,
                            SmallFlags* is_pot) {
  // A pot below the depth-th memory cannot enter (on equal scores the lower id ranks first: kept).
  const double floor = memory_hits.size() >= depth && depth > 0 ? memory_hits[depth - 1].score : 0.0;
  const std::vector<Bm25Hit> pots = pot_lexical.SearchWithStatisticsOf(
      memories, terms.tokens, static_cast<int>(std::min<size_t>(depth, INT_MAX)), terms.weights, floor);
  // Merge the two best-first lists (row ids are distinct across them).
  const auto better = [](const Bm25Hit& a, const Bm25Hit& b) {
    return a.score != b.score ? a.score > b.score : a.id < b.id;
  };
  size_t m = 0, p = 0;
  while (ids->size() < depth && (m < memory_hits.size() || p < pots.size())) {
    const bool take_pot = p < pots.size() && (m == memory_hits.size() || better(pots[p], memory_hits[m]));
    ids->push_back(take_pot ? pots[p++].id : memory_hits[m++].id);
    is_pot->push_back(take_pot);
  }
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
    BULWARK_ASSIGN_OR_RETURN(observation->rows,
                             ObserveLocked(index, query, &terms, k_obs, observation->cosines));
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
      observation->rows = ObserveFused(index, query, terms, vector_best, lexical_best, k_obs, k_obs, &pots,
                                       observation->cosines);
      observation->observed = true;
      observation->own_scan = true;
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

std::vector<EntryStore::ObservedRow> EntryStore::ObserveFused(
    const NamespaceIndex& index, const std::vector<float>& query, const QueryTerms& terms,
    std::span<const IndexHit> memory_vector_hits, std::span<const Bm25Hit> memory_lexical_hits, size_t depth,
    size_t k_obs, const std::vector<IndexHit>* scanned_pots, bool cosines) const {
  // The vector ranking over memories and pots: the best `depth` of the two best-first lists merged
  // (on equal scores the memory first), with each row's cosine.
  const std::vector<IndexHit> pots = index.BestPots(query, depth, scanned_pots);
  SmallIds vector_ids, lexical_ids;
  SmallFlags vector_pot, lexical_pot;
  absl::InlinedVector<float, 16> vector_cosine;
  size_t m = 0, p = 0;
  while (vector_ids.size() < depth && (m < memory_vector_hits.size() || p < pots.size())) {
    const bool take_pot =
        p < pots.size() && (m == memory_vector_hits.size() || pots[p].score > memory_vector_hits[m].score);
    const IndexHit& hit = take_pot ? pots[p++] : memory_vector_hits[m++];
    vector_ids.push_back(hit.row_id);
    vector_pot.push_back(take_pot);
    vector_cosine.push_back(hit.score);
  }
  ObservedLexicalRanking(index.lexical, index.pot_lexical, terms, memory_lexical_hits, depth, &lexical_ids,
                         &lexical_pot);
  std::vector<int64_t> fused = FuseRankings(vector_ids, lexical_ids, options_.hybrid);
  if (fused.size() > k_obs) fused.resize(k_obs);
  // Each fused row from the few rows of the two rankings (linear searches, no hash lookups); a row
  // only the lexical side ranked has no cosine at hand: with `cosines`, its cosine from its own
  // index (a few dot products), else 0.
  std::vector<ObservedRow> observed;
  observed.reserve(fused.size());
  SmallIds lexical_memories, lexical_pots;
  for (const int64_t id : fused) {
    const auto v = std::find(vector_ids.begin(), vector_ids.end(), id);
    if (v != vector_ids.end()) {
      const auto i = static_cast<size_t>(v - vector_ids.begin());
      observed.push_back({vector_cosine[i], vector_pot[i], id});
      continue;
    }
    const auto l = std::find(lexical_ids.begin(), lexical_ids.end(), id);
    const bool is_pot = l != lexical_ids.end() && lexical_pot[static_cast<size_t>(l - lexical_ids.begin())];
    observed.push_back({0.0f, is_pot, id});
    if (cosines) (is_pot ? lexical_pots : lexical_memories).push_back(id);
  }
  if (lexical_memories.empty() && lexical_pots.empty()) return observed;
  std::vector<IndexHit> scored;
  auto score_rows = [&](const VectorIndex* vectors, const IndexFilter& filter, std::span<const int64_t> ids) {
    if (vectors == nullptr || ids.empty()) return;
    auto hits = vectors->SearchRows(query, static_cast<int>(ids.size()), filter, ids);
    if (hits.ok()) scored.insert(scored.end(), hits->begin(), hits->end());
  };
  score_rows(index.vectors.get(), IndexFilter{}, lexical_memories);
  score_rows(index.pot_vectors.get(), NamespaceIndex::kPotFilter, lexical_pots);
  for (size_t i = 0; i < fused.size(); ++i) {
    const auto found =
        std::find_if(scored.begin(), scored.end(), [&](const IndexHit& h) { return h.row_id == fused[i]; });
    if (found != scored.end()) observed[i].score = found->score;
  }
  return observed;
}

}  // namespace bulwark
