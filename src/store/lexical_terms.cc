// Words and WordNet concept terms of the lexical index (see lexical_terms.h).
#include "store/lexical_terms.h"

#include <spdlog/spdlog.h>

namespace bulwark {

LexicalTerms::LexicalTerms(const HybridOptions& options, const std::string& wordnet_dir)
    : words_(options.tokenizer),
      document_options_(options.document_concepts),
      query_options_{.senses = options.query_senses,
                     .up = 0,
                     .min_depth = options.document_concepts.min_depth,
                     .holonyms = false,
                     .verbs = options.query_verbs},
      concept_weight_(options.concept_weight) {
  if (!options.concepts) return;
  absl::StatusOr<std::shared_ptr<const WordNetConcepts>> concepts = WordNetConcepts::Shared(wordnet_dir);
  if (!concepts.ok()) {
    spdlog::warn("hybrid ranking without WordNet concepts: {}", concepts.status().ToString());
    return;
  }
  concepts_ = *std::move(concepts);
}

std::vector<std::string> LexicalTerms::Document(std::string_view text) const {
  std::vector<std::string> terms = words_.Tokens(text);
  if (concepts_ == nullptr) return terms;
  for (const std::string& word : concept_words_.Tokens(text)) {
    concepts_->DocumentConcepts(word, document_options_, &terms);
  }
  return terms;
}

QueryTerms LexicalTerms::Query(std::string_view text) const {
  QueryTerms query;
  query.tokens = words_.Tokens(text);
  query.weights.assign(query.tokens.size(), 1.0);
  if (concepts_ == nullptr) return query;
  for (const std::string& word : concept_words_.Tokens(text)) {
    concepts_->QueryConcepts(word, query_options_, &query.tokens);
  }
  query.weights.resize(query.tokens.size(), concept_weight_);
  return query;
}

}  // namespace bulwark
