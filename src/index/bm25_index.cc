// Okapi BM25 over pre-tokenized documents (see bm25_index.h).
#include "index/bm25_index.h"

#include <absl/container/flat_hash_set.h>
#include <absl/strings/str_cat.h>
#include <absl/strings/string_view.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace bulwark {
namespace {

// The weight of query token q: 1 without weights, else the given one (negative counts as 0).
double QueryWeight(std::span<const double> weights, size_t q) {
  if (weights.empty()) return 1.0;
  return q < weights.size() ? std::max(0.0, weights[q]) : 0.0;
}

}  // namespace

const std::vector<Bm25Index::Posting>* Bm25Index::PostingsOf(std::string_view term) const {
  const auto it = term_ids_.find(absl::string_view(term.data(), term.size()));
  return it == term_ids_.end() ? nullptr : &postings_[it->second];
}

uint32_t Bm25Index::TermId(std::string_view term) {
  if (const auto it = term_ids_.find(absl::string_view(term.data(), term.size())); it != term_ids_.end()) {
    return it->second;
  }
  uint32_t id = static_cast<uint32_t>(postings_.size());
  if (!free_terms_.empty()) {
    id = free_terms_.back();
    free_terms_.pop_back();
    term_names_[id] = std::string(term);
  } else {
    postings_.emplace_back();
    term_names_.emplace_back(term);
  }
  term_ids_.emplace(std::string(term), id);
  return id;
}

Bm25Index::Bm25Index(Bm25Options options) : options_(options) {
  options_.k1 = std::max(0.0, options_.k1);
  options_.b = std::clamp(options_.b, 0.0, 1.0);
}

absl::Status Bm25Index::Add(int64_t id, std::span<const std::string> tokens) {
  if (id == kFreeSlot) return absl::InvalidArgumentError("document id -1 is reserved");
  if (position_by_id_.contains(id))
    return absl::InvalidArgumentError(absl::StrCat("document ", id, " already added"));
  if (ids_.size() >= std::numeric_limits<uint32_t>::max() ||
      tokens.size() >= std::numeric_limits<uint32_t>::max()) {
    return absl::InvalidArgumentError("index or document too large");
  }
  uint32_t doc = static_cast<uint32_t>(ids_.size());
  if (!free_slots_.empty()) {
    doc = free_slots_.back();
    free_slots_.pop_back();
  } else {
    ids_.push_back(kFreeSlot);
    lengths_.push_back(0);
    terms_.emplace_back();
  }
  // Term frequencies from the sorted term ids of the tokens (one hash lookup per token; a bulk
  // load adds every memory of a namespace). Every token's term gets a posting below, so no term is
  // left without one.
  std::vector<uint32_t> ids;
  ids.reserve(tokens.size());
  for (const std::string& t : tokens) ids.push_back(TermId(t));
  std::sort(ids.begin(), ids.end());
  std::vector<uint32_t>& terms = terms_[doc];
  terms.clear();
  size_t distinct = 0;
  for (size_t i = 0; i < ids.size(); ++i) distinct += i == 0 || ids[i] != ids[i - 1];
  terms.reserve(distinct);
  for (size_t i = 0; i < ids.size();) {
    size_t j = i + 1;
    while (j < ids.size() && ids[j] == ids[i]) ++j;
    postings_[ids[i]].push_back({doc, static_cast<uint32_t>(j - i)});
    terms.push_back(ids[i]);
    i = j;
  }
  position_by_id_[id] = doc;
  ids_[doc] = id;
  lengths_[doc] = static_cast<uint32_t>(tokens.size());
  total_length_ += tokens.size();
  return absl::OkStatus();
}

absl::Status Bm25Index::Remove(int64_t id) {
  const auto found = position_by_id_.find(id);
  if (found == position_by_id_.end())
    return absl::NotFoundError(absl::StrCat("document ", id, " not indexed"));
  const uint32_t doc = found->second;
  for (const uint32_t term_id : terms_[doc]) {
    std::vector<Posting>& postings = postings_[term_id];
    std::erase_if(postings, [doc](const Posting& p) { return p.doc == doc; });
    if (!postings.empty()) continue;
    std::vector<Posting>().swap(postings);
    term_ids_.erase(term_names_[term_id]);
    std::string().swap(term_names_[term_id]);  // a purged entry's unique words leave memory
    free_terms_.push_back(term_id);
  }
  std::vector<uint32_t>().swap(terms_[doc]);
  total_length_ -= lengths_[doc];
  lengths_[doc] = 0;
  ids_[doc] = kFreeSlot;
  free_slots_.push_back(doc);
  position_by_id_.erase(found);
  return absl::OkStatus();
}

