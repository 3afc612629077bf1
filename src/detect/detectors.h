// The built-in write-time detectors (DESIGN 4.5), one file each (*_detector.cc), each described by
// a DetectorDescriptor (detector_registry.h) listed in detector_list.inc. The gate owns the
// detectors and runs the enabled ones on every write. Every detector reports a score and its
// threshold; `calibrated` is false while a pre-calibration default is in use. Detectors that need
// the namespace's history or calibration get them per write (NamespaceState), from the gate.
//
// Declared here is only what code outside a detector's file uses: MemSAD's options (its rolling
// query history and recalibration are the gate's), the watermark's options (the gate's scheme
// marks text for the store), MemSAD+'s fitted calibration (tests) and its factory (tests).
#pragma once

#include <absl/status/statusor.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "detect/char_ngram_profile.h"
#include "detect/detector_registry.h"
#include "detect/jsd_length_model.h"
#include "detect/memsad.h"
#include "detect/watermark.h"
#include "detect/write_detector.h"

namespace bulwark {

#define BULWARK_DETECTOR(descriptor) const DetectorDescriptor& descriptor();
#include "detect/detector_list.inc"
#undef BULWARK_DETECTOR

// memsad: score s(c; H) (max / mean / combined, Eq. 7) against the namespace's rolling query
// history; flags s > mu + kappa sigma, or s_max > the uncalibrated bound before calibration.
// Reports s_max, s_mean, s_comb, |H| and, when calibrated, the Lemma 8 certificate. Its fitted
// calibration is a MemsadCalibration (memsad.h).
struct MemsadOptions {
  size_t history_capacity = 200;  // m_max: queries kept per namespace (FIFO)
  MemsadMode mode = MemsadMode::kCombined;
  double kappa = 2.0;
  double delta = 0.05;  // Theorem 11 confidence for eta
  // Before calibration: flag s_max > this, i.e. a near-verbatim copy of a recent query. Scale-
  // free enough to be safe for any embedder; calibration replaces it (doc/write_gate.md).
  double uncalibrated_max_threshold = 0.9;
  // Rolling recalibration: every `recalibrate_every` accepted writes (0 = off), recompute mu and
  // sigma over the last `recalibrate_window` accepted entries against the current history.
  size_t recalibrate_every = 0;
  size_t recalibrate_window = 200;
};
// The memsad section of a parsed configuration (WriteGateConfig::Options(MemsadDescriptor())).
absl::StatusOr<MemsadOptions> ParseMemsadOptions(const nlohmann::json& options);

// memsad_plus: JSD of the entry's character trigrams against the namespace's benign baseline
// (Appendix R), minus its expectation at the entry's length; flags above the calibrated
// threshold. Not evaluated before calibration.
struct MemsadPlusCalibration {
  std::shared_ptr<const CharNgramProfile> baseline;  // nullptr in a record stored without data
  JsdLengthModel length;  // scores are JSD minus length.Expected(trigrams) (jsd_length_model.h)
  double threshold = 0;
};
std::unique_ptr<WriteDetector> MakeMemsadPlusDetector();

// watermark: flags text that does not verify under the gate's scheme (lexical or character) at
// z_threshold: unmarked text.
struct WatermarkOptions {
  // "lexical" (default: green variants at substitution sites, detect/watermark.h) or
  // "character" (green characters after each previous character, detect/char_watermark.h).
  WatermarkKind scheme = WatermarkKind::kLexical;
  // Green share, (0, 1). Lexical: max(1, floor(gamma k)) of each substitution group's k
  // variants. Character: round(gamma 95) of the 95 printable characters per context, which
  // must be 1 to 94.
  double gamma = 0.45;
  // Lexical: verifies iff the exact p-value <= 1 - Phi(z_threshold). Character: verifies iff
  // the one-proportion z-score >= z_threshold.
  double z_threshold = 1.5;
};
absl::StatusOr<WatermarkOptions> ParseWatermarkOptions(const nlohmann::json& options);

// validation: flags any matching rule (rules_file, or the rules compiled in from
// data/validation_rules.tsv); the score is the number of rules that matched.

// proactive: mean cosine against the probe queries (the 16 defaults of MemSAD App. C, or its
// probes option); flags above tau (calibrated, or the uncalibrated default).

}  // namespace bulwark
