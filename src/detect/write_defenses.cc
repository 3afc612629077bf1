#include "detect/write_defenses.h"

#include <absl/cleanup/cleanup.h>
#include <absl/strings/str_cat.h>
#include <absl/synchronization/mutex.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <utility>

#include "core/status_macros.h"
#include "core/strings.h"
#include "core/text_validation.h"
#include "detect/metadata_text.h"
#include "provenance/keyring.h"
#include "provenance/signer.h"

namespace bulwark {
namespace {

constexpr uint64_t kHistorySaveEvery = 64;  // unsaved queries that make a write also save them

// The watermark key: HMAC(the keyring's first key, domain). Stable across signing-key rotation.
absl::StatusOr<std::string> WatermarkKey(const Keyring& keyring) {
  const auto keys = keyring.List();
  if (keys.empty()) return absl::FailedPreconditionError("the keyring has no key");
  const std::shared_ptr<const HmacKey> first = keyring.Find(keys.front().id);
  if (first == nullptr) return absl::FailedPreconditionError("the keyring has no key");
  return HmacSha256(*first, "bulwark.watermark.key.v1");
}

}  // namespace

absl::StatusOr<std::unique_ptr<WriteDefenses>> WriteDefenses::Create(const nlohmann::json& config_json,
                                                                     const Embedder& embedder,
                                                                     const Keyring& keyring,
                                                                     DefenseStateRepository* repository,
                                                                     Env* env) {
  BULWARK_ASSIGN_OR_RETURN(const WriteGateConfig config, WriteGateConfig::FromJson(config_json));
  BULWARK_ASSIGN_OR_RETURN(const std::string key, WatermarkKey(keyring));
  BULWARK_ASSIGN_OR_RETURN(
      std::unique_ptr<WriteGate> gate,
      WriteGate::Create(config, embedder,
                        std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(key.data()), key.size())));
  std::unique_ptr<WriteDefenses> defenses(new WriteDefenses(std::move(gate), embedder, repository, env));
  BULWARK_RETURN_IF_ERROR(defenses->Restore());
  return defenses;
}

WriteDefenses::WriteDefenses(std::unique_ptr<WriteGate> gate, const Embedder& embedder,
                             DefenseStateRepository* repository, Env* env)
    : gate_(std::move(gate)), embedder_(embedder), repository_(repository), env_(env) {}

WriteDefenses::~WriteDefenses() {
  if (auto s = FlushQueryHistory(); !s.ok()) spdlog::warn("saving the query history: {}", s.ToString());
}

absl::Status WriteDefenses::ReloadNamespace(std::string_view name_space) { return Restore(name_space); }

absl::Status WriteDefenses::Restore(std::optional<std::string_view> only) {
  // Query histories (newest `capacity` rows) and calibrations.
  absl::flat_hash_map<std::string, std::vector<std::vector<float>>> rows;
  absl::flat_hash_map<std::string, uint64_t> next;
  const size_t dim = static_cast<size_t>(embedder_.dimension());
  BULWARK_RETURN_IF_ERROR(
      repository_->ScanQueryHistory([&](std::string_view ns, uint64_t seq, std::vector<float> v) {
        if (v.size() != dim || (only && ns != *only))
          return absl::OkStatus();  // not ours to use; dropped at the next save
        rows[ToAbsl(ns)].push_back(std::move(v));
        next[ToAbsl(ns)] = seq + 1;
        return absl::OkStatus();
      }));
  absl::MutexLock save_lock(&history_save_mu_);  // uncontended: called by Create
  for (auto& [ns, history] : rows) {
    gate_->state().History(ns).Restore(history, next[ns]);
    history_saved_[ns] = next[ns];
  }
  return repository_->ScanCalibrations([&](std::string_view ns, std::string_view text) {
    if (only && ns != *only) return absl::OkStatus();
    auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    auto cal = json.is_discarded() ? absl::StatusOr<NamespaceCalibration>(absl::DataLossError("not JSON"))
                                   : NamespaceCalibration::FromJson(json);
    if (!cal.ok()) {
      spdlog::error("namespace '{}': stored calibration unusable ({}); using the pre-calibration defaults",
                    ns, cal.status().ToString());
      return absl::OkStatus();
    }
    gate_->state().SetCalibration(ns, std::make_shared<NamespaceCalibration>(*std::move(cal)));
    return absl::OkStatus();
  });
}