void Bm25Index::ShrinkToFit() {
  for (std::vector<Posting>& postings : postings_) postings.shrink_to_fit();
}

std::vector<Bm25Hit> Bm25Index::Search(std::span<const std::string> query_tokens, int k, Accept accept,
                                       const void* context, std::span<const double> query_weights) const {
  return Rank(*this, query_tokens, k, accept, context, query_weights);
}

std::vector<Bm25Hit> Bm25Index::SearchWithStatisticsOf(const Bm25Index& statistics,
                                                       std::span<const std::string> query_tokens, int k,
                                                       std::span<const double> query_weights) const {
  return Rank(statistics, query_tokens, k, nullptr, nullptr, query_weights);
}

// Scores this index's documents against `statistics`' N, df and avgdl (this index's own for Search),
// one pass over the postings of each distinct query term.
std::vector<Bm25Hit> Bm25Index::Rank(const Bm25Index& statistics, std::span<const std::string> query_tokens,
                                     int k, Accept accept, const void* context,
                                     std::span<const double> query_weights) const {
  if (k <= 0 || position_by_id_.empty()) return {};
  const double n = static_cast<double>(statistics.position_by_id_.size());
  const double avgdl = n > 0 ? std::max(1.0, static_cast<double>(statistics.total_length_) / n) : 1.0;
  std::vector<double> scores(ids_.size(), 0.0);
  std::vector<uint32_t> matched;
  absl::flat_hash_set<std::string_view> seen;
  for (size_t q = 0; q < query_tokens.size(); ++q) {
    const std::string& term = query_tokens[q];
    if (!seen.insert(term).second) continue;
    const std::vector<Posting>* postings = PostingsOf(term);
    if (postings == nullptr) continue;
    double df = static_cast<double>(postings->size());
    if (&statistics != this) {
      const std::vector<Posting>* stats = statistics.PostingsOf(term);
      df = stats == nullptr ? 0.0 : static_cast<double>(stats->size());
    }
    const double idf = QueryWeight(query_weights, q) * std::log(1.0 + (n - df + 0.5) / (df + 0.5));
    if (!(idf > 0)) continue;  // a zero weight: adds nothing (and must not list a document twice)
    for (const Posting& p : *postings) {
      const double tf = p.tf;
      const double norm = options_.k1 * (1 - options_.b + options_.b * lengths_[p.doc] / avgdl);
      if (scores[p.doc] == 0) matched.push_back(p.doc);
      scores[p.doc] += idf * tf * (options_.k1 + 1) / (tf + norm);
    }
  }
  if (accept != nullptr) {
    std::erase_if(matched, [&](uint32_t d) { return !accept(context, ids_[d]); });
  }
  std::erase_if(matched, [&](uint32_t d) { return !(scores[d] > 0); });
  const size_t keep = std::min(matched.size(), static_cast<size_t>(k));
  std::partial_sort(matched.begin(), matched.begin() + static_cast<ptrdiff_t>(keep), matched.end(),
                    [&](uint32_t a, uint32_t b) {
                      return scores[a] != scores[b] ? scores[a] > scores[b] : ids_[a] < ids_[b];
                    });
  std::vector<Bm25Hit> hits;
  hits.reserve(keep);
  for (size_t i = 0; i < keep; ++i) hits.push_back({ids_[matched[i]], scores[matched[i]]});
  return hits;
}

double Bm25Index::ScoreDocument(std::span<const std::string> doc_tokens,
                                std::span<const std::string> query_tokens,
                                std::span<const double> query_weights) const {
  const double n = static_cast<double>(position_by_id_.size());
  const double avgdl = n > 0 ? std::max(1.0, static_cast<double>(total_length_) / n) : 1.0;
  absl::flat_hash_map<std::string_view, uint32_t> tf;
  for (const std::string& t : doc_tokens) ++tf[t];
  absl::flat_hash_set<std::string_view> seen;
  double score = 0;
  for (size_t q = 0; q < query_tokens.size(); ++q) {
    const std::string& term = query_tokens[q];
    if (!seen.insert(term).second) continue;
    const auto in_doc = tf.find(term);
    if (in_doc == tf.end()) continue;
    const std::vector<Posting>* postings = PostingsOf(term);
    const double df = postings == nullptr ? 0.0 : static_cast<double>(postings->size());
    const double idf = QueryWeight(query_weights, q) * std::log(1.0 + (n - df + 0.5) / (df + 0.5));
    const double f = in_doc->second;
    const double norm =
        options_.k1 * (1 - options_.b + options_.b * static_cast<double>(doc_tokens.size()) / avgdl);
    score += idf * f * (options_.k1 + 1) / (f + norm);
  }
  return score;
}

}  // namespace bulwark
