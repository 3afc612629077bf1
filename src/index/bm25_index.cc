// Okapi BM25 over pre-tokenized documents (see bm25_index.h).
#include "index/bm25_index.h"

#include <absl/container/flat_hash_set.h>
#include <absl/strings/str_cat.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace bulwark {

Bm25Index::Bm25Index(Bm25Options options) : options_(options) {
  options_.k1 = std::max(0.0, options_.k1);
  options_.b = std::clamp(options_.b, 0.0, 1.0);
}

absl::Status Bm25Index::Add(int64_t id, std::span<const std::string> tokens) {
  if (position_by_id_.contains(id))
    return absl::InvalidArgumentError(absl::StrCat("document ", id, " already added"));
  if (ids_.size() >= std::numeric_limits<uint32_t>::max() ||
      tokens.size() >= std::numeric_limits<uint32_t>::max()) {
    return absl::InvalidArgumentError("index or document too large");
  }
  const uint32_t doc = static_cast<uint32_t>(ids_.size());
  absl::flat_hash_map<std::string_view, uint32_t> tf;
  for (const std::string& t : tokens) ++tf[t];
  for (const auto& [term, count] : tf) postings_[std::string(term)].push_back({doc, count});
  position_by_id_[id] = doc;
  ids_.push_back(id);
  lengths_.push_back(static_cast<uint32_t>(tokens.size()));
  total_length_ += tokens.size();
  return absl::OkStatus();
}

std::vector<Bm25Hit> Bm25Index::Search(std::span<const std::string> query_tokens, int k) const {
  if (k <= 0 || ids_.empty()) return {};
  const double n = static_cast<double>(ids_.size());
  const double avgdl = std::max(1.0, static_cast<double>(total_length_) / n);
  std::vector<double> scores(ids_.size(), 0.0);
  absl::flat_hash_set<std::string_view> seen;
  for (const std::string& term : query_tokens) {
    if (!seen.insert(term).second) continue;
    const auto it = postings_.find(term);
    if (it == postings_.end()) continue;
    const double df = static_cast<double>(it->second.size());
    const double idf = std::log(1.0 + (n - df + 0.5) / (df + 0.5));
    for (const Posting& p : it->second) {
      const double tf = p.tf;
      const double norm = options_.k1 * (1 - options_.b + options_.b * lengths_[p.doc] / avgdl);
      scores[p.doc] += idf * tf * (options_.k1 + 1) / (tf + norm);
    }
  }
  std::vector<uint32_t> matched;
  for (uint32_t d = 0; d < scores.size(); ++d) {
    if (scores[d] > 0) matched.push_back(d);
  }
  const size_t keep = std::min(matched.size(), static_cast<size_t>(k));
  std::partial_sort(matched.begin(), matched.begin() + keep, matched.end(), [&](uint32_t a, uint32_t b) {
    return scores[a] != scores[b] ? scores[a] > scores[b] : a < b;
  });
  std::vector<Bm25Hit> hits;
  hits.reserve(keep);
  for (size_t i = 0; i < keep; ++i) hits.push_back({ids_[matched[i]], scores[matched[i]]});
  return hits;
}

}  // namespace bulwark
