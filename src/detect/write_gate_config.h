// Configuration of the write gate: which detectors run and their parameters. Read from the
// store directory's gate.json (doc/write_gate.md) or set in StoreOptions; every field optional,
// unknown fields rejected. Per-namespace calibration (NamespaceCalibration) overrides the
// pre-calibration defaults below once `bulwark calibrate` has run.
#pragma once

#include <absl/status/statusor.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "detect/memsad.h"
#include "detect/watermark.h"

namespace bulwark {

struct WriteGateConfig {
  struct Memsad {
    bool enabled = true;
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
  } memsad;
  struct MemsadPlus {
    bool enabled = true;  // needs a calibrated baseline; reports "uncalibrated" until then
  } memsad_plus;
  struct Watermark {
    bool enabled = false;  // only for deployments whose writers all mark their text
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
  } watermark;
  struct Validation {
    bool enabled = true;
    std::string rules_file;  // empty: the rules compiled in from data/validation_rules.tsv
  } validation;
  struct Proactive {
    bool enabled = true;
    std::vector<std::string> probes;  // empty: the 16 default probes (DefaultProbes())
    double uncalibrated_tau = 0.35;
  } proactive;
  double target_fpr = 0.01;  // calibration default

  static absl::StatusOr<WriteGateConfig> FromJson(const nlohmann::json& json);
  nlohmann::json ToJson() const;
  // 16 probe queries over 8 subtopics of a personal assistant's memory (MemSAD App. C).
  static const std::vector<std::string>& DefaultProbes();
};

}  // namespace bulwark
