#include "write/write_pipeline.h"

#include <absl/strings/str_cat.h>
#include <absl/synchronization/mutex.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <thread>
#include <utility>

#include "core/ids.h"
#include "core/parallel_for.h"
#include "core/status_macros.h"
#include "core/strings.h"
#include "core/text_validation.h"
#include "detect/write_defenses.h"
#include "store/entry_store.h"

namespace bulwark {
namespace {

constexpr size_t kMaxPrincipalBytes = 256;
constexpr int kMaxUpdateAttempts = 16;  // re-reads when another writer changed the entry meanwhile

absl::Status ValidatePrincipal(std::string_view principal) {
  if (principal.empty() || principal.size() > kMaxPrincipalBytes || !IsValidUtf8(principal)) {
    return absl::InvalidArgumentError("principal must be 1 to 256 bytes of UTF-8");
  }
  return absl::OkStatus();
}

// Prefixes a status message with "entry N: " so batch errors name the culprit.
absl::Status AtEntry(size_t index, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat("entry ", index, ": ", status.message()));
}

}  // namespace

std::string SupersededId(const Entry& entry) {
  if (entry.state != State::kActive) return {};
  const nlohmann::json* detail = nullptr;
  if (auto gate = entry.report.find("gate"); gate != entry.report.end() && gate->is_object()) {
    if (auto d = gate->find("detectors"); d != gate->end() && d->is_object()) {
      if (auto c = d->find("conflict"); c != d->end() && c->is_object()) {
        if (auto dd = c->find("detail"); dd != c->end() && dd->is_object()) detail = &*dd;
      }
    }
  }
  if (detail == nullptr || detail->value("action", "") != "supersede") return {};
  const auto conflict = detail->find("conflict");
  if (conflict == detail->end() || !conflict->is_object()) return {};
  return conflict->value("entry_id", "");
}

std::vector<std::string> FloodBurstIds(const Entry& entry) {
  std::vector<std::string> ids;
  if (entry.state != State::kQuarantined) return ids;
  const nlohmann::json* burst = nullptr;
  if (auto gate = entry.report.find("gate"); gate != entry.report.end() && gate->is_object()) {
    if (auto d = gate->find("detectors"); d != gate->end() && d->is_object()) {
      if (auto f = d->find("flood"); f != d->end() && f->is_object() && f->value("flagged", false)) {
        if (auto dd = f->find("detail"); dd != f->end() && dd->is_object()) {
          if (auto b = dd->find("burst"); b != dd->end() && b->is_object()) burst = &*b;
        }
      }
    }
  }
  if (burst == nullptr) return ids;
  const auto list = burst->find("entry_ids");
  if (list == burst->end() || !list->is_array()) return ids;
  for (const auto& id : *list) {
    if (id.is_string()) ids.push_back(id.get<std::string>());
  }
  return ids;
}

WritePipeline::WritePipeline(const Limits& limits, const Embedder& embedder, WriteDefenses& defenses,
                             EntryStore& entries, IdGenerator& ids, Env& env)
    : limits_(limits), embedder_(embedder), defenses_(defenses), entries_(entries), ids_(ids), env_(env) {
  defenses_.SetStoreContext(this);
}

WritePipeline::~WritePipeline() { defenses_.SetStoreContext(nullptr); }

bool WritePipeline::IsActive(std::string_view name_space, std::string_view id) const {
  const absl::StatusOr<Entry> e = entries_.Get(name_space, id);
  return e.ok() && e->state == State::kActive && e->kind == Kind::kMemory;
}

void WritePipeline::ReloadMemories(std::string_view name_space) {
  absl::MutexLock lock(&loaded_mu_);
  loaded_.erase(std::string(name_space));
}

void WritePipeline::LoadMemories(std::string_view name_space) {
  {
    absl::MutexLock lock(&loaded_mu_);
    if (!loaded_.insert(std::string(name_space)).second) return;
  }
  // Outside the lock: a write racing the load sees a partial table, as if the memories were new.
  const absl::StatusOr<int64_t> withheld =
      entries_.Export(name_space, StateBit(State::kActive), [&](const Entry& e) {
        defenses_.RememberActive(e);
        return absl::OkStatus();
      });
  if (!withheld.ok())
    spdlog::warn("namespace '{}': loading memories for the write gate: {}", name_space,
                 withheld.status().ToString());
}

