// The per-round log-likelihood-ratio estimators of MemPot Sec. 4.3 that feed the SPRT, computed
// from one retrieval observation in O(k_obs + K_g) without allocating:
//   count              log r = log((|D+| + eps_cnt) / (|D-| + eps_cnt))                    Eq. 17
//   similarity         log r = log((sum_{D+} s + eps_sim) / (sum_{D-} s + eps_sim))        Eq. 18
//   global_similarity  log r = log(((1/K) sum_{top-K pots} s + eps_sim) /
//                                  ((1/K) sum_{top-K non-pots} s + eps_sim))             Eq. 19
//   count_calibrated   log(p1(n) / p0(n)), n = |D+|, with Jeffreys-smoothed pmfs of n under
//                      attack and benign queries (research/mempot.md 2.5): the actual Wald LLR
//                      of the count statistic; Eq. 17 is a heuristic ratio and not an LLR.
// D is the top k_obs of the unfiltered ranking over memories and pots, D+ its pots, D- the rest,
// s the query-entry cosine. Cosines are clamped at 0 in Eq. 18-19 (lexical cosines can be
// negative; a negative similarity sum would make the ratio meaningless).
#pragma once

#include <absl/status/statusor.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string_view>
#include <vector>

namespace bulwark::honeypot {

// One retrieved row of the observation: its cosine to the query, whether it is a pot, and its
// row id (EntryStore::ObservedRow::row_id; -1 when unknown), which the coverage evidence
// (coverage_evidence.h) counts.
struct RetrievedRow {
  float score = 0;
  bool is_pot = false;
  int64_t id = -1;
};

// What the monitor sees of one search (never shown to the caller).
struct Observation {
  std::span<const RetrievedRow> top;            // the first k_obs rows of the augmented ranking
  std::span<const float> global_pot_scores;     // Eq. 19: the K_g best pot cosines in the store
  std::span<const float> global_memory_scores;  // Eq. 19: the K_g best non-pot cosines
  // Evidence from the query's text (IntentEvidence::Llr, intent_evidence.h), added to the
  // estimator's LLR in the same SPRT; 0 without text evidence.
  double text_llr = 0;
  int pot_count() const;
};

enum class LlrEstimatorKind { kCount, kSimilarity, kGlobalSimilarity, kCountCalibrated };
std::string_view ToString(LlrEstimatorKind kind);
// "count" | "similarity" | "global_similarity" | "count_calibrated"; InvalidArgument otherwise.
[[nodiscard]] absl::StatusOr<LlrEstimatorKind> ParseLlrEstimatorKind(std::string_view name);

// The calibrated count LLR table: llr[n] = log(p1(n) / p0(n)) for n = 0 .. k_obs.
struct CountCalibration {
  std::vector<double> llr;

  // Fits the table from the pot counts n (0 .. k_obs) that benign and attack queries drew, with
  // p(n) = (c(n) + 1/2) / (N + (k_obs + 1) / 2) (Jeffreys prior) on each side, against the
  // contaminated alternative
  //   p1'(n) = (1 - rho) p1(n) + rho p0(n),   llr[n] = log((1 - rho) p1(n) / p0(n) + rho)
  // (rho = unseen_weight: the share of an extractor's queries the pots tell nothing about -- an
  // attack family the fit never saw draws pots like a benign user; rho = 0 is the plain table),
  // then clamps every entry to [-cap, cap] (cap <= 0: no clamp; cap = log A forbids single-round
  // decisions). With rho > 0 no entry is below log(rho): a round without pots can cancel at most
  // -log(rho) of other evidence (doc/honeypots.md, "Unseen attack families").
  // With `monotone`, the ratio p1/p0 is first made non-decreasing in n by pooling adjacent
  // violators (the isotonic regression of p1/p0 weighted by p0: a pooled block's ratio is its summed
  // p1 over its summed p0, so both pmfs still sum to 1 and the smallest ratio is <= 1, i.e.
  // llr[0] <= 0): a larger count is never weaker evidence (coverage_evidence.h).
  // InvalidArgument if k_obs is outside [1, 64], a side is empty, a count is outside [0, k_obs]
  // or unseen_weight is outside [0, 1).
  [[nodiscard]] static absl::StatusOr<CountCalibration> Fit(std::span<const int> benign_counts,
                                                            std::span<const int> attack_counts, int k_obs,
                                                            double cap = 0, double unseen_weight = 0,
                                                            bool monotone = false);
  // {"llr": [..]}. FromJson: InvalidArgument unless 2 .. 65 finite numbers.
  nlohmann::json ToJson() const;
  [[nodiscard]] static absl::StatusOr<CountCalibration> FromJson(const nlohmann::json& j);
};

struct LlrOptions {
  LlrEstimatorKind kind = LlrEstimatorKind::kCount;
  double count_epsilon = 0.5;        // eps_cnt of Eq. 17, > 0 (the paper gives none; FDT = 1 at
                                     //   k = 4 needs <= 0.5, research/mempot.md 2.5)
  double similarity_epsilon = 0.01;  // eps_sim of Eq. 18-19, > 0
  int global_k = 4;                  // K_g of Eq. 19, 1 .. 64
  CountCalibration calibration;      // required for kCountCalibrated
};

// InvalidArgument for an epsilon <= 0 or not finite, global_k outside [1, 64], or
// kCountCalibrated without a table.
[[nodiscard]] absl::Status ValidateLlrOptions(const LlrOptions& options);

// log r_t of the chosen estimator for one observation, plus obs.text_llr. A count beyond the
// calibrated table uses its last entry. Precondition: ValidateLlrOptions(options).ok().
double ObservationLlr(const Observation& obs, const LlrOptions& options);

// The estimator's LLR alone (without obs.text_llr).
double PotLlr(const Observation& obs, const LlrOptions& options);
// The individual estimators.
double CountLlr(int pots, int non_pots, double epsilon);                  // Eq. 17
double SimilarityLlr(std::span<const RetrievedRow> top, double epsilon);  // Eq. 18
double GlobalSimilarityLlr(std::span<const float> pot_scores, std::span<const float> memory_scores, int k,
                           double epsilon);  // Eq. 19

}  // namespace bulwark::honeypot
