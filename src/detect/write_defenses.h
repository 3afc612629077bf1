// WriteDefenses: the write-time defenses of a store (DESIGN 4.5) and their persistent state. It
// is the "write gate" stage of the write pipeline (write/write_pipeline.h): it screens every new or
// changed entry before it is signed, learns from the searches the read path reports (MemSAD's
// rolling query history H), recalibrates as accepted writes arrive, and runs `bulwark calibrate`.
// Its state lives in a DefenseStateRepository (src/storage); it knows nothing of entries' storage.
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/status/status.h>
#include <absl/status/statusor.h>
#include <absl/synchronization/mutex.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bulwark/embedder.h"
#include "bulwark/entry.h"
#include "bulwark/env.h"
#include "core/latency_histogram.h"
#include "detect/write_gate.h"
#include "storage/defense_state_repository.h"
#include "store/memory_store.h"

namespace bulwark {

class Keyring;

// Who screened an entry when the gate quarantines it (the history event's actor).
inline constexpr char kWriteGateActor[] = "bulwark:write-gate";

class WriteDefenses {
 public:
  // `config`: the write-gate configuration (doc/write_gate.md; null: the defaults). The watermark
  // key is derived from the keyring's first key. Restores the query histories and calibrations
  // stored in `repository` (not owned; must outlive this object). `env` (not owned) stamps
  // calibrations. InvalidArgument for a bad configuration; the repository's error otherwise.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<WriteDefenses>> Create(
      const nlohmann::json& config, const Embedder& embedder, const Keyring& keyring,
      DefenseStateRepository* repository, Env* env);
  // Saves the query history rows not yet saved (logged on failure).
  ~WriteDefenses();

  // The write-gate stage: runs the detectors on an embedded, unsigned entry's text, and those that
  // judge what text says (validation) also on its string metadata values (metadata_text.h), which
  // readers and responders see too; stores the gate's report in entry->report and, if either is
  // flagged on an active entry, quarantines it (state and report["quarantine"], metadata reasons
  // prefixed "metadata: "). Returns whether it was flagged. Thread-safe.
  bool Screen(Entry* entry) const;

  // Called by Screen for every screened entry (id and report set) with the gate's typed outcome
  // (its text's per-detector numbers; flagged: text or metadata), so that in-process evaluation
  // reads numbers instead of parsing reports. Called on the writing threads, possibly at once
  // from several: the observer must be thread-safe. Set it before writing (not thread-safe with
  // Screen); an empty function stops observing.
  using ScreenObserver = std::function<void(const Entry& entry, const GateOutcome& outcome)>;
  void SetScreenObserver(ScreenObserver observer) { observer_ = std::move(observer); }

  // After the acknowledgement point of an add: accepted entries feed the rolling recalibration
  // (persisted when it changes), and the query history is saved every 64 new queries. Failures are
  // logged, never reported: the write is already durable.
  void OnCommitted(std::string_view name_space, std::span<const Entry> entries);

  // The conflict detector's table of the store's active memories (memory_table.h): an active
  // memory (kind memory, state active) joins it (OnCommitted does this for accepted adds; the
  // write path calls it for the namespace's existing memories before its first write, and for
  // updated entries); Forget drops one (superseded, updated away). Thread-safe.
  void RememberActive(const Entry& entry);
  void Forget(std::string_view name_space, std::string_view id);
  // The store the gate guards (store_context.h; not owned, must outlive this object).
  void SetStoreContext(const StoreContext* store) { gate_->SetStoreContext(store); }

  // A search's query embedding joins the namespace's rolling history H (or goes where the query
  // route sends it, see SetQueryRoute). Thread-safe.
  void RecordQuery(std::string_view name_space, std::span<const float> embedding);
  // Where a search's query goes when H is not this process's to keep: a replica that does not lead
  // the namespace sends it to the leader's H (server/query_history_forwarding.h). The route returns
  // true when it took the query, which then does not join the H held here; false (or no route) to
  // keep it here. Set it before searches run and clear it after they stopped (not thread-safe with
  // RecordQuery); it must be thread-safe itself.
  using QueryRoute = std::function<bool(std::string_view name_space, std::span<const float> embedding)>;
  void SetQueryRoute(QueryRoute route) { query_route_ = std::move(route); }
  // Appends to the namespace's H here, whatever the query route says: a leader receiving the queries
  // another replica served. Thread-safe.
  void AppendQuery(std::string_view name_space, std::span<const float> embedding);
  // Persists the query embeddings appended since the last save.
  [[nodiscard]] absl::Status FlushQueryHistory();
  // Takeover by a new leader of a replica group (doc/scale-out.md, "The write gate's state"):
  // replaces the namespace's query history and calibration held here with the ones stored (the
  // previous leader's), when the store has them. The repository's error otherwise.
  [[nodiscard]] absl::Status ReloadNamespace(std::string_view name_space);
  // The newest `limit` query embeddings of the namespace's history, oldest first.
  [[nodiscard]] std::vector<std::vector<float>> RecentQueries(std::string_view name_space,
                                                              size_t limit) const;

  // `bulwark calibrate` (MemoryStore::Calibrate's contract). `newest_active` supplies the newest
  // `n` active entries of the namespace (text and embedding) when the request names no reference.
  using ReferenceSource =
      std::function<absl::StatusOr<std::vector<std::pair<std::string, std::vector<float>>>>(size_t n)>;
  [[nodiscard]] absl::StatusOr<nlohmann::json> Calibrate(std::string_view name_space,
                                                         const CalibrationRequest& request,
                                                         size_t max_text_bytes,
                                                         const ReferenceSource& newest_active);
  // The namespace's calibration summary; null before calibration.
  [[nodiscard]] nlohmann::json CalibrationSummary(std::string_view name_space) const;

  const WriteGate& gate() const { return *gate_; }
  // How long Screen took per entry (text and metadata), for /metrics.
  const LatencyHistogram& screen_latency() const { return screen_latency_; }

 private:
  WriteDefenses(std::unique_ptr<WriteGate> gate, const Embedder& embedder, DefenseStateRepository* repository,
                Env* env);
  // Restores the stored query histories and calibrations: every namespace's, or only `only`'s.
  absl::Status Restore(std::optional<std::string_view> only = std::nullopt);
  // Saves a namespace's unsaved query history rows; `replace` rewrites it whole. Requires
  // history_save_mu_.
  absl::Status SaveHistory(const std::string& name_space, bool replace)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(history_save_mu_);

  std::unique_ptr<WriteGate> gate_;
  const Embedder& embedder_;
  DefenseStateRepository* repository_;
  Env* env_;
  absl::Mutex history_save_mu_;
  absl::flat_hash_map<std::string, uint64_t> history_saved_
      ABSL_GUARDED_BY(history_save_mu_);  // per namespace: saved through seq
  ScreenObserver observer_;
  QueryRoute query_route_;
  mutable LatencyHistogram screen_latency_;
};

}  // namespace bulwark