void WritePipeline::AfterCommit(std::span<const Entry> stored) {
  for (const Entry& e : stored) {
    // A caught flood is caught whole: the earlier writes of the burst that are still active join
    // it in quarantine (reviewable like any quarantined entry).
    for (const std::string& member : FloodBurstIds(e)) {
      if (member == e.id) continue;
      const absl::Status s = entries_.Transition(
          e.name_space, member, kWriteGateActor,
          {"quarantine",
           StateBit(State::kActive),
           State::kQuarantined,
           {{"reasons", {absl::StrCat("flood: an earlier write of the burst that ", e.id, " completed")}},
            {"burst_of", e.id}}});
      if (s.ok()) {
        defenses_.Forget(e.name_space, member);
      } else if (!absl::IsFailedPrecondition(s) && !absl::IsNotFound(s)) {
        spdlog::warn("namespace '{}': quarantining flood member {}: {}", e.name_space, member, s.ToString());
      }
    }
    const std::string old_id = SupersededId(e);
    if (old_id.empty() || old_id == e.id) continue;
    const absl::Status s = entries_.Transition(
        e.name_space, old_id, e.principal,
        {"supersede", StateBit(State::kActive), State::kDeleted, {{"superseded_by", e.id}}});
    if (!s.ok())
      spdlog::warn("namespace '{}': superseding {} by {}: {}", e.name_space, old_id, e.id, s.ToString());
    defenses_.Forget(e.name_space, old_id);
  }
}

absl::StatusOr<std::vector<Entry>> WritePipeline::Add(std::string_view name_space,
                                                      std::span<const NewEntry> entries,
                                                      std::string_view principal,
                                                      const ProgressFn& progress) {
  BULWARK_RETURN_IF_ERROR(Validate(name_space, entries, principal));
  LoadMemories(name_space);
  BULWARK_ASSIGN_OR_RETURN(std::vector<Entry> built,
                           EmbedScreenAndSign(name_space, entries, principal, progress));
  std::vector<HistoryEvent> events = AddEvents(built);
  BULWARK_RETURN_IF_ERROR(entries_.Commit(built, events).status());  // persist + index
  AfterCommit(built);
  defenses_.OnCommitted(name_space, built);  // after the acknowledgement point: never fails the write
  return built;
}

absl::StatusOr<WritePipeline::AddOnceResult> WritePipeline::AddOnce(std::string_view name_space,
                                                                    std::span<const NewEntry> entries,
                                                                    std::string_view principal,
                                                                    const InsertClaim& claim) {
  BULWARK_RETURN_IF_ERROR(Validate(name_space, entries, principal));
  LoadMemories(name_space);
  AddOnceResult result;
  BULWARK_ASSIGN_OR_RETURN(result.entries, EmbedScreenAndSign(name_space, entries, principal, {}));
  std::vector<HistoryEvent> events = AddEvents(result.entries);
  BULWARK_ASSIGN_OR_RETURN(result.outcome, entries_.CommitOnce(result.entries, events, claim));
  if (result.outcome.row_ids.empty()) {
    result.entries.clear();  // refused by the claim: nothing was stored
    return result;
  }
  AfterCommit(result.entries);
  defenses_.OnCommitted(name_space, result.entries);
  return result;
}

absl::StatusOr<std::vector<Entry>> WritePipeline::AddSystemEntries(std::string_view name_space,
                                                                   std::span<const SystemEntry> entries,
                                                                   Kind kind, std::string_view principal) {
  BULWARK_RETURN_IF_ERROR(ValidateNamespace(name_space));
  BULWARK_RETURN_IF_ERROR(ValidatePrincipal(principal));
  if (!principal.starts_with("bulwark:")) {
    return absl::InvalidArgumentError("a system principal starts with \"bulwark:\"");
  }
  if (entries.empty()) return absl::InvalidArgumentError("batch is empty");
  if (entries.size() > limits_.max_batch_entries) return absl::InvalidArgumentError("batch is too large");
  const size_t dim = static_cast<size_t>(embedder_.dimension());
  std::vector<Entry> built(entries.size());
  const int64_t now = env_.NowMicros();
  for (size_t i = 0; i < entries.size(); ++i) {
    const SystemEntry& in = entries[i];
    if (auto s = ValidateText(in.text, limits_.max_text_bytes); !s.ok()) return AtEntry(i, s);
    if (auto s = ValidateMetadata(in.metadata, limits_.max_metadata_bytes); !s.ok()) return AtEntry(i, s);
    if (in.embedding.size() != dim ||
        !std::ranges::all_of(in.embedding, [](float x) { return std::isfinite(x); })) {
      return AtEntry(i,
                     absl::InvalidArgumentError(absl::StrCat("embedding must be ", dim, " finite numbers")));
    }
    Entry& e = built[i];
    e.id = ids_.Next();
    e.name_space = std::string(name_space);
    e.text = in.text;
    e.metadata = in.metadata;
    e.principal = std::string(principal);
    e.source = Source::kSystem;
    e.kind = kind;
    e.embedding = in.embedding;
    e.created_at_us = e.updated_at_us = now;
  }
  entries_.Sign(built, {});  // no Screen(): the write gate does not judge the store's own entries
  std::vector<HistoryEvent> events = AddEvents(built);
  BULWARK_RETURN_IF_ERROR(entries_.Commit(built, events).status());
  return built;  // no OnCommitted(): system entries never move the calibration
}

