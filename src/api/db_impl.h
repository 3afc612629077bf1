// DBImpl: bulwark::DB (include/bulwark/db.h) over the library's internal classes, assembled as
// `bulwark serve` assembles them (server/serve.cc), so a C++ caller gets the HTTP API's defenses:
//
//   writes   -> MemoryStore (WritePipeline: validate -> embed -> write gate -> sign -> persist ->
//               index), after the role and input checks of the HTTP routes
//   searches -> DefendedRetriever (query gate from GateStore/GateRegistry -> MemoryStore::Search ->
//               Smoother), with the HoneypotGuard observing; results shown as to the caller's role
//
// The typed Options become the internal JSON configurations in ToStoreOptions (one place, tested
// by db_test.cc).
#pragma once

#include <absl/status/statusor.h>

#include <filesystem>
#include <memory>
#include <optional>

#include "bulwark/db.h"
#include "gate/gate_registry.h"
#include "gate/gate_store.h"
#include "retrieval/defended_retriever.h"
#include "retrieval/honeypot_guard.h"
#include "storage/honeypot_repository.h"
#include "store/memory_store.h"

namespace bulwark {

// The internal store configuration of typed `options` for the store in `dir`: embedder_config,
// write_gate_config (the configuration file, else <dir>/gate.json, with the typed fields laid
// over it; null when nothing is set, so the store reads gate.json itself), retrieval_config,
// limits, keyring, Env. InvalidArgument naming the field for a bad option, an unreadable or
// malformed configuration file.
[[nodiscard]] absl::StatusOr<StoreOptions> ToStoreOptions(const std::filesystem::path& dir,
                                                          const Options& options);

// The honeypot monitor's default mode for `honeypots`.
HoneypotMode ToHoneypotMode(RetrievalOptions::Honeypots honeypots);

class DBImpl final : public DB {
 public:
  // Opens (create = false) or creates the store and its read-path parts. Errors as DB::Open and
  // DB::Create.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<DBImpl>> Make(const std::filesystem::path& dir,
                                                                    const Options& options, bool create);
  ~DBImpl() override;

  absl::StatusOr<Entry> Add(const WriteContext& context, std::string_view name_space,
                            const NewMemory& memory) override;
  absl::StatusOr<std::vector<Entry>> AddBatch(const WriteContext& context, std::string_view name_space,
                                              std::span<const NewMemory> memories) override;
  absl::StatusOr<SearchResponse> Search(const ReadContext& context, std::string_view name_space,
                                        std::string_view query, const QueryOptions& options) override;
  absl::StatusOr<Entry> Get(const ReadContext& context, std::string_view name_space,
                            std::string_view id) override;
  absl::StatusOr<std::vector<HistoryEvent>> History(const ReadContext& context, std::string_view name_space,
                                                    std::string_view id) override;
  absl::StatusOr<Entry> Update(const WriteContext& context, std::string_view name_space, std::string_view id,
                               const EntryUpdate& update) override;
  absl::Status Delete(const WriteContext& context, std::string_view name_space, std::string_view id) override;
  absl::Status Purge(const WriteContext& context, std::string_view name_space, std::string_view id) override;
  absl::StatusOr<std::vector<Entry>> ListQuarantined(const ReadContext& context, std::string_view name_space,
                                                     size_t limit) override;
  absl::Status Release(const WriteContext& context, std::string_view name_space,
                       std::string_view id) override;
  absl::Status Reject(const WriteContext& context, std::string_view name_space, std::string_view id) override;
  absl::StatusOr<VerifyReport> Verify() override;
  absl::StatusOr<StoreStats> Stats() override;
  absl::StatusOr<uint32_t> RotateSigningKey() override;

  // The internal store, for the library's own tests.
  MemoryStore& store() { return *store_; }

 private:
  DBImpl() = default;
  // The entry as `context` may see it: NotFound for a honeypot or an expired entry.
  absl::StatusOr<Entry> LoadVisible(std::string_view name_space, std::string_view id) const;
  // The checks of a change to an existing entry (Update, Delete): write rights, and the
  // entry's principal or an admin. Returns the entry as it stands.
  absl::StatusOr<Entry> LoadRewritable(const WriteContext& context, std::string_view name_space,
                                       std::string_view id) const;

  Env* env_ = nullptr;
  std::optional<SmoothingSettings> smoothing_;
  // Declared in dependency order: destroyed from the retriever back to the store.
  std::unique_ptr<MemoryStore> store_;
  std::unique_ptr<GateStore> gate_store_;
  std::unique_ptr<GateRegistry> gates_;
  std::unique_ptr<HoneypotRepository> honeypot_rows_;
  std::unique_ptr<HoneypotGuard> guard_;
  std::unique_ptr<DefendedRetriever> retriever_;
};

}  // namespace bulwark
