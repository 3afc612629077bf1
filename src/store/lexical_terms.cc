// Words and WordNet concept terms of the lexical index (see lexical_terms.h).
#include "store/lexical_terms.h"

#include <absl/strings/str_cat.h>
#include <spdlog/spdlog.h>

#include "core/strings.h"
#include "store/answer_types.h"

namespace bulwark {
namespace {

// Prefix of gloss terms; never a byte of a lexical-tokenizer word nor a concept term's '~'.
constexpr absl::string_view kGlossPrefix = "^";

}  // namespace

LexicalTerms::LexicalTerms(const HybridOptions& options, const std::string& wordnet_dir)
    : words_(options.tokenizer),
      query_words_({.stem = options.tokenizer.stem,
                    .stop_words = options.tokenizer.stop_words,
                    .question_words = !options.query_question_words}),
      document_options_(options.document_concepts),
      query_options_{.senses = options.query_senses,
                     .up = 0,
                     .min_depth = options.document_concepts.min_depth,
                     .holonyms = false,
                     .verbs = options.query_verbs},
      concept_weight_(options.concept_weight),
      gloss_weight_(options.gloss_weight),
      gloss_query_related_(options.gloss_query_related),
      gloss_senses_(options.gloss_senses),
      answer_types_(options.answer_types),
      answer_type_weight_(options.answer_type_weight) {
  if (options.glosses) {
    absl::StatusOr<std::shared_ptr<const WordNetGlosses>> glosses = WordNetGlosses::Shared(wordnet_dir);
    absl::StatusOr<std::shared_ptr<const WordNetCanonicalizer>> canonicalizer =
        WordNetCanonicalizer::Shared(wordnet_dir);
    if (glosses.ok() && canonicalizer.ok()) {
      glosses_ = *std::move(glosses);
      canonicalizer_ = *std::move(canonicalizer);
    } else {
      spdlog::warn("hybrid ranking without WordNet glosses: {}",
                   (glosses.ok() ? canonicalizer.status() : glosses.status()).ToString());
    }
  }
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
  if (glosses_ != nullptr) {
    for (const std::string& word : concept_words_.Tokens(text)) {
      const std::string_view canonical = canonicalizer_->Canonicalize(word);
      terms.push_back(absl::StrCat(kGlossPrefix, ToAbsl(canonical)));
      glosses_->ForEachRelated(canonical, gloss_senses_, [&](uint32_t id) {
        terms.push_back(absl::StrCat(kGlossPrefix, ToAbsl(glosses_->word(id))));
      });
    }
  }
  if (concepts_ != nullptr) {
    for (const std::string& word : concept_words_.Tokens(text)) {
      concepts_->DocumentConcepts(word, document_options_, &terms);
    }
  }
  if (answer_types_) {
    for (std::string& term : AnswerTypeTerms(TextAnswerTypes(text))) terms.push_back(std::move(term));
  }
  return terms;
}

QueryTerms LexicalTerms::Query(std::string_view text) const {
  QueryTerms query;
  query.tokens = query_words_.Tokens(text);
  query.weights.assign(query.tokens.size(), 1.0);
  if (glosses_ != nullptr) {
    for (const std::string& word : concept_words_.Tokens(text)) {
      const std::string_view canonical = canonicalizer_->Canonicalize(word);
      query.tokens.push_back(absl::StrCat(kGlossPrefix, ToAbsl(canonical)));
      query.weights.push_back(gloss_weight_);
      if (gloss_query_related_ <= 0) continue;
      glosses_->ForEachRelated(canonical, gloss_senses_, [&](uint32_t id) {
        query.tokens.push_back(absl::StrCat(kGlossPrefix, ToAbsl(glosses_->word(id))));
        query.weights.push_back(gloss_weight_ * gloss_query_related_);
      });
    }
  }
  if (concepts_ != nullptr) {
    for (const std::string& word : concept_words_.Tokens(text)) {
      concepts_->QueryConcepts(word, query_options_, &query.tokens);
    }
    query.weights.resize(query.tokens.size(), concept_weight_);
  }
  if (answer_types_) {
    for (std::string& term : AnswerTypeTerms(QuestionAnswerTypes(text))) {
      query.tokens.push_back(std::move(term));
      query.weights.push_back(answer_type_weight_);
    }
  }
  return query;
}

}  // namespace bulwark
