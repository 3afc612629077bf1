// Relevance evidence for the honeypot monitor (issue #13 point 7, the attack that words its
// requests as plain questions): a per-query log-likelihood ratio from how close the query came to
// ANY stored memory, added to the pot estimator's LLR in the same Wald SPRT (like the
// extraction-intent grammar's, intent_evidence.h; Observation::text_llr carries the sum).
//
// The principle: an extractor does not know what the store holds, so it probes -- anchor words,
// random suffixes, generic requests -- and many of its queries land where no memory is close. A
// user asks about their own world, which the store was written from, so their queries mostly
// land near something stored. It needs no wording and no pot: only the best memory cosine of the
// observation the monitor already has.
//
//   l_rel(q) = l  if best_memory_cosine(q) < tau,  else 0
//   tau      = the `quantile` of the benign queries' best memory cosines (default 0.1)
//   l        = clamp(log(p1 / p0), 0, cap),  p0 = (b + 1/2) / (N0 + 1),  p1 = (a + 1/2) / (N1 + 1)
//
// b, a: benign and attack calibration queries below tau (so p0 is about `quantile` by
// construction). No negative evidence (a query near a memory says nothing: an extractor can copy
// a stored phrase), and a cap (default 1.1, as the count table's and the intent table's): one
// query alone never blocks.
#pragma once

#include <absl/status/statusor.h>

#include <cstddef>
#include <nlohmann/json.hpp>
#include <span>

namespace bulwark::honeypot {

struct RelevanceCalibration {
  double threshold = 0;  // tau
  double llr = 0;        // l, in [0, cap]
  double quantile = 0.1;
  double benign_rate = 0, attack_rate = 0;  // p0, p1
  size_t benign_queries = 0, attack_queries = 0;

  // Fits tau and l from the best memory cosine of each benign and attack calibration query.
  // InvalidArgument if a side is empty, a score is not finite, quantile is not in (0, 0.5] or cap
  // is not in (0, 20].
  [[nodiscard]] static absl::StatusOr<RelevanceCalibration> Fit(std::span<const float> benign_best,
                                                                std::span<const float> attack_best,
                                                                double quantile = 0.1, double cap = 1.1);
  // l_rel for a query whose best memory cosine is `best` (NaN counts as no memory close).
  double Llr(double best) const { return best >= threshold ? 0.0 : llr; }
  // {"threshold", "llr", "quantile", "benign_rate", "attack_rate", "benign_queries",
  // "attack_queries"}.
  nlohmann::json ToJson() const;
};

}  // namespace bulwark::honeypot
