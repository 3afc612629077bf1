// DBImpl (see db_impl.h): the role and input checks of the HTTP routes (server/memory_routes.cc,
// server/quarantine_routes.cc), then the same internal calls.
#include "api/db_impl.h"

#include <absl/strings/str_cat.h>

#include <utility>

#include "core/ids.h"
#include "core/status_macros.h"
#include "core/strings.h"
#include "storage/sqlite/sqlite_honeypot_repository.h"
#include "storage/store_layout.h"
#include "store/entry_keys.h"
#include "store/memory_store_impl.h"

namespace bulwark {
namespace {

constexpr size_t kMaxQuarantineList = 10'000;

bool IsAdmin(CallerRole role) { return role == CallerRole::kAdmin; }

absl::Status NeedPrincipal(std::string_view principal) {
  if (principal.empty()) return absl::InvalidArgumentError("the context's principal is empty");
  return absl::OkStatus();
}

absl::Status NeedWriter(const WriteContext& context) {
  BULWARK_RETURN_IF_ERROR(NeedPrincipal(context.principal));
  if (context.role == CallerRole::kReader)
    return absl::PermissionDeniedError("writing needs the writer role");
  return absl::OkStatus();
}

absl::Status NeedAdmin(CallerRole role, std::string_view what) {
  if (IsAdmin(role)) return absl::OkStatus();
  return absl::PermissionDeniedError(absl::StrCat(ToAbsl(what), " needs the admin role"));
}

absl::Status CheckId(std::string_view id) {
  if (IsValidEntryId(id)) return absl::OkStatus();
  return absl::InvalidArgumentError("the id is not a valid entry id (26 Crockford base32 characters)");
}

// Issue #18 point 7: only admins see the write gate's report (an oracle for tuning a poison).
Entry AsSeenBy(CallerRole role, Entry entry) {
  if (!IsAdmin(role)) entry.report = nlohmann::json::object();
  return entry;
}

QueryGateOutcome::Decision ToOutcome(GateDecision decision) {
  using D = QueryGateOutcome::Decision;
  switch (decision) {
    case GateDecision::kOff:
      return D::kOff;
    case GateDecision::kNoGate:
      return D::kNoGate;
    case GateDecision::kPass:
      return D::kPass;
    case GateDecision::kFlag:
      return D::kFlag;
    case GateDecision::kEscalate:
      return D::kEscalate;
    case GateDecision::kStrip:
      return D::kStrip;
    case GateDecision::kReject:
      break;  // never returned: a rejected query is an error
  }
  return D::kOff;
}

SmoothedAnswerSummary Summarize(const SmoothedAnswer& s) {
  return {.abstained = s.abstained,
          .answer = s.answer,
          .reason = s.reason,
          .majority_runs = s.majority_runs,
          .runs = static_cast<int>(s.runs.size()),
          .delta = s.certificate.delta};
}

// The store's entry for a memory `context` adds; InvalidArgument for reserved metadata or an
// expiry that is not in the future.
absl::StatusOr<NewEntry> ToNewEntry(const WriteContext& context, const NewMemory& memory, int64_t now_us) {
  NewEntry entry{.text = memory.text, .metadata = memory.metadata, .source = context.source};
  if (!entry.metadata.is_object()) return absl::InvalidArgumentError("metadata must be a JSON object");
  BULWARK_RETURN_IF_ERROR(CheckNoReservedMetadata(entry.metadata));
  if (memory.expires_at_us) {
    if (*memory.expires_at_us <= now_us)
      return absl::InvalidArgumentError("expires_at_us is not in the future");
    entry.metadata[kExpiresAtField] = *memory.expires_at_us;
  }
  return entry;
}

}  // namespace

DB::~DB() = default;

absl::StatusOr<std::unique_ptr<DB>> DB::Create(const std::filesystem::path& dir, const Options& options) {
  BULWARK_ASSIGN_OR_RETURN(std::unique_ptr<DBImpl> db, DBImpl::Make(dir, options, /*create=*/true));
  return std::unique_ptr<DB>(std::move(db));
}

absl::StatusOr<std::unique_ptr<DB>> DB::Open(const std::filesystem::path& dir, const Options& options) {
  BULWARK_ASSIGN_OR_RETURN(std::unique_ptr<DBImpl> db, DBImpl::Make(dir, options, /*create=*/false));
  return std::unique_ptr<DB>(std::move(db));
}

absl::StatusOr<std::unique_ptr<DBImpl>> DBImpl::Make(const std::filesystem::path& dir, const Options& options,
                                                     bool create) {
  BULWARK_ASSIGN_OR_RETURN(const StoreOptions store_options, ToStoreOptions(dir, options));
  if (const auto& s = options.retrieval.smoothing) {
    BULWARK_RETURN_IF_ERROR(ValidateSmoothingOptions({.m = s->m, .k = s->k, .nruns = s->nruns}));
  }
  std::unique_ptr<DBImpl> db(new DBImpl());
  db->env_ = options.env != nullptr ? options.env : Env::Default();
  db->smoothing_ = options.retrieval.smoothing;
  BULWARK_ASSIGN_OR_RETURN(
      db->store_, create ? MemoryStore::Create(dir, store_options) : MemoryStore::Open(dir, store_options));
  const std::filesystem::path database = StoreLayout(dir).database();
  BULWARK_ASSIGN_OR_RETURN(db->gate_store_, GateStore::Open(database, options.keyring_path));
  db->gates_ =
      std::make_unique<GateRegistry>(db->gate_store_.get(), db->env_, options.retrieval.gate_refresh_ms);
  BULWARK_ASSIGN_OR_RETURN(db->honeypot_rows_, SqliteHoneypotRepository::Open(database));
  HoneypotGuardOptions guard_options;
  guard_options.default_mode = ToHoneypotMode(options.retrieval.honeypots);
  BULWARK_ASSIGN_OR_RETURN(db->guard_, HoneypotGuard::Create(guard_options, db->store_->impl().entries.get(),
                                                             db->honeypot_rows_.get(), db->env_));
  db->retriever_ = std::make_unique<DefendedRetriever>(db->store_.get(), db->gates_.get(), nullptr, db->env_);
  db->retriever_->SetHoneypotGuard(db->guard_.get());
  return db;
}

DBImpl::~DBImpl() = default;

absl::StatusOr<Entry> DBImpl::Add(const WriteContext& context, std::string_view name_space,
                                  const NewMemory& memory) {
  BULWARK_ASSIGN_OR_RETURN(std::vector<Entry> added, AddBatch(context, name_space, {&memory, 1}));
  return std::move(added.front());
}

absl::StatusOr<std::vector<Entry>> DBImpl::AddBatch(const WriteContext& context, std::string_view name_space,
                                                    std::span<const NewMemory> memories) {
  BULWARK_RETURN_IF_ERROR(NeedWriter(context));
  if (context.source == Source::kSystem) BULWARK_RETURN_IF_ERROR(NeedAdmin(context.role, "source system"));
  const int64_t now = env_->NowMicros();
  std::vector<NewEntry> entries;
  entries.reserve(memories.size());
  for (size_t i = 0; i < memories.size(); ++i) {
    auto entry = ToNewEntry(context, memories[i], now);
    if (!entry.ok())
      return absl::InvalidArgumentError(absl::StrCat("entry ", i, ": ", entry.status().message()));
    entries.push_back(*std::move(entry));
  }
  BULWARK_ASSIGN_OR_RETURN(std::vector<Entry> added,
                           store_->AddBatch(name_space, entries, context.principal));
  for (Entry& e : added) e = AsSeenBy(context.role, std::move(e));
  return added;
}

absl::StatusOr<SearchResponse> DBImpl::Search(const ReadContext& context, std::string_view name_space,
                                              std::string_view query, const QueryOptions& options) {
  BULWARK_RETURN_IF_ERROR(NeedPrincipal(context.principal));
  if (options.include_quarantined) BULWARK_RETURN_IF_ERROR(NeedAdmin(context.role, "include_quarantined"));
  DefendedSearchRequest request;
  request.name_space = std::string(name_space);
  request.query = std::string(query);
  request.search.k = options.k;
  request.search.include_quarantined = options.include_quarantined;
  request.search.metadata_filter = options.metadata_filter;
  request.may_weaken_gate = IsAdmin(context.role);
  if (const std::optional<SmoothingSettings> s = options.smoothing ? options.smoothing : smoothing_) {
    request.smoothing = SmoothingOptions{.m = s->m, .k = s->k, .nruns = s->nruns};
  }
  request.principal = context.principal;
  request.session = context.session;
  BULWARK_ASSIGN_OR_RETURN(DefendedSearchResult result, retriever_->Search(request));
  if (result.rejected())
    return absl::PermissionDeniedError("query_rejected: the query gate rejected this query");

  SearchResponse response;
  response.k = result.k;
  response.withheld_candidates = result.search.rejected_candidates;
  response.gate.decision = ToOutcome(result.gate.decision);
  response.gate.flagged = result.gate.flagged;
  if (IsAdmin(context.role)) {
    response.gate.score = result.gate.score;
    response.gate.threshold = result.gate.threshold;
  }
  for (SearchHit& hit : result.search.hits) {
    if (hit.entry.kind == Kind::kHoneypot) continue;  // never (the retriever drops them too)
    response.hits.push_back({AsSeenBy(context.role, std::move(hit.entry)), hit.score});
  }
  if (result.smoothed) response.smoothed = Summarize(*result.smoothed);
  return response;
}

absl::StatusOr<Entry> DBImpl::LoadVisible(std::string_view name_space, std::string_view id) const {
  BULWARK_RETURN_IF_ERROR(CheckId(id));
  BULWARK_ASSIGN_OR_RETURN(Entry entry, store_->Get(name_space, id));
  if (entry.kind == Kind::kHoneypot || IsExpired(entry, env_->NowMicros())) {
    return absl::NotFoundError(absl::StrCat("no entry ", ToAbsl(id), " in namespace ", ToAbsl(name_space)));
  }
  return entry;
}

absl::StatusOr<Entry> DBImpl::LoadRewritable(const WriteContext& context, std::string_view name_space,
                                             std::string_view id) const {
  BULWARK_RETURN_IF_ERROR(NeedWriter(context));
  BULWARK_ASSIGN_OR_RETURN(Entry entry, LoadVisible(name_space, id));
  // Issue #18 point 4, as MayRewrite in server/memory_routes.cc.
  if (IsAdmin(context.role)) return entry;
  if (entry.source == Source::kSystem)
    return absl::PermissionDeniedError("only an admin may change a system entry");
  if (entry.principal != context.principal) {
    return absl::PermissionDeniedError(
        "only the entry's principal (its last writer) or an admin may change it");
  }
  return entry;
}

absl::StatusOr<Entry> DBImpl::Get(const ReadContext& context, std::string_view name_space,
                                  std::string_view id) {
  BULWARK_RETURN_IF_ERROR(NeedPrincipal(context.principal));
  BULWARK_ASSIGN_OR_RETURN(Entry entry, LoadVisible(name_space, id));
  return AsSeenBy(context.role, std::move(entry));
}

absl::StatusOr<std::vector<HistoryEvent>> DBImpl::History(const ReadContext& context,
                                                          std::string_view name_space, std::string_view id) {
  BULWARK_RETURN_IF_ERROR(NeedPrincipal(context.principal));
  BULWARK_RETURN_IF_ERROR(LoadVisible(name_space, id).status());
  return store_->History(name_space, id);
}

absl::StatusOr<Entry> DBImpl::Update(const WriteContext& context, std::string_view name_space,
                                     std::string_view id, const EntryUpdate& update) {
  BULWARK_ASSIGN_OR_RETURN(const Entry entry, LoadRewritable(context, name_space, id));
  EntryUpdate change = update;
  if (change.metadata) {
    if (!change.metadata->is_object()) return absl::InvalidArgumentError("metadata must be a JSON object");
    BULWARK_RETURN_IF_ERROR(CheckNoReservedMetadata(*change.metadata));
    CarryReservedMetadata(entry.metadata, &*change.metadata);  // the entry keeps its key and expiry
  }
  BULWARK_ASSIGN_OR_RETURN(Entry updated, store_->Update(name_space, id, change, context.principal));
  return AsSeenBy(context.role, std::move(updated));
}

absl::Status DBImpl::Delete(const WriteContext& context, std::string_view name_space, std::string_view id) {
  BULWARK_RETURN_IF_ERROR(LoadRewritable(context, name_space, id).status());
  return store_->Delete(name_space, id, context.principal);
}

absl::Status DBImpl::Purge(const WriteContext& context, std::string_view name_space, std::string_view id) {
  BULWARK_RETURN_IF_ERROR(NeedPrincipal(context.principal));
  BULWARK_RETURN_IF_ERROR(NeedAdmin(context.role, "purge"));
  BULWARK_RETURN_IF_ERROR(LoadVisible(name_space, id).status());
  return store_->Purge(name_space, id, context.principal);
}

absl::StatusOr<std::vector<Entry>> DBImpl::ListQuarantined(const ReadContext& context,
                                                           std::string_view name_space, size_t limit) {
  BULWARK_RETURN_IF_ERROR(NeedPrincipal(context.principal));
  BULWARK_RETURN_IF_ERROR(NeedAdmin(context.role, "quarantine review"));
  if (limit < 1 || limit > kMaxQuarantineList)
    return absl::InvalidArgumentError("limit must be in 1 .. 10000");
  BULWARK_ASSIGN_OR_RETURN(std::vector<Entry> entries, store_->ListQuarantined(name_space, limit));
  std::erase_if(entries, [](const Entry& e) { return e.kind == Kind::kHoneypot; });
  return entries;
}

absl::Status DBImpl::Release(const WriteContext& context, std::string_view name_space, std::string_view id) {
  BULWARK_RETURN_IF_ERROR(NeedPrincipal(context.principal));
  BULWARK_RETURN_IF_ERROR(NeedAdmin(context.role, "quarantine review"));
  BULWARK_RETURN_IF_ERROR(LoadVisible(name_space, id).status());
  return store_->Release(name_space, id, context.principal);
}

absl::Status DBImpl::Reject(const WriteContext& context, std::string_view name_space, std::string_view id) {
  BULWARK_RETURN_IF_ERROR(NeedPrincipal(context.principal));
  BULWARK_RETURN_IF_ERROR(NeedAdmin(context.role, "quarantine review"));
  BULWARK_RETURN_IF_ERROR(LoadVisible(name_space, id).status());
  return store_->Reject(name_space, id, context.principal);
}

absl::StatusOr<VerifyReport> DBImpl::Verify() {
  BULWARK_ASSIGN_OR_RETURN(VerifyReport report, store_->Verify());
  BULWARK_ASSIGN_OR_RETURN(std::vector<std::string> gate_problems, gate_store_->Verify());
  for (std::string& problem : gate_problems) report.other_problems.push_back("query gate: " + problem);
  return report;
}

absl::StatusOr<StoreStats> DBImpl::Stats() { return store_->Stats(); }

absl::StatusOr<uint32_t> DBImpl::RotateSigningKey() { return store_->RotateSigningKey(); }

}  // namespace bulwark
