// MemoryStore: the public facade over a store's parts (store/memory_store_impl.h). Opening a store
// checks its embedder fingerprint before anything is written, then assembles EntryStore (entries,
// history, index), WriteDefenses (the write gate and its state) and the WritePipeline over them.
#include "store/memory_store.h"

#include <absl/strings/str_cat.h>

#include <algorithm>
#include <deque>
#include <fstream>
#include <sstream>
#include <utility>

#include "core/status_macros.h"
#include "core/strings.h"
#include "core/text_validation.h"
#include "embed/embedder_factory.h"
#include "index/flat_index.h"
#include "provenance/keyring.h"
#include "storage/storage_opener.h"
#include "store/memory_store_impl.h"

namespace bulwark {
namespace {

// A memory no longer active leaves the write gate's table of memories (the conflict detector's),
// so neither its text nor its slots stay in that cache (issue #18 point 9).
absl::Status ForgetIfOk(MemoryStore::Impl& impl, std::string_view name_space, std::string_view id,
                        absl::Status status) {
  if (status.ok()) impl.defenses->Forget(name_space, id);
  return status;
}

constexpr int kMaxK = 1000;

absl::StatusOr<nlohmann::json> ReadGateConfig(const std::filesystem::path& path,
                                              const nlohmann::json& configured) {
  if (!configured.is_null()) return configured;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return nlohmann::json();
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  auto json = nlohmann::json::parse(buffer.str(), nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded())
    return absl::InvalidArgumentError(absl::StrCat(path.string(), " is not valid JSON"));
  return json;
}

// A store directory: with `create`, AlreadyExists if it holds a store, else it is made; without,
// NotFound unless it holds one.
absl::Status PrepareStoreDirectory(const StoreLayout& layout, bool create) {
  const std::filesystem::path& dir = layout.dir();
  if (!create) {
    if (layout.StoreExists()) return absl::OkStatus();
    return absl::NotFoundError(absl::StrCat("no store in ", dir.string(), " (run `bulwark init` first)"));
  }
  if (layout.StoreExists())
    return absl::AlreadyExistsError(absl::StrCat("a store already exists in ", dir.string()));
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::UnavailableError(absl::StrCat("cannot create ", dir.string(), ": ", ec.message()));
  return absl::OkStatus();
}

// A PostgreSQL store keeps no files (StoreLayout): its keyring must be named. With `create`,
// AlreadyExists if the database already holds a store (the opener then reports NotFound without).
absl::Status CheckPostgresStore(const StoreLayout& layout, bool create) {
  if (layout.keyring().empty()) {
    return absl::InvalidArgumentError(
        "a PostgreSQL store keeps no files: name its keyring file (--keyring FILE, or "
        "StoreOptions::keyring_path)");
  }
  if (!create) return absl::OkStatus();
  absl::StatusOr<StorageRepositories> existing = OpenEntryRepositories(layout.dir().string(), false);
  if (existing.ok()) return absl::AlreadyExistsError("a store already exists in that PostgreSQL database");
  return existing.status().code() == absl::StatusCode::kNotFound ? absl::OkStatus() : existing.status();
}

// The store's embedder: options.embedder, or one built from options.embedder_config, or from the
// configuration the store was created with. Records configuration and fingerprint in a new store;
// FailedPrecondition if the fingerprint differs from the stored one (before anything is written).
absl::StatusOr<std::shared_ptr<const Embedder>> OpenEmbedder(StorageBackend& backend,
                                                             const StoreOptions& options) {
  BULWARK_ASSIGN_OR_RETURN(const std::optional<std::string> stored_fingerprint,
                           backend.GetMeta("embedder_fingerprint"));
  BULWARK_ASSIGN_OR_RETURN(const std::optional<std::string> stored_config,
                           backend.GetMeta("embedder_config"));
  std::shared_ptr<const Embedder> embedder = options.embedder;
  if (!embedder) {
    nlohmann::json config = options.embedder_config;
    if (config.is_null()) {
      if (stored_config) {
        config = nlohmann::json::parse(*stored_config, nullptr, /*allow_exceptions=*/false);
        if (!config.is_object()) return absl::DataLossError("the store's embedder configuration is corrupt");
      } else {
        config = {{"kind", "lexical"}};
      }
    }
    BULWARK_ASSIGN_OR_RETURN(std::unique_ptr<Embedder> created, CreateEmbedder(config));
    embedder = std::shared_ptr<const Embedder>(std::move(created));
    if (!stored_config) BULWARK_RETURN_IF_ERROR(backend.PutMeta("embedder_config", config.dump()));
  }
  const std::string fingerprint = embedder->Fingerprint().ToString();
  if (stored_fingerprint && *stored_fingerprint != fingerprint) {
    return absl::FailedPreconditionError(
        absl::StrCat("embedder mismatch: the store was created with embedder ", *stored_fingerprint,
                     " but this embedder is ", fingerprint,
                     "; vectors from different embedders cannot be mixed (open with the original embedder "
                     "configuration, or export and re-import into a new store)"));
  }
  if (!stored_fingerprint) BULWARK_RETURN_IF_ERROR(backend.PutMeta("embedder_fingerprint", fingerprint));
  if (auto probe = FlatIndex::Create(embedder->dimension()); !probe.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("embedder dimension: ", probe.status().message()));
  }
  return embedder;
}

absl::StatusOr<std::unique_ptr<MemoryStore::Impl>> Assemble(const std::filesystem::path& dir,
                                                            const StoreOptions& options, bool create) {
  if (options.max_text_bytes == 0 || options.max_text_bytes > (16u << 20)) {
    return absl::InvalidArgumentError("max_text_bytes must be between 1 and 16 MiB");
  }
  auto impl = std::make_unique<MemoryStore::Impl>(options, StoreLayout(dir, options.keyring_path));
  impl->env = options.env ? options.env : Env::Default();
  std::error_code ec;
  BULWARK_RETURN_IF_ERROR(impl->layout.is_postgres() ? CheckPostgresStore(impl->layout, create)
                                                     : PrepareStoreDirectory(impl->layout, create));
  BULWARK_ASSIGN_OR_RETURN(StorageRepositories storage,
                           OpenEntryRepositories(impl->layout.dir().string(), create));
  std::unique_ptr<StorageBackend> backend = std::move(storage.entries);
  BULWARK_ASSIGN_OR_RETURN(impl->embedder, OpenEmbedder(*backend, options));
  const std::filesystem::path keyring_path = impl->layout.keyring();
  BULWARK_ASSIGN_OR_RETURN(Keyring keyring, (create && !std::filesystem::exists(keyring_path, ec))
                                                ? Keyring::Create(keyring_path, impl->env)
                                                : Keyring::Load(keyring_path));
  DefenseStateRepository* defense_state = storage.defense_state;  // lives as long as the entry store
  BULWARK_ASSIGN_OR_RETURN(const HybridOptions hybrid, ParseRetrievalConfig(options.retrieval_config));
  BULWARK_ASSIGN_OR_RETURN(
      impl->entries, EntryStore::Open(std::move(backend), std::make_unique<Keyring>(std::move(keyring)),
                                      {impl->embedder->dimension(), options.other_writers_check_ms, impl->env,
                                       hybrid, keyring_path, options.hold_all_namespaces,
                                       options.index_snapshot_min_rows < 0 ? std::filesystem::path()
                                                                           : impl->layout.index_snapshot(),
                                       std::max<int64_t>(options.index_snapshot_min_rows, 0)}));
  impl->retrieval = std::make_unique<RetrievalSettings>(&impl->entries->backend(), &impl->entries->keyring(),
                                                        hybrid.default_retrieval,
                                                        options.other_writers_check_ms, impl->env);
  BULWARK_ASSIGN_OR_RETURN(const int64_t signed_settings, impl->retrieval->SignSettingsFromBeforeSigning());
  (void)signed_settings;  // 0 once done
  BULWARK_ASSIGN_OR_RETURN(const nlohmann::json gate_config,
                           ReadGateConfig(impl->layout.write_gate_config(), options.write_gate_config));
  BULWARK_ASSIGN_OR_RETURN(impl->defenses,
                           WriteDefenses::Create(gate_config, *impl->embedder, impl->entries->keyring(),
                                                 defense_state, impl->env));
  impl->ids = std::make_unique<IdGenerator>(impl->env);
  impl->pipeline = std::make_unique<WritePipeline>(
      WritePipeline::Limits{options.max_text_bytes, options.max_metadata_bytes, options.max_batch_entries},
      *impl->embedder, *impl->defenses, *impl->entries, *impl->ids, *impl->env);
  return impl;
}

}  // namespace

