// The MemPot read-path guard (see honeypot_guard.h).
#include "retrieval/honeypot_guard.h"

#include <absl/container/inlined_vector.h>
#include <absl/strings/cord.h>
#include <absl/strings/str_cat.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/status_macros.h"
#include "core/strings.h"
#include "store/entry_store.h"

namespace bulwark {
namespace {

using honeypot::KeyLevel;
using honeypot::SessionKey;

constexpr std::string_view kSnapshotMagic = "BWMPMON1";  // SessionMonitor's snapshot format

void AppendU32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// Reads one u32-length-prefixed field of a key; false if the bytes are short.
bool ReadField(std::string_view* bytes, std::string* field) {
  if (bytes->size() < 4) return false;
  uint32_t len = 0;
  for (int i = 0; i < 4; ++i) len |= static_cast<uint32_t>(static_cast<uint8_t>((*bytes)[i])) << (8 * i);
  bytes->remove_prefix(4);
  if (bytes->size() < len) return false;
  *field = std::string(bytes->substr(0, len));
  bytes->remove_prefix(len);
  return true;
}

// The fields of a key made by honeypot::AppendKeyBytes. DataLoss if it does not parse.
absl::Status ParseKey(std::string_view bytes, BlockedKey* out) {
  if (bytes.empty() || static_cast<uint8_t>(bytes[0]) > 1)
    return absl::DataLossError("bad honeypot block key");
  const bool session = bytes[0] == 0;
  bytes.remove_prefix(1);
  if (!ReadField(&bytes, &out->name_space) || !ReadField(&bytes, &out->principal) ||
      (session && !ReadField(&bytes, &out->session)) || !bytes.empty() || (session && out->session.empty())) {
    return absl::DataLossError("bad honeypot block key");
  }
  return absl::OkStatus();
}

// The calibrated count LLR table of the namespace's newest current fit run (its metrics'
// indexed.calibrated_count_llr, HoneypotFit). FailedPrecondition if there is none or its size is
// not k_obs + 1; DataLoss for a stored run that does not parse.
absl::StatusOr<honeypot::CountCalibration> NewestCalibration(HoneypotRepository* repository,
                                                             std::string_view name_space, int k_obs) {
  if (repository == nullptr) return absl::FailedPreconditionError("count_calibrated needs the fit runs");
  std::string metrics;
  BULWARK_RETURN_IF_ERROR(repository->ScanRuns(name_space, [&](const HoneypotRun& run) {
    if (run.removed_at_us == 0) metrics = run.metrics;  // oldest first: the last one is the newest
    return absl::OkStatus();
  }));
  if (metrics.empty())
    return absl::FailedPreconditionError("count_calibrated needs a current fit run (`honeypots fit`)");
  const nlohmann::json m = nlohmann::json::parse(metrics, nullptr, /*allow_exceptions=*/false);
  if (!m.is_object() || !m.contains("indexed") || !m["indexed"].is_object() ||
      !m["indexed"].contains("calibrated_count_llr")) {
    return absl::DataLossError("the newest fit run has no calibrated count table");
  }
  auto table = honeypot::CountCalibration::FromJson({{"llr", m["indexed"]["calibrated_count_llr"]}});
  if (!table.ok()) return absl::DataLossError(absl::StrCat("fit run's table: ", table.status().message()));
  if (table->llr.size() != static_cast<size_t>(k_obs) + 1) {
    return absl::FailedPreconditionError(
        absl::StrCat("the fit run's count table is for k_obs ", table->llr.size() - 1, ", not ", k_obs));
  }
  return *std::move(table);
}

}  // namespace

HoneypotGuard::HoneypotGuard(const HoneypotGuardOptions& options,
                             std::unique_ptr<honeypot::SessionMonitor> monitor, EntryStore* entries,
                             HoneypotRepository* repository, Env* env, std::shared_ptr<const Params> defaults)
    : options_(options),
      monitor_(std::move(monitor)),
      entries_(entries),
      repository_(repository),
      env_(env),
      settings_(std::make_unique<GuardSettingStore>(&entries->backend(), &entries->keyring())),
      intent_tables_(repository ? std::make_unique<IntentTableStore>(repository, &entries->keyring())
                                : nullptr),
      defaults_(std::move(defaults)) {}

HoneypotGuard::~HoneypotGuard() = default;

absl::StatusOr<std::unique_ptr<HoneypotGuard>> HoneypotGuard::Create(const HoneypotGuardOptions& options,
                                                                     EntryStore* entries,
                                                                     HoneypotRepository* repository,
                                                                     Env* env) {
  if (entries == nullptr) return absl::InvalidArgumentError("the guard needs the entry store");
  if (options.k_obs < 1 || options.k_obs > 64)
    return absl::InvalidArgumentError("k_obs must be between 1 and 64");
  if (options.monitor.llr.kind == honeypot::LlrEstimatorKind::kGlobalSimilarity)
    return absl::InvalidArgumentError("the read path does not compute Eq. 19's global cosines");
  BULWARK_ASSIGN_OR_RETURN(std::unique_ptr<honeypot::SessionMonitor> monitor,
                           honeypot::SessionMonitor::Create(options.monitor));
  GuardSetting setting;
  setting.mode = options.default_mode;
  setting.k_obs = options.k_obs;
  setting.estimator = options.monitor.llr.kind;
  setting.h0 = options.monitor.sprt.lower_boundary;
  setting.alpha = options.monitor.sprt.alpha;
  setting.beta = options.monitor.sprt.beta;
  auto defaults = std::make_shared<const Params>(
      Params{setting, monitor->sprt(), options.monitor.llr, options.intent, nullptr});
  std::unique_ptr<HoneypotGuard> guard(new HoneypotGuard(options, std::move(monitor), entries, repository,
                                                         env ? env : Env::Default(), std::move(defaults)));
  BULWARK_RETURN_IF_ERROR(guard->LoadBlocks());
  ParamsMap params;
  BULWARK_RETURN_IF_ERROR(guard->ReadSettings(/*strict=*/true, {}, &params));
  {
    absl::MutexLock lock(&guard->mu_);
    guard->params_ = std::move(params);
  }
  if (options.settings_refresh_ms >= 0) {
    guard->next_refresh_us_ = guard->env_->NowMicros() + int64_t{options.settings_refresh_ms} * 1000;
  }
  return guard;
}

// Builds a monitor snapshot (doc/honeypots.md, "Byte formats") from the persisted blocks; the
// monitor validates every record.
absl::Status HoneypotGuard::LoadBlocks() {
  if (repository_ == nullptr) return absl::OkStatus();
  absl::MutexLock lock(&mu_);
  std::string records;
  uint64_t count = 0;
  BULWARK_RETURN_IF_ERROR(
      repository_->ScanBlocks([&](const HoneypotBlock& b) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        AppendU32(&records, static_cast<uint32_t>(b.key.size()));
        records += b.key;
        records += b.state;
        stored_blocks_.insert(b.key);
        ++count;
        return absl::OkStatus();
      }));
  std::string snapshot(kSnapshotMagic);
  for (int i = 0; i < 8; ++i) snapshot.push_back(static_cast<char>((count >> (8 * i)) & 0xff));
  snapshot += records;
  if (auto s = monitor_->Restore(snapshot); !s.ok()) {
    return absl::DataLossError(absl::StrCat("stored honeypot blocks: ", s.message()));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const HoneypotGuard::Params>> HoneypotGuard::MakeParams(
    std::string_view name_space, const GuardSetting& setting,
    std::shared_ptr<const honeypot::IntentEvidence> table) const {
  BULWARK_RETURN_IF_ERROR(setting.Validate());
  BULWARK_ASSIGN_OR_RETURN(honeypot::Sprt sprt,
                           honeypot::Sprt::Create({setting.alpha, setting.beta, setting.h0}));
  honeypot::LlrOptions llr = options_.monitor.llr;
  llr.kind = setting.estimator;
  if (setting.estimator == honeypot::LlrEstimatorKind::kCountCalibrated) {
    BULWARK_ASSIGN_OR_RETURN(llr.calibration, NewestCalibration(repository_, name_space, setting.k_obs));
    if (setting.calibration_cap > 0) {
      for (double& l : llr.calibration.llr)
        l = std::clamp(l, -setting.calibration_cap, setting.calibration_cap);
    }
  }
  BULWARK_RETURN_IF_ERROR(honeypot::ValidateLlrOptions(llr));
  std::shared_ptr<const honeypot::IntentEvidence> intent;
  if (setting.intent) intent = table != nullptr ? table : options_.intent;
  return std::make_shared<const Params>(
      Params{setting, sprt, std::move(llr), std::move(intent), std::move(table)});
}

absl::Status HoneypotGuard::ReadTables(bool strict, const ParamsMap& previous, TableMap* out) const {
  if (intent_tables_ == nullptr) return absl::OkStatus();
  return intent_tables_->Scan([&](std::string_view ns, const absl::StatusOr<StoredIntentTable>& table) {
    if (table.ok()) {
      (*out)[std::string(ns)] = table->evidence;
      return absl::OkStatus();
    }
    if (strict) return table.status();
    spdlog::error("honeypot intent table of namespace {} not applied: {}", ns, table.status().ToString());
    if (auto it = previous.find(std::string(ns)); it != previous.end() && it->second->table != nullptr)
      (*out)[std::string(ns)] = it->second->table;
    return absl::OkStatus();
  });
}

absl::Status HoneypotGuard::ReadSettings(bool strict, const ParamsMap& previous, ParamsMap* out) const {
  // A bad stored setting: the error when strict, else the namespace keeps what it had.
  auto keep_or_fail = [&](std::string_view ns, const absl::Status& s) -> absl::Status {
    if (strict) return s;
    spdlog::error("honeypot setting of namespace {} not applied: {}", ns, s.ToString());
    if (auto it = previous.find(std::string(ns)); it != previous.end()) (*out)[std::string(ns)] = it->second;
    return absl::OkStatus();
  };
  TableMap tables;
  BULWARK_RETURN_IF_ERROR(ReadTables(strict, previous, &tables));
  auto table_of = [&](std::string_view ns) -> std::shared_ptr<const honeypot::IntentEvidence> {
    auto it = tables.find(std::string(ns));
    return it == tables.end() ? nullptr : it->second;
  };
  auto add = [&](std::string_view ns, const GuardSetting& setting) -> absl::Status {
    auto params = MakeParams(ns, setting, table_of(ns));
    if (params.ok()) {
      (*out)[std::string(ns)] = *std::move(params);
      return absl::OkStatus();
    }
    // A calibrated table that went away (its run was removed): Eq. 17 until a new fit.
    if (params.status().code() == absl::StatusCode::kFailedPrecondition) {
      GuardSetting fallback = setting;
      fallback.estimator = honeypot::LlrEstimatorKind::kCount;
      spdlog::warn("honeypot setting of namespace {}: {}; using count (Eq. 17)", ns,
                   ToStd(params.status().message()));
      BULWARK_ASSIGN_OR_RETURN((*out)[std::string(ns)], MakeParams(ns, fallback, table_of(ns)));
      return absl::OkStatus();
    }
    return keep_or_fail(ns, params.status());
  };
  if (repository_ != nullptr) {  // the unsigned rows of before: mode and k_obs only
    BULWARK_RETURN_IF_ERROR(repository_->ScanSettings([&](const HoneypotSetting& row) -> absl::Status {
      auto mode = ParseHoneypotMode(row.mode);
      if (!mode.ok())
        return keep_or_fail(row.name_space, absl::DataLossError(absl::StrCat("stored honeypot setting: ",
                                                                             mode.status().message())));
      GuardSetting setting = defaults_->setting;
      setting.mode = *mode;
      setting.k_obs = row.k_obs;
      return add(row.name_space, setting);
    }));
  }
  BULWARK_RETURN_IF_ERROR(
      settings_->Scan([&](std::string_view ns, const absl::StatusOr<GuardSetting>& setting) {
        if (!setting.ok()) return keep_or_fail(ns, setting.status());
        return add(ns, *setting);
      }));
  // A namespace with a table and no setting of its own: the defaults with its table.
  for (const auto& [ns, table] : tables) {
    if (out->contains(ns)) continue;
    auto params = std::make_shared<Params>(*defaults_);
    params->table = table;
    if (params->setting.intent) params->intent = table;
    (*out)[ns] = std::move(params);
  }
  return absl::OkStatus();
}

absl::Status HoneypotGuard::RefreshBlocks() {
  if (repository_ == nullptr) return absl::OkStatus();
  absl::flat_hash_set<std::string> stored;
  BULWARK_RETURN_IF_ERROR(repository_->ScanBlocks([&](const HoneypotBlock& b) {
    stored.insert(b.key);
    return absl::OkStatus();
  }));
  std::vector<std::string> gone;
  {
    absl::MutexLock lock(&mu_);
    for (const std::string& key : stored_blocks_) {
      if (!stored.contains(key)) gone.push_back(key);
    }
    stored_blocks_ = std::move(stored);
  }
  // Unblocked by another process (`bulwark sessions unblock`): clear it here too.
  for (const std::string& bytes : gone) {
    BlockedKey key;
    if (!ParseKey(bytes, &key).ok()) continue;
    const KeyLevel level = key.session.empty() ? KeyLevel::kPrincipal : KeyLevel::kSession;
    monitor_->Unblock({key.name_space, key.principal, key.session}, level).IgnoreError();  // may be gone
  }
  return absl::OkStatus();
}

absl::Status HoneypotGuard::Refresh() {
  ParamsMap previous;
  {
    absl::MutexLock lock(&mu_);
    previous = params_;
  }
  ParamsMap fresh;
  BULWARK_RETURN_IF_ERROR(ReadSettings(/*strict=*/false, previous, &fresh));
  {
    absl::MutexLock lock(&mu_);
    params_ = std::move(fresh);
  }
  return RefreshBlocks();
}

void HoneypotGuard::MaybeRefresh() const {
  if (options_.settings_refresh_ms < 0) return;
  const int64_t now = env_->NowMicros();
  if (now < next_refresh_us_.load(std::memory_order_relaxed)) return;
  if (refreshing_.exchange(true)) return;  // another search is refreshing
  next_refresh_us_ = now + int64_t{options_.settings_refresh_ms} * 1000;
  // The settings are a cache of storage: refreshing them is not a change a const caller sees.
  if (auto s = const_cast<HoneypotGuard*>(this)->Refresh(); !s.ok()) {
    spdlog::error("honeypot settings and blocks not refreshed: {}", s.ToString());
  }
  refreshing_ = false;
}

std::shared_ptr<const HoneypotGuard::Params> HoneypotGuard::ParamsOf(std::string_view name_space) const {
  MaybeRefresh();
  absl::ReaderMutexLock lock(&mu_);  // every search reads; only a refresh or a setting writes
  auto it = params_.find(ToAbsl(name_space));
  return it == params_.end() ? defaults_ : it->second;
}

std::pair<std::shared_ptr<const HoneypotGuard::Params>, HoneypotMode> HoneypotGuard::ParamsAndMode(
    std::string_view name_space) const {
  MaybeRefresh();
  absl::ReaderMutexLock lock(&mu_);
  auto it = params_.find(ToAbsl(name_space));
  std::shared_ptr<const Params> params = it == params_.end() ? defaults_ : it->second;
  auto mode = mode_overrides_.find(ToAbsl(name_space));
  const HoneypotMode in_force = mode == mode_overrides_.end() ? params->setting.mode : mode->second;
  return {std::move(params), in_force};
}

absl::StatusOr<HoneypotGuard::SearchPlan> HoneypotGuard::Begin(const SessionKey& key) const {
  SearchPlan plan;
  HoneypotMode mode;
  std::tie(plan.params_, mode) = ParamsAndMode(key.ns);
  if (mode == HoneypotMode::kBlock && monitor_->IsBlocked(key)) BULWARK_RETURN_IF_ERROR(CheckAllowed(key));
  plan.observe_ = mode != HoneypotMode::kOff && entries_->HasHoneypots(key.ns);
  // The count estimators read only which rows are pots; the similarity ones and the relevance
  // evidence read the rows' cosines.
  const honeypot::LlrEstimatorKind kind = plan.params_->llr.kind;
  plan.cosines_ = options_.relevance.has_value() || (kind != honeypot::LlrEstimatorKind::kCount &&
                                                     kind != honeypot::LlrEstimatorKind::kCountCalibrated);
  return plan;
}

int HoneypotGuard::KObs(std::string_view name_space) const { return ParamsOf(name_space)->setting.k_obs; }

GuardSetting HoneypotGuard::Setting(std::string_view name_space) const {
  return ParamsOf(name_space)->setting;
}

std::shared_ptr<const honeypot::IntentEvidence> HoneypotGuard::Intent(std::string_view name_space) const {
  return ParamsOf(name_space)->intent;
}

absl::Status HoneypotGuard::PutSetting(std::string_view name_space, const GuardSetting& setting) {
  BULWARK_ASSIGN_OR_RETURN(std::shared_ptr<const Params> params,
                           MakeParams(name_space, setting, ParamsOf(name_space)->table));
  BULWARK_RETURN_IF_ERROR(settings_->Put(name_space, setting));
  absl::MutexLock lock(&mu_);
  params_[std::string(name_space)] = std::move(params);
  return absl::OkStatus();
}

void HoneypotGuard::SetMode(std::string_view name_space, HoneypotMode mode) {
  absl::MutexLock lock(&mu_);
  mode_overrides_[std::string(name_space)] = mode;
}

HoneypotMode HoneypotGuard::Mode(std::string_view name_space) const {
  std::shared_ptr<const Params> params = ParamsOf(name_space);
  absl::ReaderMutexLock lock(&mu_);
  auto it = mode_overrides_.find(ToAbsl(name_space));
  return it == mode_overrides_.end() ? params->setting.mode : it->second;
}

absl::Status HoneypotGuard::CheckAllowed(const SessionKey& key) const {
  if (Mode(key.ns) != HoneypotMode::kBlock || !monitor_->IsBlocked(key)) return absl::OkStatus();
  refusals_.fetch_add(1);
  absl::Status refused = absl::PermissionDeniedError("session_blocked");
  nlohmann::json detail = {{"namespace", std::string(key.ns)}};
  for (const KeyLevel level : {KeyLevel::kSession, KeyLevel::kPrincipal}) {
    std::optional<honeypot::KeyState> state = monitor_->Get(key, level);
    if (!state || !state->sprt.h1) continue;
    detail["level"] = level == KeyLevel::kSession ? "session" : "principal";
    detail["rounds"] = state->sprt.rounds;
    detail["decided_round"] = state->sprt.decided_round;
    detail["pot_hits"] = state->pot_hits;
    detail["statistic"] = state->sprt.statistic;
    break;
  }
  refused.SetPayload(kRefusalPayloadUrl, absl::Cord(detail.dump()));
  return refused;
}

absl::Status HoneypotGuard::CheckDecided(const SessionKey& key,
                                         const honeypot::MonitorVerdict& verdict) const {
  if (!verdict.blocked || !options_.refuse_deciding_search) return absl::OkStatus();
  return CheckAllowed(key);
}

absl::StatusOr<honeypot::MonitorVerdict> HoneypotGuard::Observe(const SessionKey& key,
                                                                const std::vector<float>& query,
                                                                std::string_view query_text,
                                                                std::string_view request_text) {
  // Without pots there is nothing to observe: such namespaces' searches cost what they did before.
  if (!ShouldObserve(key.ns)) return honeypot::MonitorVerdict();
  BULWARK_ASSIGN_OR_RETURN(std::vector<EntryStore::ObservedRow> rows,
                           entries_->Observe(key.ns, query, KObs(key.ns), query_text));
  return Record(key, rows, request_text);
}

bool HoneypotGuard::ShouldObserve(std::string_view name_space) const {
  return Mode(name_space) != HoneypotMode::kOff && entries_->HasHoneypots(name_space);
}

absl::StatusOr<honeypot::MonitorVerdict> HoneypotGuard::Record(const SessionKey& key,
                                                               std::span<const EntryStore::ObservedRow> rows,
                                                               std::string_view request_text) {
  SearchPlan plan;
  plan.params_ = ParamsOf(key.ns);
  plan.observe_ = true;
  return Record(plan, key, rows, request_text);
}

absl::StatusOr<honeypot::MonitorVerdict> HoneypotGuard::Record(const SearchPlan& plan, const SessionKey& key,
                                                               std::span<const EntryStore::ObservedRow> rows,
                                                               std::string_view request_text) {
  honeypot::MonitorVerdict verdict;
  absl::InlinedVector<honeypot::RetrievedRow, 16> top;  // k_obs rows (4 by default): no allocation
  for (const EntryStore::ObservedRow& r : rows) top.push_back({r.score, r.is_pot, r.row_id});
  honeypot::Observation obs;
  obs.top = top;
  const Params* params = plan.params_ ? plan.params_.get() : defaults_.get();
  if (params->intent != nullptr && !request_text.empty())
    obs.text_llr = params->intent->Llr(request_text, key.ns, key.principal);
  if (options_.relevance && !rows.empty()) {
    // The best memory cosine (the fused order of a hybrid observation is not the cosine order);
    // with only pots in the top k_obs, the lowest row's cosine bounds it.
    float best = -std::numeric_limits<float>::infinity(), lowest = std::numeric_limits<float>::infinity();
    for (const EntryStore::ObservedRow& r : rows) {
      lowest = std::min(lowest, r.score);
      if (!r.is_pot) best = std::max(best, r.score);
    }
    if (!std::isfinite(best)) best = lowest;
    obs.text_llr += options_.relevance->Llr(best);
  }
  if (options_.coverage != nullptr) obs.text_llr += options_.coverage->Observe(key, obs.top);
  observations_.fetch_add(1);
  verdict = monitor_->Observe(key, obs, env_->NowMicros(), params->sprt, params->llr);
  absl::Status persisted;
  if (verdict.session == honeypot::SprtDecision::kH1) persisted.Update(PersistBlock(key, KeyLevel::kSession));
  if (verdict.principal == honeypot::SprtDecision::kH1)
    persisted.Update(PersistBlock(key, KeyLevel::kPrincipal));
  if (!persisted.ok()) return persisted;
  return verdict;
}

absl::Status HoneypotGuard::PersistBlock(const SessionKey& key, KeyLevel level) {
  std::optional<honeypot::KeyState> state = monitor_->Get(key, level);
  // Only the deciding round: a key stays H1 (monitor mode keeps observing it), and its block was
  // stored when it was decided.
  if (!state || !state->sprt.h1 || state->sprt.decided_round != state->sprt.rounds) return absl::OkStatus();
  blocks_.fetch_add(1);
  spdlog::warn("honeypot monitor blocked {} {} in namespace {}",
               level == KeyLevel::kSession ? "session" : "principal",
               level == KeyLevel::kSession ? std::string(key.session) : std::string(key.principal), key.ns);
  if (repository_ == nullptr) return absl::OkStatus();
  HoneypotBlock block;
  block.name_space = std::string(key.ns);
  honeypot::AppendKeyBytes(key, level, &block.key);
  block.state = honeypot::EncodeKeyState(*state);
  return repository_->PutBlock(block);
}

absl::StatusOr<std::vector<BlockedKey>> HoneypotGuard::Blocked(std::string_view name_space) const {
  std::vector<BlockedKey> out;
  if (repository_ == nullptr) return out;
  BULWARK_RETURN_IF_ERROR(repository_->ScanBlocks([&](const HoneypotBlock& b) {
    BlockedKey key;
    BULWARK_RETURN_IF_ERROR(ParseKey(b.key, &key));
    BULWARK_ASSIGN_OR_RETURN(key.state, honeypot::DecodeKeyState(b.state));
    if (name_space.empty() || key.name_space == name_space) out.push_back(std::move(key));
    return absl::OkStatus();
  }));
  return out;
}

absl::Status HoneypotGuard::Unblock(std::string_view name_space, std::string_view principal,
                                    std::string_view session) {
  const SessionKey key{name_space, principal, session};
  const KeyLevel level = session.empty() ? KeyLevel::kPrincipal : KeyLevel::kSession;
  std::string bytes;
  honeypot::AppendKeyBytes(key, level, &bytes);
  const std::optional<honeypot::KeyState> state = monitor_->Get(key, level);
  const bool blocked_in_memory = state && state->sprt.h1;
  if (blocked_in_memory) BULWARK_RETURN_IF_ERROR(monitor_->Unblock(key, level));
  absl::Status stored = repository_ ? repository_->DeleteBlock(bytes) : absl::NotFoundError("");
  if (!blocked_in_memory && !stored.ok()) return absl::NotFoundError("no such blocked session or principal");
  if (!stored.ok() && stored.code() != absl::StatusCode::kNotFound) return stored;
  return absl::OkStatus();
}

}  // namespace bulwark
