// The write-time detectors (DESIGN 4.5). Each factory returns a WriteDetector; the WriteGate
// owns them and runs the enabled ones on every write. Every detector reports a score and its
// threshold; `calibrated` is false while a pre-calibration default is in use. Detectors that need
// the namespace's history or calibration get them per write (NamespaceState), from the gate.
#pragma once

#include <memory>
#include <vector>

#include "detect/calibration.h"
#include "detect/query_history.h"
#include "detect/validation_rules.h"
#include "detect/watermark.h"
#include "detect/write_detector.h"
#include "detect/write_gate_config.h"

namespace bulwark {

// memsad: score s(c; H) (max / mean / combined, Eq. 7) against the namespace's rolling query
// history; flags s > mu + kappa sigma, or s_max > the uncalibrated bound before calibration.
// Reports s_max, s_mean, s_comb, |H| and, when calibrated, the Lemma 8 certificate.
std::unique_ptr<WriteDetector> MakeMemsadDetector(const WriteGateConfig::Memsad& config);

// memsad_plus: JSD of the entry's character trigrams against the namespace's benign baseline
// (Appendix R); flags above the calibrated threshold. Not evaluated before calibration.
std::unique_ptr<WriteDetector> MakeMemsadPlusDetector();

// watermark: flags text that does not verify under `scheme` (lexical or character) at
// z_threshold: unmarked text.
std::unique_ptr<WriteDetector> MakeWatermarkDetector(const WatermarkScheme* scheme, double z_threshold);

// validation: flags any matching rule; the score is the number of rules that matched.
std::unique_ptr<WriteDetector> MakeValidationDetector(std::unique_ptr<ValidationRules> rules);

// proactive: mean cosine against the probe queries; flags above tau (calibrated, or the
// uncalibrated default).
std::unique_ptr<WriteDetector> MakeProactiveDetector(std::vector<std::vector<float>> probe_embeddings,
                                                     double uncalibrated_tau);

}  // namespace bulwark