absl::Status WritePipeline::Validate(std::string_view name_space, std::span<const NewEntry> entries,
                                     std::string_view principal) const {
  BULWARK_RETURN_IF_ERROR(ValidateNamespace(name_space));
  BULWARK_RETURN_IF_ERROR(ValidatePrincipal(principal));
  if (entries.empty()) return absl::InvalidArgumentError("batch is empty");
  if (entries.size() > limits_.max_batch_entries) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch has ", entries.size(), " entries; the limit is ", limits_.max_batch_entries));
  }
  for (size_t i = 0; i < entries.size(); ++i) {
    if (auto s = ValidateText(entries[i].text, limits_.max_text_bytes); !s.ok()) return AtEntry(i, s);
    if (auto s = ValidateMetadata(entries[i].metadata, limits_.max_metadata_bytes); !s.ok())
      return AtEntry(i, s);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Entry>> WritePipeline::EmbedScreenAndSign(std::string_view name_space,
                                                                     std::span<const NewEntry> entries,
                                                                     std::string_view principal,
                                                                     const ProgressFn& progress) {
  std::vector<Entry> built(entries.size());
  const int64_t now = env_.NowMicros();
  for (size_t i = 0; i < entries.size(); ++i) {
    Entry& e = built[i];
    e.id = ids_.Next();
    e.name_space = std::string(name_space);
    e.text = entries[i].text;
    e.metadata = entries[i].metadata;
    e.principal = std::string(principal);
    e.source = entries[i].source;
    e.kind = entries[i].kind;
    e.created_at_us = e.updated_at_us = now;
  }
  // Small batches stay on the caller's thread; large imports use every core.
  const size_t threads = entries.size() >= 1024 ? std::max(1u, std::thread::hardware_concurrency()) : 1;
  const size_t dim = static_cast<size_t>(embedder_.dimension());
  std::atomic<size_t> embedded{0};
  absl::Mutex progress_mu;
  BULWARK_RETURN_IF_ERROR(ParallelFor(built.size(), threads, [&](size_t begin, size_t end) -> absl::Status {
    constexpr size_t kChunk = 256;  // progress granularity
    std::vector<std::string> texts;
    for (size_t chunk = begin; chunk < end; chunk += kChunk) {
      const size_t count = std::min(kChunk, end - chunk);
      texts.clear();
      for (size_t i = chunk; i < chunk + count; ++i) texts.push_back(built[i].text);
      BULWARK_ASSIGN_OR_RETURN(std::vector<std::vector<float>> vectors, embedder_.EmbedBatch(texts));
      if (vectors.size() != count) return absl::InternalError("embedder returned the wrong count");
      for (size_t j = 0; j < count; ++j) {
        Entry& e = built[chunk + j];
        if (vectors[j].size() != dim) {
          return AtEntry(chunk + j, absl::InternalError("embedder returned a vector of the wrong dimension"));
        }
        e.embedding = std::move(vectors[j]);
        defenses_.Screen(&e);  // before signing: the report and the state are signed fields
      }
      entries_.Sign(std::span<Entry>(built).subspan(chunk, count), {});
      const size_t done = embedded.fetch_add(count) + count;
      if (progress) {
        absl::MutexLock progress_lock(&progress_mu);
        progress(done, built.size());
      }
    }
    return absl::OkStatus();
  }));
  return built;
}

std::vector<HistoryEvent> WritePipeline::AddEvents(std::span<const Entry> built) const {
  std::vector<HistoryEvent> events;
  events.reserve(built.size());
  for (const Entry& e : built) {
    events.push_back({0,
                      e.id,
                      e.name_space,
                      "add",
                      e.principal,
                      e.created_at_us,
                      {{"text", e.text},
                       {"metadata", e.metadata},
                       {"source", ToString(e.source)},
                       {"state", ToString(e.state)}}});
    if (const std::string old_id = SupersededId(e); !old_id.empty())
      events.back().detail["supersedes"] = old_id;
    if (e.state == State::kQuarantined) {  // flagged by the write gate: kept, never retrieved
      events.push_back({0,
                        e.id,
                        e.name_space,
                        "quarantine",
                        kWriteGateActor,
                        e.created_at_us,
                        {{"reasons", e.report["quarantine"]["reasons"]}, {"from_state", "new"}}});
    }
  }
  entries_.Sign({}, events);
  return events;
}

absl::StatusOr<Entry> WritePipeline::Update(std::string_view name_space, std::string_view id,
                                            const EntryUpdate& update, std::string_view actor) {
  // validate
  BULWARK_RETURN_IF_ERROR(ValidatePrincipal(actor));
  if (!update.text && !update.metadata) return absl::InvalidArgumentError("update changes nothing");
  if (update.text) BULWARK_RETURN_IF_ERROR(ValidateText(*update.text, limits_.max_text_bytes));
  if (update.metadata)
    BULWARK_RETURN_IF_ERROR(ValidateMetadata(*update.metadata, limits_.max_metadata_bytes));
  // embed
  std::optional<std::vector<float>> embedding;
  if (update.text) {
    BULWARK_ASSIGN_OR_RETURN(embedding, embedder_.Embed(*update.text));
  }
  LoadMemories(name_space);
  for (int attempt = 1;; ++attempt) {
    BULWARK_ASSIGN_OR_RETURN(const RowForUpdate read, entries_.ReadForUpdate(name_space, id));
    Entry entry = read.entry;
    if (entry.state != State::kActive && entry.state != State::kQuarantined) {
      return absl::FailedPreconditionError(
          absl::StrCat("entry ", entry.id, " is ", ToAbsl(ToString(entry.state))));
    }
    if (update.text) entry.text = *update.text;
    if (update.metadata) entry.metadata = *update.metadata;
    if (embedding) entry.embedding = *embedding;
    entry.updated_at_us = std::max(env_.NowMicros(), entry.updated_at_us + 1);
    // The signed `principal` is the last writer (issue #18 point 4): an entry never keeps a
    // provenance its current text did not come from. The author before is in the signed history.
    const std::string previous_principal = entry.principal;
    entry.principal = std::string(actor);
    const State before = entry.state;
    {
      // write gate: every update is a write and passes the gate again (metadata is screened too).
      // A flagged update of an active entry quarantines it; a quarantined entry stays quarantined
      // until an operator releases it.
      const nlohmann::json quarantine = entry.report.value("quarantine", nlohmann::json());
      defenses_.Screen(&entry);
      if (before == State::kQuarantined && !quarantine.is_null() && !entry.report.contains("quarantine")) {
        entry.report["quarantine"] = quarantine;
      }
    }
    HistoryEvent ev{0,
                    entry.id,
                    entry.name_space,
                    "update",
                    std::string(actor),
                    entry.updated_at_us,
                    {{"text", entry.text}, {"metadata", entry.metadata}, {"state", ToString(entry.state)}}};
    if (previous_principal != entry.principal) ev.detail["previous_principal"] = previous_principal;
    if (before != entry.state) {
      ev.detail["quarantined_by"] = {{"actor", kWriteGateActor},
                                     {"reasons", entry.report["quarantine"]["reasons"]}};
    }
    if (const std::string old_id = SupersededId(entry); !old_id.empty()) ev.detail["supersedes"] = old_id;
    entries_.Sign(std::span<Entry>(&entry, 1), std::span<HistoryEvent>(&ev, 1));  // sign
    const absl::Status committed = entries_.CommitUpdate(read, entry, ev);        // persist + index
    if (committed.ok()) {
      AfterCommit(std::span<const Entry>(&entry, 1));
      if (entry.state == State::kActive && entry.kind == Kind::kMemory) {
        defenses_.RememberActive(entry);
      } else {
        defenses_.Forget(entry.name_space, entry.id);
      }
      return entry;
    }
    if (!absl::IsAborted(committed) || attempt == kMaxUpdateAttempts) return committed;
  }
}

}  // namespace bulwark
