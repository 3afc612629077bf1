// Okapi BM25 over pre-tokenized documents (see bm25_index.h).
#include "index/bm25_index.h"

#include <absl/container/flat_hash_set.h>
#include <absl/strings/str_cat.h>
#include <absl/strings/string_view.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

namespace bulwark {

// Rank's accumulators, one set per thread, sized to the largest index ranked on it (9 bytes a
// document: 9 MB per searching thread at 1M memories); every slot a Rank touches is zero again
// when it returns.
struct Bm25Index::Scratch {
  static constexpr uint8_t kAccepted = 1, kRefused = 2, kCandidate = 4, kTouched = 8;
  std::vector<double> acc;        // by slot: partial score; a candidate's exact one once scored
  std::vector<uint8_t> flags;     // by slot: the k* bits
  std::vector<uint32_t> touched;  // the slots some added term's postings hold
  std::vector<uint32_t> candidates;
  std::vector<double> values;
  size_t postings_read = 0;  // by the last Rank

  void Touch(uint32_t doc) {
    if (flags[doc] & kTouched) return;
    flags[doc] |= kTouched;
    touched.push_back(doc);
  }
  // Asks `filter` once per document.
  bool Accepted(uint32_t doc, int64_t id, Accept filter, const void* context) {
    if (filter == nullptr) return true;
    if ((flags[doc] & (kAccepted | kRefused)) == 0) flags[doc] |= filter(context, id) ? kAccepted : kRefused;
    return (flags[doc] & kAccepted) != 0;
  }
  void Clear() {
    for (const uint32_t d : touched) {
      acc[d] = 0;
      flags[d] = 0;
    }
    touched.clear();
    candidates.clear();
  }
};

namespace {

// Relative slack on every pruning comparison: orders of magnitude above the rounding of a sum of a
// few thousand terms, so a rounding difference never prunes a document of the exact top k.
constexpr double kSlack = 1e-9;
bool CertainlyBelow(double bound, double threshold) {
  return bound * (1 + kSlack) < threshold * (1 - kSlack);
}

// Up to this many query tokens, RankTerms finds repeated ones without a hash set.
constexpr size_t kShortQueryTokens = 16;

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
    bounds_[id] = TermBound();
  } else {
    postings_.emplace_back();
    term_names_.emplace_back(term);
    bounds_.emplace_back();
  }
  term_ids_.emplace(std::string(term), id);
  return id;
}

std::vector<std::pair<std::string_view, uint32_t>> Bm25Index::DocumentTerms(int64_t id) const {
  std::vector<std::pair<std::string_view, uint32_t>> out;
  const auto it = position_by_id_.find(id);
  if (it == position_by_id_.end()) return out;
  const std::vector<uint32_t>& terms = terms_[it->second];
  out.reserve(terms.size());
  for (const uint32_t t : terms) {
    out.emplace_back(term_names_[t], static_cast<uint32_t>(postings_[t].size()));
  }
  return out;
}

