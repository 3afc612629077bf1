// The MemPot read-path guard (see honeypot_guard.h).
#include "retrieval/honeypot_guard.h"

#include <absl/strings/str_cat.h>
#include <spdlog/spdlog.h>

#include <cstring>

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

}  // namespace

std::string_view ToString(HoneypotMode mode) {
  switch (mode) {
    case HoneypotMode::kOff:
      return "off";
    case HoneypotMode::kMonitor:
      return "monitor";
    case HoneypotMode::kBlock:
      return "block";
  }
  return "?";
}

absl::StatusOr<HoneypotMode> ParseHoneypotMode(std::string_view name) {
  if (name == "off") return HoneypotMode::kOff;
  if (name == "monitor") return HoneypotMode::kMonitor;
  if (name == "block") return HoneypotMode::kBlock;
  return absl::InvalidArgumentError(
      absl::StrCat("honeypot mode must be off, monitor or block, not \"", ToAbsl(name), "\""));
}

HoneypotGuard::HoneypotGuard(const HoneypotGuardOptions& options,
                             std::unique_ptr<honeypot::SessionMonitor> monitor, EntryStore* entries,
                             HoneypotRepository* repository, Env* env)
    : options_(options),
      monitor_(std::move(monitor)),
      entries_(entries),
      repository_(repository),
      env_(env) {}

absl::StatusOr<std::unique_ptr<HoneypotGuard>> HoneypotGuard::Create(const HoneypotGuardOptions& options,
                                                                     EntryStore* entries,
                                                                     HoneypotRepository* repository,
                                                                     Env* env) {
  if (entries == nullptr) return absl::InvalidArgumentError("the guard needs the entry store");
  if (options.k_obs < 1 || options.k_obs > 64)
    return absl::InvalidArgumentError("k_obs must be between 1 and 64");
  BULWARK_ASSIGN_OR_RETURN(std::unique_ptr<honeypot::SessionMonitor> monitor,
                           honeypot::SessionMonitor::Create(options.monitor));
  std::unique_ptr<HoneypotGuard> guard(
      new HoneypotGuard(options, std::move(monitor), entries, repository, env ? env : Env::Default()));
  BULWARK_RETURN_IF_ERROR(guard->LoadBlocks());
  BULWARK_RETURN_IF_ERROR(guard->LoadSettings());
  return guard;
}

// Builds a monitor snapshot (doc/honeypots.md, "Byte formats") from the persisted blocks; the
// monitor validates every record.
absl::Status HoneypotGuard::LoadBlocks() {
  if (repository_ == nullptr) return absl::OkStatus();
  std::string records;
  uint64_t count = 0;
  BULWARK_RETURN_IF_ERROR(repository_->ScanBlocks([&](const HoneypotBlock& b) {
    AppendU32(&records, static_cast<uint32_t>(b.key.size()));
    records += b.key;
    records += b.state;
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

absl::Status HoneypotGuard::LoadSettings() {
  if (repository_ == nullptr) return absl::OkStatus();
  absl::MutexLock lock(&mu_);
  return repository_->ScanSettings(
      [&](const HoneypotSetting& setting) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) -> absl::Status {
        auto mode = ParseHoneypotMode(setting.mode);
        if (!mode.ok())
          return absl::DataLossError(absl::StrCat("stored honeypot setting: ", mode.status().message()));
        modes_[setting.name_space] = *mode;
        k_obs_[setting.name_space] = setting.k_obs;
        return absl::OkStatus();
      });
}

int HoneypotGuard::KObs(std::string_view name_space) const {
  absl::MutexLock lock(&mu_);
  auto it = k_obs_.find(std::string(name_space));
  return it == k_obs_.end() ? options_.k_obs : it->second;
}

void HoneypotGuard::SetMode(std::string_view name_space, HoneypotMode mode) {
  absl::MutexLock lock(&mu_);
  modes_[std::string(name_space)] = mode;
}

HoneypotMode HoneypotGuard::Mode(std::string_view name_space) const {
  absl::MutexLock lock(&mu_);
  auto it = modes_.find(std::string(name_space));
  return it == modes_.end() ? options_.default_mode : it->second;
}

absl::Status HoneypotGuard::CheckAllowed(const SessionKey& key) const {
  if (Mode(key.ns) != HoneypotMode::kBlock || !monitor_->IsBlocked(key)) return absl::OkStatus();
  refusals_.fetch_add(1);
  return absl::PermissionDeniedError("session_blocked");
}

absl::StatusOr<honeypot::MonitorVerdict> HoneypotGuard::Observe(const SessionKey& key,
                                                                const std::vector<float>& query,
                                                                std::string_view query_text) {
  // Without pots there is nothing to observe: such namespaces' searches cost what they did before.
  if (!ShouldObserve(key.ns)) return honeypot::MonitorVerdict();
  BULWARK_ASSIGN_OR_RETURN(std::vector<EntryStore::ObservedRow> rows,
                           entries_->Observe(key.ns, query, KObs(key.ns), query_text));
  return Record(key, rows);
}

bool HoneypotGuard::ShouldObserve(std::string_view name_space) const {
  return Mode(name_space) != HoneypotMode::kOff && entries_->HasHoneypots(name_space);
}

absl::StatusOr<honeypot::MonitorVerdict> HoneypotGuard::Record(
    const SessionKey& key, std::span<const EntryStore::ObservedRow> rows) {
  honeypot::MonitorVerdict verdict;
  std::vector<honeypot::RetrievedRow> top;
  top.reserve(rows.size());
  for (const EntryStore::ObservedRow& r : rows) top.push_back({r.score, r.is_pot});
  honeypot::Observation obs;
  obs.top = top;
  observations_.fetch_add(1);
  verdict = monitor_->Observe(key, obs, env_->NowMicros());
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
