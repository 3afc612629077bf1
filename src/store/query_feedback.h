// Pseudo-relevance feedback for the hybrid ranking's lexical side (issue #19 point 4): the query
// is expanded with the words its best-ranked memories share, and the lexical index is searched
// again with the expanded query. A relevance model (Lavrenko & Croft 2001, "Relevance-based
// language models", SIGIR, Eq. 9) estimated from the top `prf_docs` of the first fused ranking,
// interpolated with the original query as RM3 does (Abdul-Jaleel et al. 2004, "UMass at TREC
// 2004", Sec. 2.2):
//   P(t | R) = sum over feedback documents d of P(d | q) * P(t | d)
//   P(d | q) = the fused ranking's reciprocal-rank weight 1 / (rrf_k + rank(d)), normalised over
//              the feedback documents; P(t | d) = 1 / |distinct terms of d|
// Terms are chosen by P(t | R) * idf(t) (Robertson's offer weight form: a word most memories hold
// says nothing), only words (no concept, gloss or answer-type term), never a question word or a
// term of the query itself, and only terms at least two memories hold (a term of one feedback
// document alone would only lift that document again). The best `prf_terms` are added with query
// weight prf_weight * (their score / the best one's), the original terms keep theirs.
#pragma once

#include <cstdint>
#include <span>

#include "index/bm25_index.h"
#include "store/hybrid_ranking.h"
#include "store/lexical_terms.h"

namespace bulwark {

// `query` with at most options.prf_terms feedback terms of `feedback` (document ids of `index`,
// best first; ids the index does not hold are skipped) appended. `query` unchanged when
// options.prf_docs is 0, `feedback` holds none of the index's documents, or no term qualifies.
QueryTerms ExpandWithFeedback(const Bm25Index& index, const QueryTerms& query,
                              std::span<const int64_t> feedback, const HybridOptions& options);

}  // namespace bulwark
