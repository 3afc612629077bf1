// LexicalTerms: the terms the store's lexical (BM25) index holds for a memory and asks for a query
// (hybrid ranking, hybrid_ranking.h): the lexical tokenizer's words (index/lexical_tokenizer.h)
// and, with HybridOptions::concepts, WordNet concept terms (embed/wordnet_concepts.h: a memory's
// words add their synsets and hypernyms, a query's words their synsets, weighted
// HybridOptions::concept_weight) and, with HybridOptions::glosses, WordNet gloss terms
// (embed/wordnet_glosses.h: a memory's words add "^" + each word of their gloss neighbourhoods and
// "^" + their own canonical form; a query's words ask for "^" + their canonical form with weight
// gloss_weight, and for their own neighbourhoods with gloss_weight * gloss_query_related). So
// "what vehicle" meets "I drive" ("drive": "operate or control a vehicle") through BM25, whose
// IDF discounts words that many glosses share. With HybridOptions::answer_types, answer-type terms
// (store/answer_types.h: a memory's slot kinds, "#date", "#amount", ...; a question's asked-for
// kinds, weighted answer_type_weight). With HybridOptions::thesaurus, thesaurus association terms
// (embed/thesaurus.h: a memory's words add "%" + the head words of the thesaurus meanings that list
// them, counted once per distinct memory word; a query's words ask for "%" + their canonical form
// with weight thesaurus_weight). Independent of the store's embedder. Thread-safe.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "embed/thesaurus.h"
#include "embed/wordnet_concepts.h"
#include "embed/wordnet_glosses.h"
#include "index/lexical_tokenizer.h"
#include "store/hybrid_ranking.h"

namespace bulwark {

struct QueryTerms {
  std::vector<std::string> tokens;
  std::vector<double> weights;  // one per token (Bm25Index::Search's query_weights)
};

class LexicalTerms {
 public:
  // With options.concepts, loads WordNet from `wordnet_dir` (shared per process); if that fails
  // (files missing or damaged) concepts are off, which concepts_enabled() reports and a warning
  // logs: the lexical side then holds words only, as with concepts off.
  // With options.thesaurus, loads the thesaurus from `thesaurus_dir` likewise (off on failure,
  // thesaurus_enabled() false, a warning logged).
  explicit LexicalTerms(const HybridOptions& options,
                        const std::string& wordnet_dir = std::string(WordNetCanonicalizer::kDefaultDir),
                        const std::string& thesaurus_dir = std::string(Thesaurus::kDefaultDir));

  // A memory's terms: its words, then its gloss, concept and answer-type terms.
  std::vector<std::string> Document(std::string_view text) const;
  // A query's terms: its words (weight 1; without "what", "when", "do", ... unless
  // HybridOptions::query_question_words), then its gloss and concept terms (weight
  // concept_weight) and its answer-type terms (weight answer_type_weight).
  QueryTerms Query(std::string_view text) const;

  bool concepts_enabled() const { return concepts_ != nullptr; }
  bool glosses_enabled() const { return glosses_ != nullptr; }
  bool thesaurus_enabled() const { return thesaurus_ != nullptr; }

 private:
  LexicalTokenizer words_;
  LexicalTokenizer query_words_;  // words_ without question words (HybridOptions::query_question_words)
  LexicalTokenizer concept_words_{{.stem = false, .stop_words = true}};  // unstemmed, for WordNet
  std::shared_ptr<const WordNetConcepts> concepts_;                      // null: concepts off
  ConceptOptions document_options_;
  ConceptOptions query_options_;
  double concept_weight_;
  std::shared_ptr<const WordNetCanonicalizer> canonicalizer_;  // set with glosses_
  std::shared_ptr<const WordNetGlosses> glosses_;              // null: glosses off
  double gloss_weight_;
  double gloss_query_related_;
  int gloss_senses_;
  bool answer_types_;
  double answer_type_weight_;
  std::shared_ptr<const Thesaurus> thesaurus_;  // null: thesaurus off; canonicalizer_ set with it
  double thesaurus_weight_;
  int thesaurus_min_links_;
  bool thesaurus_members_;
  double thesaurus_query_related_;

  std::string ThesaurusKey(std::string_view word) const;
  void LoadThesaurus(const std::string& wordnet_dir, const std::string& thesaurus_dir);
  void AddThesaurusDocumentTerms(std::string_view text, std::vector<std::string>* terms) const;
  void AddThesaurusQueryTerms(std::string_view text, QueryTerms* query) const;
};

}  // namespace bulwark