double Bm25Index::Idf(uint32_t df) const {
  const double n = static_cast<double>(size());
  return std::log(1.0 + (n - df + 0.5) / (df + 0.5));
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
  const uint32_t length = static_cast<uint32_t>(tokens.size());
  for (size_t i = 0; i < ids.size();) {
    size_t j = i + 1;
    while (j < ids.size() && ids[j] == ids[i]) ++j;
    const Posting posting{doc, static_cast<uint32_t>(j - i)};
    std::vector<Posting>& postings = postings_[ids[i]];
    if (postings.empty() || postings.back().doc < doc) {
      postings.push_back(posting);
    } else {  // a reused slot: postings stay in ascending doc order (Rank's exact scoring searches them)
      postings.insert(std::lower_bound(postings.begin(), postings.end(), doc,
                                       [](const Posting& p, uint32_t d) { return p.doc < d; }),
                      posting);
    }
    TermBound& bound = bounds_[ids[i]];
    bound.max_tf = std::max(bound.max_tf, posting.tf);
    bound.min_length = std::min(bound.min_length, length);
    terms.push_back(ids[i]);
    i = j;
  }
  position_by_id_[id] = doc;
  ids_[doc] = id;
  lengths_[doc] = length;
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

Bm25Index::Scratch& Bm25Index::ThreadScratch() {
  thread_local Scratch scratch;  // all zero between calls
  return scratch;
}

size_t Bm25Index::PostingsReadByLastSearch() { return ThreadScratch().postings_read; }

std::vector<Bm25Hit> Bm25Index::Search(std::span<const std::string> query_tokens, int k, Accept accept,
                                       const void* context, std::span<const double> query_weights) const {
  return Rank(*this, query_tokens, k, accept, context, query_weights, /*prune=*/true);
}

std::vector<Bm25Hit> Bm25Index::SearchExhaustive(std::span<const std::string> query_tokens, int k,
                                                 Accept accept, const void* context,
                                                 std::span<const double> query_weights) const {
  return Rank(*this, query_tokens, k, accept, context, query_weights, /*prune=*/false);
}

std::vector<Bm25Hit> Bm25Index::SearchWithStatisticsOf(const Bm25Index& statistics,
                                                       std::span<const std::string> query_tokens, int k,
                                                       std::span<const double> query_weights,
                                                       double floor) const {
  return Rank(statistics, query_tokens, k, nullptr, nullptr, query_weights, /*prune=*/true, floor);
}

std::vector<Bm25Index::RankTerm> Bm25Index::RankTerms(const Bm25Index& statistics,
                                                      std::span<const std::string> query_tokens,
                                                      std::span<const double> query_weights,
                                                      double avgdl) const {
  const double n = static_cast<double>(statistics.position_by_id_.size());
  std::vector<RankTerm> terms;
  // A repeated token counts once. A short query (the common case) is searched linearly: hashing
  // every token once more cost as much as the pots' whole BM25 pass of the honeypot observation.
  const bool short_query = query_tokens.size() <= kShortQueryTokens;
  absl::flat_hash_set<std::string_view> seen;
  for (size_t q = 0; q < query_tokens.size(); ++q) {
    const std::string& term = query_tokens[q];
    const auto earlier = query_tokens.begin() + static_cast<ptrdiff_t>(q);
    if (short_query ? std::find(query_tokens.begin(), earlier, term) != earlier : !seen.insert(term).second) {
      continue;
    }
    const auto found = term_ids_.find(absl::string_view(term.data(), term.size()));
    if (found == term_ids_.end()) continue;
    const std::vector<Posting>& postings = postings_[found->second];
    double df = static_cast<double>(postings.size());
    if (&statistics != this) {
      const std::vector<Posting>* stats = statistics.PostingsOf(term);
      df = stats == nullptr ? 0.0 : static_cast<double>(stats->size());
    }
    const double idf = QueryWeight(query_weights, q) * std::log(1.0 + (n - df + 0.5) / (df + 0.5));
    if (!(idf > 0)) continue;  // a zero weight: adds nothing (and must not list a document twice)
    const TermBound& bound = bounds_[found->second];
    terms.push_back({&postings, idf, Contribution(idf, bound.max_tf, bound.min_length, avgdl)});
  }
  return terms;
}

// Scores this index's documents against `statistics`' N, df and avgdl (this index's own for Search).
std::vector<Bm25Hit> Bm25Index::Rank(const Bm25Index& statistics, std::span<const std::string> query_tokens,
                                     int k, Accept accept, const void* context,
                                     std::span<const double> query_weights, bool prune, double floor) const {
  ThreadScratch().postings_read = 0;
  if (k <= 0 || position_by_id_.empty()) return {};
  const double n = static_cast<double>(statistics.position_by_id_.size());
  const double avgdl = n > 0 ? std::max(1.0, static_cast<double>(statistics.total_length_) / n) : 1.0;
  const std::vector<RankTerm> terms = RankTerms(statistics, query_tokens, query_weights, avgdl);
  if (terms.empty()) return {};
  Scratch& s = ThreadScratch();
  s.postings_read = 0;
  if (s.acc.size() < ids_.size()) {
    s.acc.resize(ids_.size(), 0.0);
    s.flags.resize(ids_.size(), 0);
  }
  const size_t wanted = static_cast<size_t>(k);
  double theta = 0;
  double left = 0;  // bound of the terms not added
  if (prune) {
    left = AccumulateEssential(terms, wanted, accept, context, avgdl, floor, &s, &theta);
  } else {  // every term: all matching documents are candidates
    for (const RankTerm& t : terms) {
      for (const Posting& p : *t.postings) s.Touch(p.doc);
      s.postings_read += t.postings->size();
    }
  }
  for (const uint32_t d : s.touched) {
    if (!s.Accepted(d, ids_[d], accept, context)) continue;
    if (theta > 0 && CertainlyBelow(s.acc[d] + left, theta)) continue;  // cannot reach the top k
    s.candidates.push_back(d);
  }
  ScoreCandidates(terms, avgdl, &s);
  std::erase_if(s.candidates, [&](uint32_t d) { return !(s.acc[d] > 0) || s.acc[d] < floor; });
  const size_t keep = std::min(s.candidates.size(), wanted);
  std::partial_sort(
      s.candidates.begin(), s.candidates.begin() + static_cast<ptrdiff_t>(keep), s.candidates.end(),
      [&](uint32_t a, uint32_t b) { return s.acc[a] != s.acc[b] ? s.acc[a] > s.acc[b] : ids_[a] < ids_[b]; });
  std::vector<Bm25Hit> hits;
  hits.reserve(keep);
  for (size_t i = 0; i < keep; ++i) hits.push_back({ids_[s.candidates[i]], s.acc[s.candidates[i]]});
  s.Clear();
  return hits;
}

double Bm25Index::AccumulateEssential(std::span<const RankTerm> terms, size_t k, Accept accept,
                                      const void* context, double avgdl, double floor, Scratch* s,
                                      double* theta) const {
  std::vector<size_t> order(terms.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return terms[a].bound > terms[b].bound; });
  std::vector<double> left(order.size() + 1, 0.0);  // left[i]: the bounds of order[i..] summed
  for (size_t i = order.size(); i-- > 0;) left[i] = left[i + 1] + terms[order[i]].bound;
  double best = 0;
  if (floor > 0 && CertainlyBelow(left[0], floor)) {  // no document can reach the floor
    *theta = floor;
    return left[0];
  }
  for (size_t i = 0; i < order.size(); ++i) {
    const RankTerm& t = terms[order[i]];
    s->postings_read += t.postings->size();
    for (const Posting& p : *t.postings) {
      s->Touch(p.doc);
      double& acc = s->acc[p.doc];
      acc += Contribution(t.idf, p.tf, lengths_[p.doc], avgdl);
      best = std::max(best, acc);
    }
    if (i + 1 == order.size()) break;
    // A document no added term reached scores at most left[i + 1]: stop once that is certainly
    // below the floor, or k documents are certainly better. (Cheap test first: the k-th best is at
    // most the best.)
    if (floor > 0 && CertainlyBelow(left[i + 1], floor)) {
      *theta = std::max(floor, KthBest(k, accept, context, s));
      return left[i + 1];
    }
    if (s->touched.size() < k || !CertainlyBelow(left[i + 1], best)) continue;
    *theta = std::max(floor, KthBest(k, accept, context, s));
    if (CertainlyBelow(left[i + 1], *theta)) return left[i + 1];
  }
  *theta = std::max(floor, KthBest(k, accept, context, s));
  return 0;
}

