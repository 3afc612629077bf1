// WriteDetector: one write-time poisoning detector (DESIGN 4.5, MemSAD paper Sec. 4-5, App. C).
// The WriteGate runs every enabled detector on each write before it is signed; a write that any
// detector flags is quarantined (kept, signed, never retrieved) with the detectors' reasons.
//
// Scoring is split from reporting: Evaluate fills a DetectorVerdict with numbers only (no string,
// no JSON, no allocation), and the sentence and JSON detail an operator reads are produced from
// those numbers on demand, once, when the store records the entry.
#pragma once

#include <absl/container/inlined_vector.h>

#include <array>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>

#include "bulwark/entry.h"

namespace bulwark {

class MemoryTable;
class QueryHistory;
class StoreContext;
struct TextSlots;
struct NamespaceCalibration;
struct DetectorDescriptor;
class WriteDetector;

// What a detector sees of a write: its namespace, its text and its L2-normalized embedding, and
// (for the detectors that compare a write with the store's memories and recent writes: conflict,
// flood) the entry's id, its writer and when it was written. A metadata screening
// (WriteGate::EvaluateMetadata) has no embedding and no id.
struct WriteCandidate {
  std::string_view name_space;
  std::string_view text;
  std::span<const float> embedding;
  std::string_view id;
  std::string_view principal;
  Source source = Source::kUser;
  int64_t written_at_us = 0;
  // The text's slots (slot_extractor.h), extracted once by the gate for the detectors that use
  // them (DetectorDescriptor::uses_slots); nullptr: a detector extracts them itself.
  const TextSlots* slots = nullptr;
};

// The namespace's defense state, looked up once per write by the gate and shared by the
// detectors: its rolling query history and its calibration (each nullptr when absent), the gate's
// table of the store's active memories (memory_table.h) and the store itself (store_context.h;
// nullptr when the gate runs without a store, e.g. in unit tests).
struct NamespaceState {
  const QueryHistory* history = nullptr;
  const NamespaceCalibration* calibration = nullptr;
  MemoryTable* memories = nullptr;
  const StoreContext* store = nullptr;
};

// Detector-specific data of a verdict that numbers cannot carry (the conflict detector's matched
// memory and changed slots). Set only on the rare verdicts that need it: allocating it is the
// exception to "Evaluate does not allocate".
class VerdictPayload {
 public:
  virtual ~VerdictPayload() = default;
};

// One detector's verdict. `flagged` iff `score` is on the flagging side of `threshold` (above it
// for every detector except the watermark, which flags z-scores below its threshold).
struct DetectorVerdict {
  // The detector that made the verdict; it formats the verdict and must outlive it (the
  // WriteGate owns its detectors).
  const WriteDetector* by = nullptr;
  double score = 0;
  double threshold = 0;
  bool flagged = false;
  bool calibrated = false;  // false: the threshold is the documented pre-calibration default
  // Detector-specific numbers (e.g. memsad's s_max, s_mean and certificate), written by
  // Evaluate and read back only by `by`.
  std::array<double, 16> values{};
  absl::InlinedVector<uint32_t, 4> items;         // detector-specific indices (validation: rules matched)
  std::shared_ptr<const VerdictPayload> payload;  // detector-specific data; usually null

  std::string_view detector() const;
  // A sentence an operator can read in the quarantine queue; empty unless flagged.
  std::string reason() const;
  // {"score", "threshold", "flagged", "calibrated", "detail": {...}, "reason" (when flagged)}.
  nlohmann::json ToJson() const;
};

class WriteDetector {
 public:
  virtual ~WriteDetector() = default;
  // The registry entry this detector belongs to (detector_registry.h): its name, the side of the
  // threshold it flags, whether it screens metadata.
  virtual const DetectorDescriptor& descriptor() const = 0;
  // The detector's name as it appears in reports and configuration ("memsad", "watermark", ...).
  std::string_view name() const;
  // Scores one write. Must be thread-safe (the gate scores the entries of a batch in parallel)
  // and should not allocate: it runs on every write.
  virtual DetectorVerdict Evaluate(const WriteCandidate& candidate, const NamespaceState& state) const = 0;
  // Builds now what the first Evaluate would otherwise build (compiled rules, a parsed model), so
  // that a serving process's first write does not pay it in latency and rate-limit tokens.
  // Optional; thread-safe; Evaluate behaves the same whether or not it ran.
  virtual void Prepare() const {}
  // The reason for a flagged verdict this detector made.
  virtual std::string Reason(const DetectorVerdict& verdict) const = 0;
  // Detector-specific numbers of a verdict this detector made, as a JSON object.
  virtual nlohmann::json Detail(const DetectorVerdict& verdict) const = 0;
};

}  // namespace bulwark
