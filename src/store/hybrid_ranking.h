// Hybrid lexical + vector ranking (issue #19 point 2): the per-namespace retrieval setting
// (`retrieval: vector | hybrid`), its options (StoreOptions::retrieval_config), and the fusion of
// the two rankings.
//
// Fusion is weighted reciprocal-rank fusion (Cormack, Clarke & Buettcher 2009, "Reciprocal Rank
// Fusion outperforms Condorcet and individual rank learning methods", SIGIR, Eq. 1, with one
// weight per ranking):
//   fused(d) = w_vector / (k + rank_vector(d)) + w_lexical / (k + rank_lexical(d))
// ranks 1-based within the top `depth` of each ranking; a ranking that does not hold d adds 0.
#pragma once

#include <absl/status/statusor.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string_view>
#include <vector>

#include "embed/wordnet_concepts.h"
#include "embed/wordnet_glosses.h"
#include "index/bm25_index.h"
#include "index/lexical_tokenizer.h"

namespace bulwark {

enum class Retrieval { kVector, kHybrid };
std::string_view ToString(Retrieval retrieval);
// "vector" | "hybrid"; InvalidArgument otherwise.
[[nodiscard]] absl::StatusOr<Retrieval> ParseRetrieval(std::string_view name);

// The fusion constants were chosen on the tuning split only (retired_teacher + oncall_engineer;
// criterion: mean MRR at 1k and 10k entries; 19 settings tried, doc/retrieval.md "Hybrid ranking in
// the store"). The store-wide default is hybrid: on the tuning split it beats vector ranking at
// every store size (doc/retrieval.md "Default"). WordNet concepts stay off: they did not move the
// tuning split's MRR (doc/retrieval.md "WordNet concepts").
struct HybridOptions {
  Retrieval default_retrieval = Retrieval::kHybrid;  // namespaces without their own setting
  double rrf_k = 10;                                 // k of Eq. 1; >= 0
  int depth = 30;                                    // candidates taken from each ranking; 1 .. 1000
  double vector_weight = 1;                          // >= 0
  double lexical_weight = 3;                         // >= 0
  LexicalTokenizerOptions tokenizer = {.stem = true, .stop_words = false};
  // Whether a query's question words ("what", "when", "do", "can", ...: IsLexicalQuestionWord)
  // are BM25 terms. Off by default since session 10: dropping them raised the tuning split's MRR
  // by +0.007 / +0.018 / +0.026 (persona / 1k / 10k; doc/retrieval.md "Question words"). Documents
  // always keep them (they count in |d|).
  bool query_question_words = false;
  Bm25Options bm25;
  // WordNet concept terms in the lexical index (embed/wordnet_concepts.h): a memory's words add
  // their synsets and hypernyms, a query's words their synsets, weighted `concept_weight` against
  // a word's 1 in the BM25 query. Off when the WordNet files are missing.
  bool concepts = false;
  double concept_weight = 0.5;  // >= 0
  ConceptOptions document_concepts = {.senses = 1, .up = 2, .min_depth = 4, .holonyms = false};
  int query_senses = 3;     // synsets per query word and part of speech; 1 .. WordNetConcepts::kMaxSenses
  bool query_verbs = true;  // query side: verb synsets too (nouns always)
  // WordNet gloss terms in the lexical index (embed/wordnet_glosses.h, store/lexical_terms.h): a
  // memory's words add their gloss neighbourhoods, a query's words meet them with weight
  // `gloss_weight`, and the query words' own neighbourhoods with weight gloss_query_related.
  // Off when the WordNet files are missing.
  bool glosses = false;
  double gloss_weight = 0.5;       // >= 0
  double gloss_query_related = 0;  // >= 0; 0: the query's words only
  int gloss_senses = 1;            // 1 .. WordNetGlosses::kMaxSenses
  // Answer-type terms in the lexical index (store/answer_types.h): a memory holds "#date",
  // "#time", "#amount", "#number", "#name" for the kinds of slots it states, a question asks for
  // its type's terms ("when" -> "#date", "#time") with weight `answer_type_weight`.
  bool answer_types = false;
  double answer_type_weight = 1;  // >= 0
  // Pseudo-relevance feedback (store/query_feedback.h): the top `prf_docs` of the first fused
  // ranking give up to `prf_terms` expansion words, weighted up to `prf_weight`, and the lexical
  // side is searched again with them. prf_docs 0: off.
  int prf_docs = 0;         // 0 .. 20
  int prf_terms = 10;       // 1 .. 100
  double prf_weight = 0.3;  // >= 0
  // Thesaurus association terms in the lexical index (embed/thesaurus.h, store/lexical_terms.h):
  // a memory holds "%" + each head word whose thesaurus meaning lists one of its words, once per
  // distinct memory word pointing to it and only when at least `thesaurus_min_links` of them do
  // (all of the meanings' words with `thesaurus_members`); a query's words meet them with weight
  // `thesaurus_weight`, and the query words' own heads with weight thesaurus_weight *
  // thesaurus_query_related. Off when the thesaurus files are missing.
  bool thesaurus = false;
  double thesaurus_weight = 0.5;       // >= 0
  int thesaurus_min_links = 1;         // 1 .. 16
  bool thesaurus_members = false;      // heads only by default
  double thesaurus_query_related = 0;  // >= 0; 0: the query's words only
};

// StoreOptions::retrieval_config: null -> the defaults; otherwise an object with any of
// {"default": "vector"|"hybrid", "rrf_k", "depth", "vector_weight", "lexical_weight", "stem",
//  "stop_words", "query_question_words", "bm25_k1", "bm25_b", "concepts", "concept_weight", "concept_senses",
//  "concept_up", "concept_min_depth", "concept_holonyms", "query_senses", "query_verbs", "glosses",
//  "gloss_weight", "gloss_query_related", "gloss_senses", "answer_types", "answer_type_weight",
//  "prf_docs", "prf_terms", "prf_weight", "thesaurus", "thesaurus_weight", "thesaurus_min_links",
//  "thesaurus_members", "thesaurus_query_related"}.
// InvalidArgument names an unknown key, a wrong type or a value out of range.
[[nodiscard]] absl::StatusOr<HybridOptions> ParseRetrievalConfig(const nlohmann::json& config);

// The fused ranking (Eq. 1) of two rankings given best first (ids distinct within each), best
// first; equal fused scores to the lower id. Every id of either input appears once.
std::vector<int64_t> FuseRankings(std::span<const int64_t> vector_ranking,
                                  std::span<const int64_t> lexical_ranking, const HybridOptions& options);

}  // namespace bulwark