double Bm25Index::KthBest(size_t k, Accept accept, const void* context, Scratch* s) const {
  s->values.clear();
  for (const uint32_t d : s->touched) {
    if (s->Accepted(d, ids_[d], accept, context)) s->values.push_back(s->acc[d]);
  }
  if (s->values.size() < k) return 0;
  std::nth_element(s->values.begin(), s->values.begin() + static_cast<ptrdiff_t>(k - 1), s->values.end(),
                   std::greater<double>());
  return s->values[k - 1];
}

void Bm25Index::ScoreCandidates(std::span<const RankTerm> terms, double avgdl, Scratch* s) const {
  // Either search each candidate in each term's postings (few candidates) or read the postings
  // once (many), whichever reads fewer postings; both add the terms in query order.
  double search_cost = 0, scan_cost = 0;
  for (const RankTerm& t : terms) {
    search_cost += std::log2(static_cast<double>(t.postings->size()) + 2);
    scan_cost += static_cast<double>(t.postings->size());
  }
  if (search_cost * static_cast<double>(s->candidates.size()) < scan_cost) {
    for (const uint32_t d : s->candidates) {
      double score = 0;
      for (const RankTerm& t : terms) {
        const auto it = std::lower_bound(t.postings->begin(), t.postings->end(), d,
                                         [](const Posting& p, uint32_t doc) { return p.doc < doc; });
        if (it != t.postings->end() && it->doc == d) score += Contribution(t.idf, it->tf, lengths_[d], avgdl);
      }
      s->acc[d] = score;
    }
    return;
  }
  for (const uint32_t d : s->candidates) {
    s->flags[d] |= Scratch::kCandidate;
    s->acc[d] = 0;
  }
  for (const RankTerm& t : terms) {
    for (const Posting& p : *t.postings) {
      if (s->flags[p.doc] & Scratch::kCandidate) {
        s->acc[p.doc] += Contribution(t.idf, p.tf, lengths_[p.doc], avgdl);
      }
    }
  }
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
    score += Contribution(idf, in_doc->second, static_cast<double>(doc_tokens.size()), avgdl);
  }
  return score;
}

}  // namespace bulwark
