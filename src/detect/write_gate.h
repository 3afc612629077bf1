// WriteGate: runs the enabled write-time detectors on every write before it is signed (DESIGN
// 4.5). The composite decision is the logical OR of the enabled detectors (MemSAD paper Appendix
// C, the definitive composite): a write is flagged if any detector flags it, and the store then
// quarantines it with every flagging detector's reason. Nothing is dropped.
//
// The gate also owns the per-namespace defense state: the rolling query histories that searches
// feed (RecordQuery) and the calibrations `bulwark calibrate` produces.
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/container/inlined_vector.h>
#include <absl/status/statusor.h>
#include <absl/synchronization/mutex.h>

#include <deque>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "bulwark/embedder.h"
#include "detect/defense_state.h"
#include "detect/detectors.h"
#include "detect/memory_table.h"
#include "detect/store_context.h"
#include "detect/watermark.h"
#include "detect/write_detector.h"
#include "detect/write_gate_config.h"

namespace bulwark {

// One detector's verdict as numbers, detached from the detector (it may outlive the gate): what
// evaluation code reads (bulwark-lab eval) instead of the report's JSON.
struct DetectorOutcome {
  const DetectorDescriptor* detector = nullptr;  // registry entries outlive the gates
  double score = 0;
  double threshold = 0;
  bool flagged = false;
  bool calibrated = false;

  // The score oriented so that higher is more suspicious: negated for a detector that flags
  // scores below its threshold (the watermark's z).
  double suspicion() const;
  // (score - threshold) / max(|threshold|, 1e-3), oriented like suspicion(): positive on the
  // flagging side; comparable across detectors.
  double margin() const;
};

// The gate's decision on one entry as numbers: the per-detector outcomes for its text, in
// configuration order, and the composite (text OR metadata, WriteDefenses::Screen).
struct GateOutcome {
  bool flagged = false;
  absl::InlinedVector<DetectorOutcome, 8> detectors;

  // nullptr when the detector did not run.
  const DetectorOutcome* Find(const DetectorDescriptor& detector) const;
};

// The gate's decision on one write. Its verdicts refer to the gate's detectors, so a report must
// not outlive the gate that made it.
struct GateReport {
  bool flagged = false;
  // One per enabled detector, in configuration order.
  absl::InlinedVector<DetectorVerdict, 8> verdicts;

  std::vector<std::string> reasons() const;  // the flagging detectors' reasons
  // {"flagged": bool, "composite": "or", "detectors": {name: verdict...}, "reasons": [...]}
  nlohmann::json ToJson() const;
  // The verdicts' numbers; flagged as this report's.
  GateOutcome Outcome() const;
};

class WriteGate {
 public:
  // Creates the enabled detectors of `config` through their descriptors' factories, in
  // configuration order. `embedder` is lent to them (the proactive probes); `watermark_key` keys
  // the watermark green lists (of the scheme the watermark section names), which the gate keeps
  // whether or not the watermark detector runs. InvalidArgument for a bad configuration; a
  // factory's error (NotFound/InvalidArgument for a bad rules file).
  static absl::StatusOr<std::unique_ptr<WriteGate>> Create(const WriteGateConfig& config,
                                                           const Embedder& embedder,
                                                           std::span<const uint8_t> watermark_key);

  // Runs every enabled detector. Thread-safe. Allocates nothing for a write that is not
  // flagged, except what a detector with more than 4 matches needs; the report's text is built
  // by GateReport::ToJson.
  GateReport Evaluate(const WriteCandidate& candidate) const;
  // Runs the detectors that screen metadata (DetectorDescriptor::screens_metadata) over `text`, the
  // string values of an entry's metadata (metadata_text.h). Thread-safe.
  GateReport EvaluateMetadata(std::string_view name_space, std::string_view text) const;
  // Every enabled detector's WriteDetector::Prepare: `serve` calls it at start. Thread-safe.
  void Prepare() const;

  // The store's active memories as the conflict detector sees them (memory_table.h): the write
  // path adds every accepted entry (OnCommitted) and loads a namespace's memories before its first
  // write. Thread-safe.
  MemoryTable& memories() const { return *memories_; }
  // True when an enabled detector reads that table (DetectorDescriptor::reads_memories: conflict,
  // llm_judge). Without one the write path keeps no copy of the memories' text in the gate
  // (memory, and purged text lingering in a cache).
  bool keeps_memories() const { return keeps_memories_; }
  // The store the gate guards (not owned; must outlive the gate; nullptr: none). Set before the
  // first write.
  void SetStoreContext(const StoreContext* store) { store_ = store; }

  // Appends a search's query embedding to the namespace's rolling history H. Thread-safe.
  void RecordQuery(std::string_view name_space, std::span<const float> embedding);

  // Rolling recalibration (memsad's recalibrate_every > 0): called with each accepted
  // write's embedding; every recalibrate_every calls, recomputes the namespace's memsad mu and
  // sigma over the last recalibrate_window accepted entries against the current history. Returns
  // the new calibration when it changed (the caller persists it), else nullptr.
  std::shared_ptr<const NamespaceCalibration> OnAccepted(std::string_view name_space,
                                                         std::span<const float> embedding);

  DefenseState& state() { return state_; }
  const DefenseState& state() const { return state_; }
  const WriteGateConfig& config() const { return config_; }
  const WatermarkScheme& watermark() const { return *watermark_; }  // lexical or character
  const WatermarkOptions& watermark_options() const { return watermark_options_; }
  // MemSAD's options: its query history (state()) and rolling recalibration are the gate's.
  const MemsadOptions& memsad_options() const { return memsad_; }
  // The running detectors by registry entry (calibration hooks get their instance).
  DetectorInstances instances() const;

 private:
  WriteGate(const WriteGateConfig& config, size_t dim, const MemsadOptions& memsad);

  WriteGateConfig config_;
  MemsadOptions memsad_;
  WatermarkOptions watermark_options_;
  DefenseState state_;
  std::unique_ptr<WatermarkScheme> watermark_;
  std::vector<std::unique_ptr<WriteDetector>> detectors_;
  std::unique_ptr<MemoryTable> memories_;
  bool keeps_memories_ = false;
  const StoreContext* store_ = nullptr;

  struct Window {
    std::deque<std::vector<float>> accepted;
    size_t since_recalibration = 0;
  };
  absl::Mutex windows_mu_;
  absl::flat_hash_map<std::string, Window> windows_ ABSL_GUARDED_BY(windows_mu_);
};

}  // namespace bulwark
