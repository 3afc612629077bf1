// Words and WordNet concept terms of the lexical index (see lexical_terms.h).
#include "store/lexical_terms.h"

#include <absl/container/flat_hash_map.h>
#include <absl/strings/str_cat.h>
#include <spdlog/spdlog.h>

#include "core/strings.h"
#include "store/answer_types.h"

namespace bulwark {
namespace {

// Prefix of gloss terms; never a byte of a lexical-tokenizer word nor a concept term's '~'.
constexpr absl::string_view kGlossPrefix = "^";
// Prefix of thesaurus terms; distinct from the other prefixes and from every tokenizer word.
constexpr absl::string_view kThesaurusPrefix = "%";

}  // namespace

LexicalTerms::LexicalTerms(const HybridOptions& options, const std::string& wordnet_dir,
                           const std::string& thesaurus_dir)
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
      answer_type_weight_(options.answer_type_weight),
      thesaurus_weight_(options.thesaurus_weight),
      thesaurus_min_links_(options.thesaurus_min_links),
      thesaurus_members_(options.thesaurus_members),
      thesaurus_query_related_(options.thesaurus_query_related) {
  if (options.thesaurus) LoadThesaurus(wordnet_dir, thesaurus_dir);
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
  if (thesaurus_ != nullptr) AddThesaurusDocumentTerms(text, &terms);
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
  if (thesaurus_ != nullptr) AddThesaurusQueryTerms(text, &query);
  return query;
}

void LexicalTerms::LoadThesaurus(const std::string& wordnet_dir, const std::string& thesaurus_dir) {
  absl::StatusOr<std::shared_ptr<const Thesaurus>> thesaurus = Thesaurus::Shared(thesaurus_dir);
  absl::StatusOr<std::shared_ptr<const WordNetCanonicalizer>> canonicalizer =
      WordNetCanonicalizer::Shared(wordnet_dir);
  if (!thesaurus.ok() || !canonicalizer.ok()) {
    spdlog::warn("hybrid ranking without the thesaurus: {}",
                 (thesaurus.ok() ? canonicalizer.status() : thesaurus.status()).ToString());
    return;
  }
  thesaurus_ = *std::move(thesaurus);
  canonicalizer_ = *std::move(canonicalizer);
}

// The word as the thesaurus lists it: itself if listed, else its first WordNet base form (noun,
// verb, adjective) that is listed ("migraines" -> "migraine", "ran" -> "run"), else itself.
std::string LexicalTerms::ThesaurusKey(std::string_view word) const {
  if (thesaurus_->Contains(word)) return std::string(word);
  for (const WordNetPos pos : {WordNetPos::kNoun, WordNetPos::kVerb, WordNetPos::kAdj}) {
    for (std::string& form : canonicalizer_->BaseForms(word, pos)) {
      if (thesaurus_->Contains(form)) return std::move(form);
    }
  }
  return std::string(word);
}

// A head counts once per distinct memory word that points to it (a word repeated in the memory,
// or reaching the head through two meanings, is one link), so one stray link weighs what one
// word does and BM25's term-frequency saturation rewards several words agreeing. Heads with fewer
// than thesaurus_min_links links are dropped. Terms in order of first link (deterministic).
void LexicalTerms::AddThesaurusDocumentTerms(std::string_view text, std::vector<std::string>* terms) const {
  absl::flat_hash_map<uint32_t, int> links;
  std::vector<uint32_t> order;
  std::vector<std::string> seen_words;
  const std::vector<std::string> words = concept_words_.Tokens(text);
  std::vector<uint32_t> heads;
  for (const std::string& word : words) {
    const std::string canonical = ThesaurusKey(word);
    if (std::find(seen_words.begin(), seen_words.end(), canonical) != seen_words.end()) continue;
    seen_words.push_back(canonical);
    heads.clear();
    const auto add = [&](uint32_t id) {
      if (std::find(heads.begin(), heads.end(), id) == heads.end()) heads.push_back(id);
    };
    if (thesaurus_members_) {
      thesaurus_->ForEachMember(canonical, add);
    } else {
      thesaurus_->ForEachHead(canonical, add);
    }
    for (const uint32_t id : heads) {
      if (links[id]++ == 0) order.push_back(id);
    }
  }
  for (const uint32_t id : order) {
    const int count = links[id];
    if (count < thesaurus_min_links_) continue;
    const std::string term = absl::StrCat(kThesaurusPrefix, ToAbsl(thesaurus_->term(id)));
    for (int i = 0; i < count; ++i) terms->push_back(term);
  }
}

void LexicalTerms::AddThesaurusQueryTerms(std::string_view text, QueryTerms* query) const {
  for (const std::string& word : concept_words_.Tokens(text)) {
    const std::string canonical = ThesaurusKey(word);
    query->tokens.push_back(absl::StrCat(kThesaurusPrefix, ToAbsl(canonical)));
    query->weights.push_back(thesaurus_weight_);
    if (thesaurus_query_related_ <= 0) continue;
    thesaurus_->ForEachHead(canonical, [&](uint32_t id) {
      query->tokens.push_back(absl::StrCat(kThesaurusPrefix, ToAbsl(thesaurus_->term(id))));
      query->weights.push_back(thesaurus_weight_ * thesaurus_query_related_);
    });
  }
}

}  // namespace bulwark
