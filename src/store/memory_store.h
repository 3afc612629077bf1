// MemoryStore: the store the public bulwark::DB (bulwark/db.h, api/db_impl.h) and the library's
// own layers (server, CLI, evaluation) are built on; not installed. A store is a directory holding the SQLite
// database (bulwark.db) and, by default, the signing keyring (keyring.json).
//
//   auto store = bulwark::MemoryStore::Open("/var/lib/bulwark", {});
//   auto entry = (*store)->Add("alice", {.text = "Alice prefers window seats"}, "alice");
//   auto hits  = (*store)->Search("alice", "seat preference", {.k = 5});
//
// Guarantees:
//   * An Add/AddBatch that returned OK is durable (SQLite WAL, synchronous=FULL); a batch commits
//     all-or-nothing.
//   * Every entry returned by Search or Get has passed its HMAC check. Rows that fail are never
//     returned; they are counted (signature_failures()), logged, and listed by Verify(). History
//     events are signed too; one that fails is shown without its content.
//   * Namespaces are hard partitions: nothing in one namespace is reachable from another.
//   * Bad input returns InvalidArgument and changes nothing.
// Thread-safe: concurrent searches run in parallel; writes are serialized. Other processes may
// write to the same store: searches see their changes within StoreOptions::other_writers_check_ms.
#pragma once

#include <absl/status/status.h>
#include <absl/status/statusor.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bulwark/embedder.h"
#include "bulwark/entry.h"
#include "bulwark/reports.h"
#include "store/store_options.h"