MemoryStore::MemoryStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
MemoryStore::~MemoryStore() = default;

absl::StatusOr<std::unique_ptr<MemoryStore>> MemoryStore::Create(const std::filesystem::path& dir,
                                                                 const StoreOptions& options) {
  BULWARK_ASSIGN_OR_RETURN(std::unique_ptr<Impl> impl, Assemble(dir, options, /*create=*/true));
  return std::unique_ptr<MemoryStore>(new MemoryStore(std::move(impl)));
}

absl::StatusOr<std::unique_ptr<MemoryStore>> MemoryStore::Open(const std::filesystem::path& dir,
                                                               const StoreOptions& options) {
  BULWARK_ASSIGN_OR_RETURN(std::unique_ptr<Impl> impl, Assemble(dir, options, /*create=*/false));
  return std::unique_ptr<MemoryStore>(new MemoryStore(std::move(impl)));
}

absl::StatusOr<Entry> MemoryStore::Add(std::string_view name_space, const NewEntry& entry,
                                       std::string_view principal) {
  auto added = AddBatch(name_space, std::span<const NewEntry>(&entry, 1), principal);
  if (!added.ok()) {
    // A single add names no index.
    std::string_view message = ToStd(added.status().message());
    if (message.starts_with("entry 0: ")) message.remove_prefix(9);
    return absl::Status(added.status().code(), ToAbsl(message));
  }
  return std::move(added->front());
}

