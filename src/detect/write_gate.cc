#include "detect/write_gate.h"

#include <absl/synchronization/mutex.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>

#include "core/status_macros.h"
#include "core/strings.h"
#include "detect/detectors.h"
#include "detect/slot_extractor.h"

namespace bulwark {

std::string_view WriteDetector::name() const { return descriptor().name; }

std::string_view DetectorVerdict::detector() const { return by->name(); }

double DetectorOutcome::suspicion() const { return detector->flags == FlagSide::kBelow ? -score : score; }

double DetectorOutcome::margin() const {
  const double sign = detector->flags == FlagSide::kBelow ? -1.0 : 1.0;
  return sign * (score - threshold) / std::max(std::abs(threshold), 1e-3);
}

const DetectorOutcome* GateOutcome::Find(const DetectorDescriptor& detector) const {
  for (const DetectorOutcome& d : detectors) {
    if (d.detector == &detector) return &d;
  }
  return nullptr;
}

std::string DetectorVerdict::reason() const { return flagged ? by->Reason(*this) : std::string(); }

// The reports are built with moves (nlohmann's initializer lists copy lvalues deeply, which made
// the report cost several times the decision), and each key is inserted at the end of its
// object's map in key order (an end hint: one comparison instead of a search per key). The object
// is a std::map, so the order of insertion does not change the JSON.
nlohmann::json DetectorVerdict::ToJson() const {
  nlohmann::json j(nlohmann::json::value_t::object);
  auto& o = j.get_ref<nlohmann::json::object_t&>();
  o.emplace_hint(o.end(), "calibrated", calibrated);
  o.emplace_hint(o.end(), "detail", by->Detail(*this));
  o.emplace_hint(o.end(), "flagged", flagged);
  if (flagged) o.emplace_hint(o.end(), "reason", reason());
  o.emplace_hint(o.end(), "score", score);
  o.emplace_hint(o.end(), "threshold", threshold);
  return j;
}

std::vector<std::string> GateReport::reasons() const {
  std::vector<std::string> out;
  for (const auto& v : verdicts) {
    if (v.flagged) out.push_back(v.reason());
  }
  return out;
}

nlohmann::json GateReport::ToJson() const {
  nlohmann::json j(nlohmann::json::value_t::object);
  auto& o = j.get_ref<nlohmann::json::object_t&>();  // keys in order, as in DetectorVerdict::ToJson
  o.emplace_hint(o.end(), "composite", "or");
  auto& detectors = o.emplace_hint(o.end(), "detectors", nlohmann::json::object())
                        ->second.get_ref<nlohmann::json::object_t&>();
  o.emplace_hint(o.end(), "flagged", flagged);
  nlohmann::json& reasons = o.emplace_hint(o.end(), "reasons", nlohmann::json::array())->second;
  for (const auto& v : verdicts) {
    detectors.insert_or_assign(std::string(v.detector()), v.ToJson());
    if (v.flagged) reasons.push_back(v.reason());
  }
  return j;
}

GateOutcome GateReport::Outcome() const {
  GateOutcome out;
  out.flagged = flagged;
  for (const DetectorVerdict& v : verdicts) {
    out.detectors.push_back({.detector = &v.by->descriptor(),
                             .score = v.score,
                             .threshold = v.threshold,
                             .flagged = v.flagged,
                             .calibrated = v.calibrated});
  }
  return out;
}

WriteGate::WriteGate(const WriteGateConfig& config, size_t dim, const MemsadOptions& memsad)
    : config_(config),
      memsad_(memsad),
      state_(dim, memsad.history_capacity),
      memories_(std::make_unique<MemoryTable>(dim)) {}

absl::StatusOr<std::unique_ptr<WriteGate>> WriteGate::Create(const WriteGateConfig& config,
                                                             const Embedder& embedder,
                                                             std::span<const uint8_t> watermark_key) {
  BULWARK_ASSIGN_OR_RETURN(const MemsadOptions memsad,
                           ParseMemsadOptions(config.Options(MemsadDescriptor())));
  BULWARK_ASSIGN_OR_RETURN(const WatermarkOptions watermark,
                           ParseWatermarkOptions(config.Options(WatermarkDescriptor())));
  std::unique_ptr<WriteGate> gate(new WriteGate(config, static_cast<size_t>(embedder.dimension()), memsad));
  gate->watermark_options_ = watermark;
  BULWARK_ASSIGN_OR_RETURN(gate->watermark_,
                           CreateWatermarkScheme(watermark.scheme, watermark_key, watermark.gamma));
  const GateResources resources{.embedder = embedder, .watermark = *gate->watermark_};
  for (const WriteGateConfig::Detector& d : config.detectors) {
    if (!d.enabled) continue;
    BULWARK_ASSIGN_OR_RETURN(std::unique_ptr<WriteDetector> detector,
                             d.descriptor->create(d.options, resources));
    gate->keeps_memories_ |= d.descriptor->reads_memories;
    gate->detectors_.push_back(std::move(detector));
  }
  return gate;
}

void WriteGate::Prepare() const {
  for (const std::unique_ptr<WriteDetector>& detector : detectors_) detector->Prepare();
}

DetectorInstances WriteGate::instances() const {
  DetectorInstances out;
  for (const auto& d : detectors_) out.emplace_back(&d->descriptor(), d.get());
  return out;
}

GateReport WriteGate::Evaluate(const WriteCandidate& candidate) const {
  GateReport report;
  if (detectors_.empty()) return report;
  const DefenseState::Snapshot ns = state_.Lookup(candidate.name_space);  // holds the calibration
  const NamespaceState state{ns.history, ns.calibration.get(), memories_.get(), store_};
  // The slots, once for every detector that reads them.
  TextSlots slots;
  WriteCandidate with_slots = candidate;
  if (with_slots.slots == nullptr && !candidate.embedding.empty() &&
      std::any_of(detectors_.begin(), detectors_.end(),
                  [](const auto& d) { return d->descriptor().uses_slots; })) {
    slots = ExtractSlots(candidate.text);
    with_slots.slots = &slots;
  }
  for (const auto& d : detectors_) {
    report.verdicts.push_back(d->Evaluate(with_slots, state));
    report.flagged = report.flagged || report.verdicts.back().flagged;  // composite: logical OR
  }
  return report;
}

GateReport WriteGate::EvaluateMetadata(std::string_view name_space, std::string_view text) const {
  GateReport report;
  const DefenseState::Snapshot ns = state_.Lookup(name_space);
  const NamespaceState state{ns.history, ns.calibration.get(), memories_.get(), store_};
  const WriteCandidate candidate{name_space, text, {}};
  for (const auto& d : detectors_) {
    if (!d->descriptor().screens_metadata) continue;
    report.verdicts.push_back(d->Evaluate(candidate, state));
    report.flagged = report.flagged || report.verdicts.back().flagged;
  }
  return report;
}

void WriteGate::RecordQuery(std::string_view name_space, std::span<const float> embedding) {
  state_.History(name_space).Append(embedding);
}

std::shared_ptr<const NamespaceCalibration> WriteGate::OnAccepted(std::string_view name_space,
                                                                  std::span<const float> embedding) {
  const MemsadOptions& m = memsad_;
  if (!config_.Enabled(MemsadDescriptor()) || m.recalibrate_every == 0) return nullptr;
  std::vector<std::vector<float>> window;
  {
    absl::MutexLock lock(&windows_mu_);
    Window& w = windows_[ToAbsl(name_space)];
    w.accepted.emplace_back(embedding.begin(), embedding.end());
    while (w.accepted.size() > m.recalibrate_window) w.accepted.pop_front();
    if (++w.since_recalibration < m.recalibrate_every || w.accepted.size() < 2) return nullptr;
    w.since_recalibration = 0;
    window.assign(w.accepted.begin(), w.accepted.end());
  }
  const QueryHistory* history = state_.FindHistory(name_space);
  if (history == nullptr || history->size() == 0) return nullptr;
  auto previous = state_.Calibration(name_space);
  const MemsadCalibration* previous_memsad =
      previous ? previous->Get<MemsadCalibration>(MemsadDescriptor()) : nullptr;
  const MemsadMode mode = previous_memsad ? previous_memsad->mode : m.mode;
  std::vector<double> scores;
  history->Read([&](const QueryHistory::View& h) {
    for (const auto& e : window) scores.push_back(ScoreAgainstHistory(e, h).Get(mode));
  });
  auto memsad = CalibrateMemsad(scores, mode, m.kappa, m.delta);
  if (!memsad.ok()) return nullptr;
  auto next = std::make_shared<NamespaceCalibration>(previous ? *previous : NamespaceCalibration{});
  memsad->triggered = previous_memsad && previous_memsad->triggered;
  next->Set(MemsadDescriptor(), std::make_shared<FittedValue<MemsadCalibration>>(*memsad));
  next->provenance["rolling_recalibration"] = {{"window", window.size()}, {"history_size", history->size()}};
  state_.SetCalibration(name_space, next);
  spdlog::info("namespace '{}': memsad recalibrated over {} accepted writes (mu {:.4f}, sigma {:.4f})",
               name_space, window.size(), memsad->mu, memsad->sigma);
  return next;
}

}  // namespace bulwark