namespace bulwark {

struct SearchResult {
  std::vector<SearchHit> hits;
  int rejected_candidates = 0;  // candidates dropped because they failed verification
  // Rows read back from storage (and verified) to answer the search: k when every best candidate
  // verifies and matches; 0 when the metadata filter matches no indexed row.
  int64_t rows_read = 0;
  // Time spent reading those rows back and checking their tags (the rest of a search is the index).
  double verify_seconds = 0;
};

// Inputs of MemoryStore::Calibrate (`bulwark calibrate`, DESIGN 4.5).
struct CalibrationRequest {
  // Calibration queries. Non-empty: they (each followed by " " + trigger when a trigger is
  // given) replace the namespace's rolling query history, so detection runs against the same H
  // the threshold was set on. Empty: the namespace's current history (fed by its searches).
  std::vector<std::string> queries;
  std::string trigger;  // triggered calibration (MemSAD App. D); needs `queries`
  // Benign reference set M_ref: these texts, or else the `from_store` newest active entries.
  std::vector<std::string> reference;
  size_t from_store = 50;
  std::optional<double> target_fpr;  // default: the gate configuration's target_fpr
  std::optional<double> kappa;       // default: the gate configuration's memsad.kappa
};

class MemoryStore {
 public:
  // Creates a new store in `dir` (created if absent; must not already hold a store) with a new
  // keyring (unless options.keyring_path names an existing one). AlreadyExists if a store exists.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<MemoryStore>> Create(const std::filesystem::path& dir,
                                                                           const StoreOptions& options);
  // Opens an existing store. NotFound if there is none; FailedPrecondition if the embedder's
  // fingerprint differs from the one the store was created with; DataLoss for a damaged store
  // or keyring.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<MemoryStore>> Open(const std::filesystem::path& dir,
                                                                         const StoreOptions& options);
  ~MemoryStore();

  // Adds one entry written by `principal`. Returns the stored entry (id, timestamps, tag set).
  [[nodiscard]] absl::StatusOr<Entry> Add(std::string_view name_space, const NewEntry& entry,
                                          std::string_view principal);
  // Adds all entries in one transaction, or none. InvalidArgument names the first bad entry by
  // its index ("entry 3: text is empty"). `progress`, if set, is called with (embedded, total) as
  // embedding proceeds.
  using ProgressFn = std::function<void(size_t done, size_t total)>;
  [[nodiscard]] absl::StatusOr<std::vector<Entry>> AddBatch(std::string_view name_space,
                                                            std::span<const NewEntry> entries,
                                                            std::string_view principal,
                                                            const ProgressFn& progress = {});

  // Top-k verified entries by cosine similarity to `query`: exactly the k best (ties to the older
  // row) among the namespace's entries that pass verification as read from storage during this
  // call and match the options. Candidates come from the in-memory index (vectors, states and
  // metadata as this store last wrote or loaded them); each is then read from storage, verified,
  // and checked against the options again, so an entry changed behind the store's back is never
  // returned in its changed form.
  [[nodiscard]] absl::StatusOr<SearchResult> Search(std::string_view name_space, std::string_view query,
                                                    const SearchOptions& options);
  // The verified entry, in any state. NotFound if absent (or in another namespace); DataLoss if it
  // fails verification.
  [[nodiscard]] absl::StatusOr<Entry> Get(std::string_view name_space, std::string_view id);
  // The entry's history, oldest first. NotFound if the entry is absent. Every event's tag is
  // checked: an event that fails is returned with verified = false and its detail withheld
  // (counted in signature_failures(), listed by Verify()).
  [[nodiscard]] absl::StatusOr<std::vector<HistoryEvent>> History(std::string_view name_space,
                                                                  std::string_view id);

  // Replaces text and/or metadata of an active or quarantined entry (re-embedded and re-signed);
  // `actor` becomes its principal, the one before is kept in the update's history event.
  [[nodiscard]] absl::StatusOr<Entry> Update(std::string_view name_space, std::string_view id,
                                             const EntryUpdate& update, std::string_view actor);
  // Soft delete: the entry stays in storage and history, and is never retrieved again.
  [[nodiscard]] absl::Status Delete(std::string_view name_space, std::string_view id, std::string_view actor);
  // GDPR erasure: text, metadata and embedding are erased from the entry and from every history
  // event; the id and the fact of the purge remain.
  [[nodiscard]] absl::Status Purge(std::string_view name_space, std::string_view id, std::string_view actor);

  // Quarantine review (DESIGN 4.5). A quarantined entry is kept and signed but never retrieved
  // unless a search asks for it. Quarantine: active -> quarantined, with `reasons` recorded in
  // the history and the entry's report. Release: quarantined -> active. Reject: quarantined ->
  // deleted. FailedPrecondition from any other state.
  [[nodiscard]] absl::Status Quarantine(std::string_view name_space, std::string_view id,
                                        std::string_view actor, const nlohmann::json& reasons);
  [[nodiscard]] absl::Status Release(std::string_view name_space, std::string_view id,
                                     std::string_view actor);
  [[nodiscard]] absl::Status Reject(std::string_view name_space, std::string_view id, std::string_view actor);
  // Verified quarantined entries of the namespace, oldest first, at most `limit`.
  [[nodiscard]] absl::StatusOr<std::vector<Entry>> ListQuarantined(std::string_view name_space,
                                                                   size_t limit = 1000);

  // Adds a new newest signing key to the keyring file; later writes use it, older entries still
  // verify. Returns the new key id.
  [[nodiscard]] absl::StatusOr<uint32_t> RotateSigningKey();

  // Calls `visit` with every verified entry of the namespace whose state is in `states`, oldest
  // first. Rows that fail verification are skipped and counted in the returned number.
  [[nodiscard]] absl::StatusOr<int64_t> Export(std::string_view name_space, uint32_t state_mask,
                                               const std::function<absl::Status(const Entry&)>& visit);

  // Checks every row of the store: decodes, checks the embedding size and the HMAC tag.
  [[nodiscard]] absl::StatusOr<VerifyReport> Verify();
  [[nodiscard]] absl::StatusOr<StoreStats> Stats();

  // Computes and stores the namespace's write-gate calibration (memsad mu, sigma, N, kappa, eta;
  // memsad_plus and proactive thresholds at the target FPR on the reference set). Returns the
  // summary an operator reads. InvalidArgument for unusable input (no history and no queries,
  // fewer than 2 reference entries, a trigger without queries).
  [[nodiscard]] absl::StatusOr<nlohmann::json> Calibrate(std::string_view name_space,
                                                         const CalibrationRequest& request);
  // The namespace's calibration summary; null before calibration.
  [[nodiscard]] nlohmann::json CalibrationSummary(std::string_view name_space) const;

  const Embedder& embedder() const;
  // Rows and history events that failed verification since this process opened the store.
  int64_t signature_failures() const;

  // The store's parts (entries, write pipeline, write defenses): store/memory_store_impl.h, for
  // the library's own layers (server, CLI, evaluation). Not part of the stable API.
  class Impl;
  Impl& impl() { return *impl_; }
  const Impl& impl() const { return *impl_; }

 private:
  explicit MemoryStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace bulwark
