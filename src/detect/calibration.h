// Per-namespace calibration of the write gate (`bulwark calibrate`): the reference embeddings (for
// Lemma 8's benign similarity ceiling) and, per registered detector with a calibration hook
// (detector_registry.h), what that hook fitted from the reference set: MemSAD's mu, sigma, N, kappa
// and Theorem 11 tolerance eta; MemSAD+'s benign character n-gram baseline and JSD threshold; the
// proactive detector's tau. Thresholds whose scale depends on the embedder (MemSAD+ and proactive)
// are set from a target false-positive rate on the reference set, not hard-coded.
#pragma once

#include <absl/status/statusor.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "detect/detector_registry.h"
#include "detect/memsad.h"

namespace bulwark {

// The gate's enabled detectors by registry entry (WriteGate::instances()).
using DetectorInstances = std::vector<std::pair<const DetectorDescriptor*, const WriteDetector*>>;

struct NamespaceCalibration {
  std::vector<std::vector<float>> reference;  // embeddings of M_ref
  double target_fpr = 0.01;
  int64_t calibrated_at_us = 0;
  // Where the inputs came from and what the thresholds do on them: free-form, shown to operators
  // ({"queries": "file q.jsonl (50)", "reference": "store (50 newest)", "trigger": ...,
  //   "reference_fpr": {"memsad": 0.0, ...}}).
  nlohmann::json provenance = nlohmann::json::object();
  // What each detector's calibration hook fitted; a detector without an entry is uncalibrated.
  std::vector<std::pair<const DetectorDescriptor*, std::shared_ptr<const DetectorCalibration>>> fitted;

  // The detector's fitted calibration; nullptr when it has none.
  const DetectorCalibration* Find(const DetectorDescriptor& detector) const;
  // The detector's fitted value of type T (FittedValue<T>); nullptr when it has none.
  template <typename T>
  const T* Get(const DetectorDescriptor& detector) const {
    const DetectorCalibration* fitted_value = Find(detector);
    if (fitted_value == nullptr || fitted_value->type() != &kFittedTypeTag<T>) return nullptr;
    return &static_cast<const FittedValue<T>*>(fitted_value)->value;
  }
  // Replaces (or adds) the detector's fitted calibration.
  void Set(const DetectorDescriptor& detector, std::shared_ptr<const DetectorCalibration> value);

  // with_data: include the reference embeddings and what the hooks need to load (the stored
  // form); without: the summary an operator reads. Each registered detector with a calibration
  // hook has its key, null when it has no fitted calibration.
  nlohmann::json ToJson(bool with_data) const;
  // DataLoss for a record that does not parse or whose parts do not decode.
  static absl::StatusOr<NamespaceCalibration> FromJson(const nlohmann::json& json);
};

struct CalibrationInput {
  std::vector<std::vector<float>> history;  // H the memsad scores are taken against
  std::vector<std::string> reference_texts;
  std::vector<std::vector<float>> reference_embeddings;  // same order as reference_texts
  // Probe embeddings for the proactive detector when it calibrates without a gate instance (may be
  // empty: then it is not calibrated).
  std::vector<std::vector<float>> probes;
  MemsadMode mode = MemsadMode::kCombined;
  double kappa = 2.0;
  double delta = 0.05;
  double target_fpr = 0.01;
  bool triggered = false;
};

// Runs the calibration hook of every registered detector that has one, in registry order.
// `instances`: the gate's enabled detectors (a hook gets nullptr for any other). Calibrates the
// composite (issue #14 point 5): the hooks are fitted at a common per-detector FPR f <= target,
// the largest for which the OR of their reference flags and those of the enabled detectors
// without a hook (validation; not the watermark) flags at most floor(target N) of the N reference
// entries. Records each hook's reference-set flag rate in provenance["reference_fpr"][name] and
// the composite's in provenance["composite"] ({"reference_fpr", "flagged", "reference_count",
// "upper_95" (Clopper-Pearson), "per_detector_target_fpr", "fixed_detectors", "meets_target":
// false when the fixed detectors alone flag more than the target allows}). InvalidArgument for an
// empty history, fewer than 2 reference entries, mismatched sizes or a target FPR outside [0, 1).
absl::StatusOr<NamespaceCalibration> CalibrateNamespace(const CalibrationInput& input,
                                                        const DetectorInstances& instances = {});

// The upper end of the two-sided 95 % Clopper-Pearson interval of k successes in n trials (1 for
// n = 0): the composite's expected FPR bound that `bulwark calibrate` reports.
double ClopperPearsonUpper(size_t k, size_t n);

// The smallest threshold t among the scores such that at most floor(fpr * n) scores exceed t
// (a detector flags score > t). Requires a non-empty span and 0 <= fpr < 1.
double ThresholdAtFpr(std::span<const double> scores, double fpr);
// The share of `scores` above `threshold` (what a detector flagging score > threshold flags); 0
// for no scores.
double FractionAbove(std::span<const double> scores, double threshold);
// One byte per score: 1 where score > threshold (CalibrationFit::reference_flags).
std::vector<uint8_t> FlagsAbove(std::span<const double> scores, double threshold);

// Mean cosine of `embedding` against the probes (the proactive score); 0 without probes. The
// score is linear in the probes, so it is one dot product with their centroid (1/P) sum_i p_i:
// ProbeCentroid once, then ProactiveScore(embedding, centroid) per write. Probes whose size is not
// `dim` are skipped (but still count in P).
std::vector<float> ProbeCentroid(std::span<const std::vector<float>> probes, size_t dim);
double ProactiveScore(std::span<const float> embedding, std::span<const float> probe_centroid);
double ProactiveScore(std::span<const float> embedding, std::span<const std::vector<float>> probes);

}  // namespace bulwark
