// Per-namespace calibration of the write gate (issue: `bulwark calibrate`): MemSAD's mu, sigma,
// N, kappa and Theorem 11 tolerance eta; the reference embeddings (for Lemma 8's benign
// similarity ceiling); MemSAD+'s benign character n-gram baseline and JSD threshold; the
// proactive detector's tau. Thresholds whose scale depends on the embedder (MemSAD+ and
// proactive) are set from a target false-positive rate on the reference set, not hard-coded.
#pragma once

#include <absl/status/statusor.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "detect/char_ngram_profile.h"
#include "detect/jsd_length_model.h"
#include "detect/memsad.h"

namespace bulwark {

struct NamespaceCalibration {
  std::optional<MemsadCalibration> memsad;
  std::vector<std::vector<float>> reference;  // embeddings of M_ref
  std::shared_ptr<const CharNgramProfile> baseline;
  // MemSAD+ scores JSD minus its expectation at the entry's length (jsd_length_model.h); the
  // threshold applies to that residual.
  JsdLengthModel memsad_plus_length;
  std::optional<double> memsad_plus_threshold;
  std::optional<double> proactive_tau;
  double target_fpr = 0.01;
  int64_t calibrated_at_us = 0;
  // Where the inputs came from and what the thresholds do on them: free-form, shown to operators
  // ({"queries": "file q.jsonl (50)", "reference": "store (50 newest)", "trigger": ...,
  //   "reference_fpr": {"memsad": 0.0, ...}}).
  nlohmann::json provenance = nlohmann::json::object();

  // with_data: include the reference embeddings and the baseline (the stored form); without:
  // the summary an operator reads.
  nlohmann::json ToJson(bool with_data) const;
  static absl::StatusOr<NamespaceCalibration> FromJson(const nlohmann::json& json);
};

struct CalibrationInput {
  std::vector<std::vector<float>> history;  // H the memsad scores are taken against
  std::vector<std::string> reference_texts;
  std::vector<std::vector<float>> reference_embeddings;  // same order as reference_texts
  std::vector<std::vector<float>> probes;                // proactive probe embeddings (may be empty)
  MemsadMode mode = MemsadMode::kCombined;
  double kappa = 2.0;
  double delta = 0.05;
  double target_fpr = 0.01;
  bool triggered = false;
};

// InvalidArgument for an empty history, fewer than 2 reference entries, mismatched sizes or a
// target FPR outside [0, 1).
absl::StatusOr<NamespaceCalibration> CalibrateNamespace(const CalibrationInput& input);

// The smallest threshold t among the scores such that at most floor(fpr * n) scores exceed t
// (a detector flags score > t). Requires a non-empty span and 0 <= fpr < 1.
double ThresholdAtFpr(std::span<const double> scores, double fpr);

// Mean cosine of `embedding` against the probes (the proactive score); 0 without probes. The
// score is linear in the probes, so it is one dot product with their centroid (1/P) sum_i p_i:
// ProbeCentroid once, then ProactiveScore(embedding, centroid) per write. Probes whose size is not
// `dim` are skipped (but still count in P).
std::vector<float> ProbeCentroid(std::span<const std::vector<float>> probes, size_t dim);
double ProactiveScore(std::span<const float> embedding, std::span<const float> probe_centroid);
double ProactiveScore(std::span<const float> embedding, std::span<const std::vector<float>> probes);

}  // namespace bulwark
