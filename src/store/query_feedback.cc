// Pseudo-relevance feedback of the lexical side (see query_feedback.h).
#include "store/query_feedback.h"

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>
#include <absl/strings/ascii.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "index/lexical_tokenizer.h"

namespace bulwark {
namespace {

// A word of the lexical tokenizer: concept ("~"), gloss ("^") and answer-type ("#") terms start
// with a byte no word has.
bool IsWord(std::string_view term) {
  return !term.empty() && (absl::ascii_isalnum(static_cast<unsigned char>(term[0])) ||
                           static_cast<unsigned char>(term[0]) >= 0x80);
}

}  // namespace

QueryTerms ExpandWithFeedback(const Bm25Index& index, const QueryTerms& query,
                              std::span<const int64_t> feedback, const HybridOptions& options) {
  QueryTerms expanded = query;
  if (options.prf_docs <= 0 || options.prf_terms <= 0 || options.prf_weight <= 0) return expanded;
  const absl::flat_hash_set<std::string_view> asked(query.tokens.begin(), query.tokens.end());
  // P(d | q) by fused rank, then P(t | R) (query_feedback.h), both unnormalised until the end.
  absl::flat_hash_map<std::string_view, double> relevance;
  absl::flat_hash_map<std::string_view, uint32_t> df;
  double mass = 0;
  int used = 0;
  for (size_t rank = 0; rank < feedback.size() && used < options.prf_docs; ++rank) {
    const std::vector<std::pair<std::string_view, uint32_t>> terms = index.DocumentTerms(feedback[rank]);
    if (terms.empty()) continue;
    ++used;
    const double p_doc = 1.0 / (options.rrf_k + static_cast<double>(rank + 1));
    mass += p_doc;
    for (const auto& [term, frequency] : terms) {
      if (frequency < 2 || !IsWord(term) || asked.contains(term)) continue;
      if (IsLexicalStopWord(term) || IsLexicalQuestionWord(term)) continue;
      relevance[term] += p_doc / static_cast<double>(terms.size());
      df[term] = frequency;
    }
  }
  if (relevance.empty() || mass <= 0) return expanded;
  std::vector<std::pair<double, std::string_view>> scored;
  scored.reserve(relevance.size());
  for (const auto& [term, p] : relevance) scored.emplace_back(p / mass * index.Idf(df[term]), term);
  const size_t keep = std::min(scored.size(), static_cast<size_t>(options.prf_terms));
  // Best first; equal scores in term order, so the expansion does not depend on hash order.
  std::partial_sort(scored.begin(), scored.begin() + static_cast<std::ptrdiff_t>(keep), scored.end(),
                    [](const auto& a, const auto& b) {
                      return a.first != b.first ? a.first > b.first : a.second < b.second;
                    });
  const double best = scored.front().first;
  if (!(best > 0)) return expanded;
  for (size_t i = 0; i < keep; ++i) {
    expanded.tokens.emplace_back(scored[i].second);
    expanded.weights.push_back(options.prf_weight * scored[i].first / best);
  }
  return expanded;
}

}  // namespace bulwark