absl::StatusOr<std::vector<Entry>> MemoryStore::AddBatch(std::string_view name_space,
                                                         std::span<const NewEntry> entries,
                                                         std::string_view principal,
                                                         const ProgressFn& progress) {
  return impl_->pipeline->Add(name_space, entries, principal, progress);
}

absl::StatusOr<SearchResult> MemoryStore::Search(std::string_view name_space, std::string_view query,
                                                 const SearchOptions& options) {
  BULWARK_RETURN_IF_ERROR(ValidateNamespace(name_space));
  if (auto s = ValidateText(query, impl_->options.max_text_bytes); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("query: ", s.message()));
  }
  if (options.k < 1 || options.k > kMaxK) {
    return absl::InvalidArgumentError(absl::StrCat("k must be between 1 and ", kMaxK));
  }
  if (!options.metadata_filter.is_object()) {
    return absl::InvalidArgumentError("metadata filter must be a JSON object");
  }
  auto embedded = options.query_embedding != nullptr
                      ? absl::StatusOr<std::vector<float>>(*options.query_embedding)
                      : impl_->embedder->Embed(query);
  if (!embedded.ok()) return embedded.status();
  if (embedded->size() != static_cast<size_t>(impl_->embedder->dimension())) {
    return absl::InvalidArgumentError("the query embedding does not have the embedder's dimension");
  }
  // MemSAD's rolling history H is fed by real searches.
  if (options.record_query) impl_->defenses->RecordQuery(name_space, *embedded);
  BULWARK_ASSIGN_OR_RETURN(const Retrieval retrieval, impl_->retrieval->Get(name_space));
  if (retrieval == Retrieval::kHybrid)
    return impl_->entries->SearchHybrid(name_space, *embedded, query, options);
  return impl_->entries->Search(name_space, *embedded, options);
}

absl::StatusOr<Entry> MemoryStore::Get(std::string_view name_space, std::string_view id) {
  return impl_->entries->Get(name_space, id);
}

absl::StatusOr<std::vector<HistoryEvent>> MemoryStore::History(std::string_view name_space,
                                                               std::string_view id) {
  return impl_->entries->History(name_space, id);
}

absl::StatusOr<Entry> MemoryStore::Update(std::string_view name_space, std::string_view id,
                                          const EntryUpdate& update, std::string_view actor) {
  return impl_->pipeline->Update(name_space, id, update, actor);
}

absl::Status MemoryStore::Delete(std::string_view name_space, std::string_view id, std::string_view actor) {
  return ForgetIfOk(
      *impl_, name_space, id,
      impl_->entries->Transition(
          name_space, id, actor,
          {"delete", StateBit(State::kActive) | StateBit(State::kQuarantined), State::kDeleted, {}}));
}

absl::Status MemoryStore::Purge(std::string_view name_space, std::string_view id, std::string_view actor) {
  return ForgetIfOk(*impl_, name_space, id,
                    impl_->entries->Transition(name_space, id, actor,
                                               {"purge", ~StateBit(State::kPurged), State::kPurged, {}}));
}

absl::Status MemoryStore::Quarantine(std::string_view name_space, std::string_view id, std::string_view actor,
                                     const nlohmann::json& reasons) {
  return ForgetIfOk(
      *impl_, name_space, id,
      impl_->entries->Transition(
          name_space, id, actor,
          {"quarantine", StateBit(State::kActive), State::kQuarantined, {{"reasons", reasons}}}));
}

