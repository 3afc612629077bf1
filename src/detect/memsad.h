// MemSAD (MemSAD paper Sec. 4): the semantic anomaly score of a candidate entry against the
// namespace's rolling query history H, its calibration on a benign reference set, the
// Theorem 11 calibration tolerance and the Lemma 8 certified-detection condition.
#pragma once

#include <absl/status/statusor.h>

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "detect/query_history.h"

namespace bulwark {

enum class MemsadMode { kMax, kMean, kCombined };
std::string_view ToString(MemsadMode mode);
absl::StatusOr<MemsadMode> ParseMemsadMode(std::string_view name);

// Scores of one candidate c against H = {q_1..q_m} (all L2-normalized, so cos = dot):
//   s_max  = max_q cos(c, q)                       (Definition 6)
//   s_mean = (1/|H|) sum_q cos(c, q)
//   s_comb = 0.5 s_max + 0.5 s_mean                (Eq. 7)
// With an empty history every score is 0 and argmax is -1.
struct MemsadScores {
  double s_max = 0;
  double s_mean = 0;
  double s_comb = 0;
  int argmax = -1;  // index in H of the query attaining s_max (the presumed victim query q*)
  size_t history_size = 0;

  double Get(MemsadMode mode) const;
};

// `rows` are `count` pointers to vectors of `dim` floats. One pass over H with the SIMD
// inner-product kernels (the O(md) cost of Algorithm 1).
MemsadScores ScoreAgainstHistory(std::span<const float> candidate, const float* const* rows, size_t count,
                                 size_t dim);
// The same scores over a QueryHistory. Below 128 rows, one float32 pass (bit-identical to the
// overload above); from 128 rows on, without a full float32 pass: the mean from the history's
// running row sum (one dot product), the max from its int8 bounds plus exact float32 dot
// products of the rows that can still be the max. s_max and argmax are bit-identical to the
// overload above on the same rows; s_mean equals it up to rounding (|diff| < 1e-6 for unit
// vectors: the sum is taken in double here, over float32 dot products there).
MemsadScores ScoreAgainstHistory(std::span<const float> candidate, const QueryHistory::View& history);

// Theorem 11: with probability >= 1 - delta,
//   |tau_N - tau*| <= eta = sigma (N^-1/2 + kappa (2(N-1))^-1/2) sqrt(2 ln(4/delta)).
// Requires n >= 2, 0 < delta < 1.
double CalibrationTolerance(double sigma, size_t n, double kappa, double delta);

// mu, sigma of the benign reference scores {s(m; H) : m in M_ref}; the detector flags s > mu +
// kappa sigma. sigma is the sample standard deviation (N - 1 in the denominator).
struct MemsadCalibration {
  MemsadMode mode = MemsadMode::kCombined;
  double mu = 0;
  double sigma = 0;
  size_t n = 0;
  double kappa = 2.0;
  double delta = 0.05;
  double eta = 0;          // CalibrationTolerance(sigma, n, kappa, delta)
  bool triggered = false;  // calibrated against queries carrying a suspected trigger

  double threshold() const { return mu + kappa * sigma; }
  nlohmann::json ToJson() const;
  static absl::StatusOr<MemsadCalibration> FromJson(const nlohmann::json& json);
};

// InvalidArgument unless reference_scores has at least 2 values, kappa > 0, 0 < delta < 1.
absl::StatusOr<MemsadCalibration> CalibrateMemsad(std::span<const double> reference_scores, MemsadMode mode,
                                                  double kappa, double delta);

// Lemma 8 (Eq. 9) for a candidate whose most similar history query is q*:
//   s_bar   = max_{m in M_ref} cos(m, q*)     (benign similarity ceiling)
//   Delta_s = s_adv - s_bar, with s_adv = cos(c, q*) = s_max
//   holds   = Delta_s > kappa sigma + eta      (then MemSAD detects c with certainty)
struct MemsadCertificate {
  double s_bar = 0;
  double delta_s = 0;
  double radius = 0;  // kappa sigma + eta
  bool holds = false;
};
// s_bar for `victim_query`: max_{m in reference} cos(m, q*); NaN for an empty reference set
// (rows of another dimension are skipped).
double BenignCeiling(std::span<const float> victim_query, std::span<const std::vector<float>> reference);
// The certificate from s_bar (e.g. the ceiling QueryHistory keeps per row). A NaN s_bar (no
// reference set) gives s_bar = delta_s = 0 and holds = false.
MemsadCertificate CertifyDetection(double s_adv, double s_bar, const MemsadCalibration& cal);
// Both steps: CertifyDetection(s_adv, BenignCeiling(victim_query, reference), cal).
MemsadCertificate CertifyDetection(double s_adv, std::span<const float> victim_query,
                                   std::span<const std::vector<float>> reference,
                                   const MemsadCalibration& cal);

}  // namespace bulwark
