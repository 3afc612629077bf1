// WritePipeline: the write path of a store, the write-side twin of DefendedRetriever
// (retrieval/defended_retriever.h). Every add and every update runs these stages, in this order
// (DESIGN 3):
//
//   validate -> embed -> write gate (WriteDefenses::Screen) -> sign -> persist -> index
//                                 \-> flagged: quarantined (kept, signed, reviewable, never lost)
//
// then, after the acknowledgement point, tells the defenses what was accepted (rolling
// recalibration). Persist and index are EntryStore's; validation, embedding and screening happen
// before anything is written, so bad input changes nothing.
#pragma once

#include <absl/container/flat_hash_set.h>
#include <absl/status/statusor.h>
#include <absl/synchronization/mutex.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bulwark/embedder.h"
#include "bulwark/entry.h"
#include "detect/store_context.h"
#include "storage/storage_backend.h"
#include "store/memory_store.h"
#include "store/store_options.h"

namespace bulwark {

class EntryStore;
class IdGenerator;
class WriteDefenses;

// The pipeline is also the write gate's StoreContext (detect/store_context.h): the conflict
// detector asks it whether a memory it matched is still active. Before the first write to a
// namespace it loads the namespace's active memories into the gate's memory table; after a commit
// it carries out the conflict policy's "supersede": the contradicted memory of the same writer is
// deleted with a "supersede" event naming the new entry (whose "add" event names it back), so
// both are kept and linked in the signed history; and it quarantines the earlier writes of a flood
// burst the gate caught (a "quarantine" event by the write gate naming the write that completed it).
class WritePipeline final : public StoreContext {
 public:
  struct Limits {
    size_t max_text_bytes = 16 * 1024;
    size_t max_metadata_bytes = 16 * 1024;
    size_t max_batch_entries = 100'000;
  };
  // Nothing is owned; everything must outlive the pipeline.
  WritePipeline(const Limits& limits, const Embedder& embedder, WriteDefenses& defenses, EntryStore& entries,
                IdGenerator& ids, Env& env);
  ~WritePipeline() override;

  // StoreContext: true if (namespace, id) is a verified active memory. Thread-safe.
  bool IsActive(std::string_view name_space, std::string_view id) const override;

  // Adds the entries written by `principal` in one transaction, or none (MemoryStore::AddBatch's
  // contract). InvalidArgument names the first bad entry by its index ("entry 3: text is empty").
  using ProgressFn = std::function<void(size_t done, size_t total)>;
  [[nodiscard]] absl::StatusOr<std::vector<Entry>> Add(std::string_view name_space,
                                                       std::span<const NewEntry> entries,
                                                       std::string_view principal,
                                                       const ProgressFn& progress);

  // Add with a claim checked in the persist stage's transaction (StorageBackend::InsertClaim: an
  // idempotency record, a client key). The entries are built, embedded, screened and signed as for
  // Add; if the claim refuses the insert (a live idempotency record, a key held by a live entry),
  // nothing is written, the defenses are not told, and the outcome says why.
  struct AddOnceResult {
    std::vector<Entry> entries;  // what was stored (empty if the claim refused the insert)
    InsertOutcome outcome;
  };
  [[nodiscard]] absl::StatusOr<AddOnceResult> AddOnce(std::string_view name_space,
                                                      std::span<const NewEntry> entries,
                                                      std::string_view principal, const InsertClaim& claim);

  // A privileged entry the store writes for itself (MemPot honeypots, DESIGN 4.7): its text and
  // the vector to index (which need not be E(text): the fit may index the optimised vector).
  struct SystemEntry {
    std::string text;
    nlohmann::json metadata = nlohmann::json::object();
    std::vector<float> embedding;
  };
  // The privileged system write: entries of `kind` with source = system, written by `principal`
  // (which must start with "bulwark:", e.g. "bulwark:honeypots"), signed and persisted in one
  // transaction with their "add" events. Bypasses the write gate (system entries are not
  // screened) and never feeds the rolling calibration (they are not the namespace's writes).
  // Reachable only from the store's admin paths (`bulwark honeypots fit`): no HTTP route calls it.
  // Errors: InvalidArgument for a bad namespace, principal, text or metadata, an embedding of the
  // wrong dimension or not finite, an empty batch; the store's errors. Nothing is written on error.
  [[nodiscard]] absl::StatusOr<std::vector<Entry>> AddSystemEntries(std::string_view name_space,
                                                                    std::span<const SystemEntry> entries,
                                                                    Kind kind, std::string_view principal);

  // Changes text and/or metadata of an active or quarantined entry (MemoryStore::Update's
  // contract): validated, re-embedded, screened again, re-signed and written back only over the
  // version it read (retried when another writer changed the entry in between). `actor` becomes
  // the entry's signed principal (the last writer); the update event's detail keeps the one before
  // as "previous_principal" when it changes.
  [[nodiscard]] absl::StatusOr<Entry> Update(std::string_view name_space, std::string_view id,
                                             const EntryUpdate& update, std::string_view actor);

  // Takeover by a new leader of a replica group: the namespace's memories are loaded into the
  // gate's table again at its next write (the previous leader's writes included).
  void ReloadMemories(std::string_view name_space);

 private:
  // validate: namespace, principal, batch size, and every entry's text and metadata.
  absl::Status Validate(std::string_view name_space, std::span<const NewEntry> entries,
                        std::string_view principal) const;
  // Builds the entries (ids and timestamps in input order), then embeds, screens and signs them,
  // in parallel slices for large batches.
  absl::StatusOr<std::vector<Entry>> EmbedScreenAndSign(std::string_view name_space,
                                                        std::span<const NewEntry> entries,
                                                        std::string_view principal,
                                                        const ProgressFn& progress);
  // The history events of new entries: "add", and "quarantine" for those the gate flagged; signed.
  std::vector<HistoryEvent> AddEvents(std::span<const Entry> built) const;
  // Loads the namespace's active memories into the gate's memory table once per process (logged,
  // never fatal: without them the conflict detector only sees this process's writes).
  void LoadMemories(std::string_view name_space);
  // After the commit of `stored`: retires the memory each supersedes (conflict policy "supersede")
  // and updates the gate's memory table. Failures are logged: the write is already durable.
  void AfterCommit(std::span<const Entry> stored);

  const Limits limits_;
  const Embedder& embedder_;
  WriteDefenses& defenses_;
  EntryStore& entries_;
  IdGenerator& ids_;
  Env& env_;
  absl::Mutex loaded_mu_;
  absl::flat_hash_set<std::string> loaded_
      ABSL_GUARDED_BY(loaded_mu_);  // namespaces whose memories the gate's table holds
};

// The ids of the earlier writes of the flood burst a quarantined `entry` completed (its flood
// report's burst.entry_ids), or none.
std::vector<std::string> FloodBurstIds(const Entry& entry);

// The id of the memory `entry` supersedes (its conflict report's entry_id when the policy's action
// was "supersede"), or empty.
std::string SupersededId(const Entry& entry);

}  // namespace bulwark