absl::Status MemoryStore::Release(std::string_view name_space, std::string_view id, std::string_view actor) {
  BULWARK_RETURN_IF_ERROR(impl_->entries->Transition(
      name_space, id, actor, {"release", StateBit(State::kQuarantined), State::kActive, {}}));
  // Active again: the conflict detector compares later writes with it.
  if (absl::StatusOr<Entry> released = impl_->entries->Get(name_space, id); released.ok())
    impl_->defenses->RememberActive(*released);
  return absl::OkStatus();
}

absl::Status MemoryStore::Reject(std::string_view name_space, std::string_view id, std::string_view actor) {
  return impl_->entries->Transition(name_space, id, actor,
                                    {"reject", StateBit(State::kQuarantined), State::kDeleted, {}});
}

absl::StatusOr<std::vector<Entry>> MemoryStore::ListQuarantined(std::string_view name_space, size_t limit) {
  std::vector<Entry> out;
  BULWARK_RETURN_IF_ERROR(Export(name_space, StateBit(State::kQuarantined), [&](const Entry& e) {
                            if (out.size() < limit) out.push_back(e);
                            return absl::OkStatus();
                          }).status());
  return out;
}

absl::StatusOr<uint32_t> MemoryStore::RotateSigningKey() { return impl_->entries->RotateSigningKey(); }

absl::StatusOr<int64_t> MemoryStore::Export(std::string_view name_space, uint32_t state_mask,
                                            const std::function<absl::Status(const Entry&)>& visit) {
  BULWARK_RETURN_IF_ERROR(ValidateNamespace(name_space));
  return impl_->entries->Export(name_space, state_mask, visit);
}

absl::StatusOr<VerifyReport> MemoryStore::Verify() {
  BULWARK_ASSIGN_OR_RETURN(VerifyReport report, impl_->entries->Verify());
  // The signed per-namespace settings of the store (issue #18 point 6 (iii)), as rows without a row id.
  BULWARK_ASSIGN_OR_RETURN(const auto settings, impl_->retrieval->Verify());
  for (const auto& [name_space, reason] : settings) {
    report.bad_rows.push_back({0, absl::StrCat("retrieval/", name_space), name_space, reason});
  }
  return report;
}

absl::StatusOr<StoreStats> MemoryStore::Stats() {
  return impl_->entries->Stats(impl_->embedder->Fingerprint());
}

absl::StatusOr<nlohmann::json> MemoryStore::Calibrate(std::string_view name_space,
                                                      const CalibrationRequest& request) {
  const auto newest_active =
      [&](size_t n) -> absl::StatusOr<std::vector<std::pair<std::string, std::vector<float>>>> {
    std::deque<std::pair<std::string, std::vector<float>>> newest;
    BULWARK_RETURN_IF_ERROR(Export(name_space, StateBit(State::kActive), [&](const Entry& e) {
                              newest.emplace_back(e.text, e.embedding);
                              if (newest.size() > n) newest.pop_front();
                              return absl::OkStatus();
                            }).status());
    return std::vector<std::pair<std::string, std::vector<float>>>(std::make_move_iterator(newest.begin()),
                                                                   std::make_move_iterator(newest.end()));
  };
  return impl_->defenses->Calibrate(name_space, request, impl_->options.max_text_bytes, newest_active);
}

nlohmann::json MemoryStore::CalibrationSummary(std::string_view name_space) const {
  return impl_->defenses->CalibrationSummary(name_space);
}

const Embedder& MemoryStore::embedder() const { return *impl_->embedder; }

int64_t MemoryStore::signature_failures() const { return impl_->entries->signature_failures(); }

nlohmann::json ToJson(const VerifyReport& report) {
  nlohmann::json rows = nlohmann::json::array();
  for (const BadRow& b : report.bad_rows) {
    rows.push_back({{"row_id", b.row_id}, {"id", b.id}, {"namespace", b.name_space}, {"reason", b.reason}});
  }
  nlohmann::json events = nlohmann::json::array();
  for (const BadEvent& b : report.bad_events) {
    events.push_back(
        {{"seq", b.seq}, {"entry_id", b.entry_id}, {"namespace", b.name_space}, {"reason", b.reason}});
  }
  nlohmann::json out = {{"rows_checked", report.rows_checked},
                        {"bad_rows", std::move(rows)},
                        {"events_checked", report.events_checked},
                        {"bad_events", std::move(events)},
                        {"integrity", report.integrity_problem.empty() ? "ok" : report.integrity_problem},
                        {"ok", report.ok()}};
  if (!report.other_problems.empty()) out["other_problems"] = report.other_problems;
  return out;
}

}  // namespace bulwark