bool WriteDefenses::Screen(Entry* e) const {
  const auto start = std::chrono::steady_clock::now();
  absl::Cleanup timed = [&] {
    screen_latency_.Observe(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  };
  const GateReport report = gate_->Evaluate({.name_space = e->name_space,
                                             .text = e->text,
                                             .embedding = e->embedding,
                                             .id = e->id,
                                             .principal = e->principal,
                                             .source = e->source,
                                             .written_at_us = e->updated_at_us});
  e->report = nlohmann::json::object();
  e->report["gate"] = report.ToJson();
  std::vector<std::string> reasons = report.reasons();
  bool flagged = report.flagged;
  if (const std::string metadata = MetadataText(e->metadata); !metadata.empty()) {
    const GateReport screened = gate_->EvaluateMetadata(e->name_space, metadata);
    e->report["gate"]["metadata"] = screened.ToJson();
    for (const std::string& reason : screened.reasons()) reasons.push_back("metadata: " + reason);
    flagged = flagged || screened.flagged;
  }
  e->report["gate"]["flagged"] = flagged;
  if (flagged && e->state == State::kActive) {
    e->state = State::kQuarantined;
    e->report["quarantine"] = {{"reasons", std::move(reasons)}, {"by", kWriteGateActor}};
  }
  if (observer_) {
    GateOutcome outcome = report.Outcome();
    outcome.flagged = flagged;
    observer_(*e, outcome);
  }
  return flagged;
}

void WriteDefenses::OnCommitted(std::string_view name_space, std::span<const Entry> entries) {
  const std::string ns(name_space);
  for (const Entry& e : entries) {
    if (e.state != State::kActive) continue;
    RememberActive(e);
    if (auto cal = gate_->OnAccepted(ns, e.embedding)) {
      if (auto s = repository_->PutCalibration(ns, cal->ToJson(/*with_data=*/true).dump()); !s.ok()) {
        spdlog::warn("namespace '{}': saving the recalibration: {}", ns, s.ToString());
      }
    }
  }
  if (const QueryHistory* h = gate_->state().FindHistory(ns)) {
    absl::MutexLock save_lock(&history_save_mu_);
    if (h->appended() >= history_saved_[ns] + kHistorySaveEvery) {
      if (auto s = SaveHistory(ns, /*replace=*/false); !s.ok()) {
        spdlog::warn("saving the query history: {}", s.ToString());
      }
    }
  }
}

void WriteDefenses::RememberActive(const Entry& e) {
  if (e.kind != Kind::kMemory || !gate_->keeps_memories()) return;
  gate_->memories().Put(
      e.name_space,
      {.id = e.id, .principal = e.principal, .source = e.source, .text = e.text, .embedding = e.embedding});
}

void WriteDefenses::Forget(std::string_view name_space, std::string_view id) {
  gate_->memories().Remove(name_space, id);
}

void WriteDefenses::RecordQuery(std::string_view name_space, std::span<const float> embedding) {
  if (query_route_ && query_route_(name_space, embedding)) return;
  gate_->RecordQuery(name_space, embedding);
}

void WriteDefenses::AppendQuery(std::string_view name_space, std::span<const float> embedding) {
  gate_->RecordQuery(name_space, embedding);
}

absl::Status WriteDefenses::SaveHistory(const std::string& name_space, bool replace) {
  const QueryHistory* h = gate_->state().FindHistory(name_space);
  if (h == nullptr) return absl::OkStatus();
  uint64_t& saved = history_saved_[name_space];
  const QueryHistory::Pending pending = h->Since(replace ? 0 : saved);
  if (pending.rows.empty() && !replace) return absl::OkStatus();
  const uint64_t end = pending.first_sequence + pending.rows.size();
  const uint64_t keep_from = end > h->capacity() ? end - h->capacity() : 0;
  BULWARK_RETURN_IF_ERROR(
      repository_->SaveQueryHistory(name_space, pending.first_sequence, pending.rows, keep_from, replace));
  saved = end;
  return absl::OkStatus();
}

absl::Status WriteDefenses::FlushQueryHistory() {
  absl::MutexLock lock(&history_save_mu_);
  absl::Status first;  // every namespace is tried (a replica's may be fenced: led elsewhere)
  for (const std::string& ns : gate_->state().HistoryNamespaces()) {
    if (absl::Status s = SaveHistory(ns, /*replace=*/false); !s.ok() && first.ok()) first = s;
  }
  return first;
}

std::vector<std::vector<float>> WriteDefenses::RecentQueries(std::string_view name_space,
                                                             size_t limit) const {
  const QueryHistory* history = gate_->state().FindHistory(name_space);
  if (history == nullptr) return {};
  std::vector<std::vector<float>> rows = history->Snapshot();
  if (rows.size() > limit) rows.erase(rows.begin(), rows.end() - static_cast<ptrdiff_t>(limit));
  return rows;
}

nlohmann::json WriteDefenses::CalibrationSummary(std::string_view name_space) const {
  auto cal = gate_->state().Calibration(name_space);
  return cal ? cal->ToJson(/*with_data=*/false) : nlohmann::json(nullptr);
}

absl::StatusOr<nlohmann::json> WriteDefenses::Calibrate(std::string_view name_space,
                                                        const CalibrationRequest& request,
                                                        size_t max_text_bytes,
                                                        const ReferenceSource& newest_active) {
  BULWARK_RETURN_IF_ERROR(ValidateNamespace(name_space));
  if (!request.trigger.empty() && request.queries.empty()) {
    return absl::InvalidArgumentError(
        "triggered calibration needs calibration queries to append the trigger to");
  }
  const MemsadOptions& memsad = gate_->memsad_options();
  CalibrationInput input;
  input.mode = memsad.mode;
  input.kappa = request.kappa.value_or(memsad.kappa);
  input.delta = memsad.delta;
  input.target_fpr = request.target_fpr.value_or(gate_->config().target_fpr);
  input.triggered = !request.trigger.empty();
  if (!(input.kappa > 0)) return absl::InvalidArgumentError("kappa must be positive");
  const std::string ns(name_space);
  nlohmann::json provenance = nlohmann::json::object();

  if (!request.queries.empty()) {
    std::vector<std::string> texts;
    for (size_t i = 0; i < request.queries.size(); ++i) {
      std::string q =
          request.trigger.empty() ? request.queries[i] : request.queries[i] + " " + request.trigger;
      if (auto s = ValidateText(q, max_text_bytes); !s.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("calibration query ", i, ": ", s.message()));
      }
      texts.push_back(std::move(q));
    }
    BULWARK_ASSIGN_OR_RETURN(auto vectors, embedder_.EmbedBatch(texts));
    input.history = std::move(vectors);
    provenance["queries"] = {{"source", "supplied"}, {"count", texts.size()}};
    if (!request.trigger.empty()) provenance["trigger"] = request.trigger;
  } else {
    if (const QueryHistory* h = gate_->state().FindHistory(ns)) input.history = h->Snapshot();
    provenance["queries"] = {{"source", "rolling history of searches"}, {"count", input.history.size()}};
  }

  if (!request.reference.empty()) {
    for (size_t i = 0; i < request.reference.size(); ++i) {
      if (auto s = ValidateText(request.reference[i], max_text_bytes); !s.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("reference entry ", i, ": ", s.message()));
      }
    }
    input.reference_texts = request.reference;
    BULWARK_ASSIGN_OR_RETURN(auto vectors, embedder_.EmbedBatch(input.reference_texts));
    input.reference_embeddings = std::move(vectors);
    provenance["reference"] = {{"source", "supplied"}, {"count", input.reference_texts.size()}};
  } else {
    BULWARK_ASSIGN_OR_RETURN(auto newest, newest_active(request.from_store));
    for (auto& [text, embedding] : newest) {
      input.reference_texts.push_back(std::move(text));
      input.reference_embeddings.push_back(std::move(embedding));
    }
    provenance["reference"] = {{"source", "store: newest active entries"},
                               {"count", input.reference_texts.size()}};
  }
  BULWARK_ASSIGN_OR_RETURN(auto calibration, CalibrateNamespace(input, gate_->instances()));
  calibration.calibrated_at_us = env_->NowMicros();
  for (auto& [key, value] : provenance.items()) calibration.provenance[key] = value;

  BULWARK_RETURN_IF_ERROR(repository_->PutCalibration(ns, calibration.ToJson(/*with_data=*/true).dump()));
  if (!request.queries.empty()) {
    gate_->state().History(ns).Replace(input.history);
    absl::MutexLock save_lock(&history_save_mu_);
    BULWARK_RETURN_IF_ERROR(SaveHistory(ns, /*replace=*/true));
  }
  auto stored = std::make_shared<const NamespaceCalibration>(std::move(calibration));
  gate_->state().SetCalibration(ns, stored);
  return stored->ToJson(/*with_data=*/false);
}

}  // namespace bulwark
