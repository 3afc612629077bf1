// WriteDetector: one write-time poisoning detector (DESIGN 4.5, MemSAD paper Sec. 4-5, App. C).
// The WriteGate runs every enabled detector on each write before it is signed; a write that any
// detector flags is quarantined (kept, signed, never retrieved) with the detectors' reasons.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace bulwark {

// What a detector sees of a write: its namespace, its text and its L2-normalized embedding.
struct WriteCandidate {
  std::string_view name_space;
  std::string_view text;
  std::span<const float> embedding;
};

// One detector's verdict. `flagged` iff `score` is on the flagging side of `threshold` (above it
// for every detector except the watermark, which flags z-scores below its threshold). `reason`
// is a sentence an operator can read in the quarantine queue; `detail` holds detector-specific
// numbers (e.g. memsad's s_max, s_mean and certificate).
struct DetectorVerdict {
  std::string detector;
  double score = 0;
  double threshold = 0;
  bool flagged = false;
  bool calibrated = false;  // false: the threshold is the documented pre-calibration default
  std::string reason;
  nlohmann::json detail = nlohmann::json::object();

  nlohmann::json ToJson() const;
};

class WriteDetector {
 public:
  virtual ~WriteDetector() = default;
  // The detector's name as it appears in reports and configuration ("memsad", "watermark", ...).
  virtual std::string_view name() const = 0;
  // Scores one write. Must be thread-safe: the gate scores the entries of a batch in parallel.
  virtual DetectorVerdict Evaluate(const WriteCandidate& candidate) const = 0;
};

}  // namespace bulwark
