// Per-key SPRTs over search observations (see session_monitor.h).
#include "honeypot/session_monitor.h"

#include <absl/status/status.h>
#include <absl/strings/str_cat.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

namespace bulwark::honeypot {
namespace {

constexpr std::string_view kSnapshotMagic = "BWMPMON1";
constexpr size_t kMaxKeyBytes = 1 << 20;
constexpr size_t kMaxTableKeys = size_t{1} << 26;

template <typename T>
void PutLe(std::string* out, T v) {
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));  // x86-64 and aarch64 are little-endian; a static_assert guards it
  out->append(b, sizeof(T));
}
static_assert(std::endian::native == std::endian::little, "the byte formats assume a little-endian host");

// Reads little-endian values from untrusted bytes; every read is bounds-checked.
class Reader {
 public:
  explicit Reader(std::string_view b) : b_(b) {}
  template <typename T>
  bool Get(T* v) {
    if (b_.size() < sizeof(T)) return false;
    std::memcpy(v, b_.data(), sizeof(T));
    b_.remove_prefix(sizeof(T));
    return true;
  }
  bool Bytes(size_t n, std::string_view* v) {
    if (b_.size() < n) return false;
    *v = b_.substr(0, n);
    b_.remove_prefix(n);
    return true;
  }
  bool empty() const { return b_.empty(); }

 private:
  std::string_view b_;
};

// True if `key` is well formed: a level byte, then 3 (session) or 2 (principal) u32-prefixed parts.
bool ValidKeyBytes(std::string_view key) {
  Reader r(key);
  uint8_t level;
  if (!r.Get(&level) || level > 1) return false;
  for (int part = 0; part < (level == 0 ? 3 : 2); ++part) {
    uint32_t n;
    std::string_view v;
    if (!r.Get(&n) || !r.Bytes(n, &v)) return false;
  }
  return r.empty();
}

}  // namespace

std::string_view ToString(MonitorScope scope) {
  switch (scope) {
    case MonitorScope::kSession:
      return "session";
    case MonitorScope::kPrincipal:
      return "principal";
    case MonitorScope::kBoth:
      return "both";
  }
  return "both";
}

absl::StatusOr<MonitorScope> ParseMonitorScope(std::string_view name) {
  for (MonitorScope s : {MonitorScope::kSession, MonitorScope::kPrincipal, MonitorScope::kBoth}) {
    if (name == ToString(s)) return s;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown monitor scope '", std::string(name), "' (session | principal | both)"));
}

void AppendKeyBytes(const SessionKey& key, KeyLevel level, std::string* out) {
  out->push_back(static_cast<char>(level));
  auto part = [out](std::string_view s) {
    PutLe<uint32_t>(out, static_cast<uint32_t>(s.size()));
    out->append(s);
  };
  part(key.ns);
  part(key.principal);
  if (level == KeyLevel::kSession) part(key.session);
}

std::string EncodeKeyState(const KeyState& s) {
  std::string out;
  out.reserve(kEncodedKeyStateBytes);
  out.push_back(1);  // version
  PutLe<double>(&out, s.sprt.statistic);
  PutLe<uint32_t>(&out, s.sprt.rounds);
  PutLe<uint32_t>(&out, s.sprt.rounds_since_reset);
  PutLe<uint32_t>(&out, s.sprt.h0_decisions);
  PutLe<uint32_t>(&out, s.sprt.decided_round);
  out.push_back(s.sprt.h1 ? 1 : 0);
  PutLe<uint64_t>(&out, s.pot_hits);
  PutLe<int64_t>(&out, s.last_seen_us);
  PutLe<int64_t>(&out, s.decided_at_us);
  return out;
}

absl::StatusOr<KeyState> DecodeKeyState(std::string_view bytes) {
  if (bytes.size() != kEncodedKeyStateBytes || bytes[0] != 1) {
    return absl::DataLossError("monitor key state: wrong size or version");
  }
  Reader r(bytes.substr(1));
  KeyState s;
  uint8_t h1 = 0;
  r.Get(&s.sprt.statistic);
  r.Get(&s.sprt.rounds);
  r.Get(&s.sprt.rounds_since_reset);
  r.Get(&s.sprt.h0_decisions);
  r.Get(&s.sprt.decided_round);
  r.Get(&h1);
  r.Get(&s.pot_hits);
  r.Get(&s.last_seen_us);
  r.Get(&s.decided_at_us);
  s.sprt.h1 = h1 == 1;
  const SprtState& p = s.sprt;
  const bool ok = std::isfinite(p.statistic) && h1 <= 1 && p.rounds_since_reset <= p.rounds &&
                  p.h0_decisions <= p.rounds && p.decided_round <= p.rounds &&
                  (p.h1 == (p.decided_round > 0)) && (p.h1 || s.decided_at_us == 0);
  if (!ok) return absl::DataLossError("monitor key state: a field is out of range");
  return s;
}

absl::StatusOr<std::unique_ptr<SessionMonitor>> SessionMonitor::Create(const MonitorOptions& options) {
  absl::StatusOr<Sprt> sprt = Sprt::Create(options.sprt);
  if (!sprt.ok()) return sprt.status();
  if (absl::Status s = ValidateLlrOptions(options.llr); !s.ok()) return s;
  if (options.max_keys < 1 || options.max_keys > kMaxTableKeys) {
    return absl::InvalidArgumentError("monitor: max_keys must be in [1, 2^26]");
  }
  if (options.idle_ttl_us <= 0) return absl::InvalidArgumentError("monitor: idle_ttl_us must be > 0");
  return std::unique_ptr<SessionMonitor>(new SessionMonitor(options, *sprt));
}

bool SessionMonitor::Runs(KeyLevel level, const SessionKey& key) const {
  if (level == KeyLevel::kSession) return options_.scope != MonitorScope::kPrincipal && !key.session.empty();
  return options_.scope != MonitorScope::kSession || key.session.empty();
}

bool SessionMonitor::MakeRoom(int64_t now_us) {
  for (auto it = states_.begin(); it != states_.end();) {
    const KeyState& s = it->second;
    if (!s.sprt.h1 && now_us - s.last_seen_us > options_.idle_ttl_us) {
      states_.erase(it++);
    } else {
      ++it;
    }
  }
  if (states_.size() < options_.max_keys) return true;
  // Evict the least recently seen sixteenth of the unblocked keys (at least one), so that a full
  // table pays this O(n) scan once per n/16 insertions.
  std::vector<std::pair<int64_t, const std::string*>> candidates;
  for (const auto& [k, s] : states_) {
    if (!s.sprt.h1) candidates.emplace_back(s.last_seen_us, &k);
  }
  if (candidates.empty()) return false;
  const size_t evict = std::max<size_t>(1, candidates.size() / 16);
  std::nth_element(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(evict - 1),
                   candidates.end());
  std::vector<std::string> doomed;
  for (size_t i = 0; i < evict; ++i) doomed.push_back(*candidates[i].second);
  for (const std::string& k : doomed) states_.erase(k);
  return true;
}

KeyState* SessionMonitor::FindOrInsert(const std::string& key, int64_t now_us) {
  auto it = states_.find(key);
  if (it != states_.end()) return &it->second;
  if (states_.size() >= options_.max_keys && !MakeRoom(now_us)) return nullptr;
  return &states_.emplace(key, KeyState{}).first->second;
}

bool SessionMonitor::UpdateLevel(const Sprt& sprt, KeyLevel level, const SessionKey& key, double llr,
                                 int pots, int64_t now_us, SprtDecision* decision, double* statistic) {
  thread_local std::string buffer;
  buffer.clear();
  AppendKeyBytes(key, level, &buffer);
  KeyState* s = FindOrInsert(buffer, now_us);
  if (s == nullptr) return false;
  s->last_seen_us = now_us;
  s->pot_hits += static_cast<uint64_t>(pots);
  *decision = sprt.Update(s->sprt, llr);
  if (*decision == SprtDecision::kH1 && s->decided_at_us == 0) s->decided_at_us = now_us;
  *statistic = s->sprt.statistic;
  return true;
}

MonitorVerdict SessionMonitor::Observe(const SessionKey& key, const Observation& obs, int64_t now_us) {
  return Observe(key, obs, now_us, sprt_, options_.llr);
}

MonitorVerdict SessionMonitor::Observe(const SessionKey& key, const Observation& obs, int64_t now_us,
                                       const Sprt& sprt, const LlrOptions& llr) {
  MonitorVerdict v;
  v.llr = ObservationLlr(obs, llr);
  v.text_llr = obs.text_llr;
  v.pots = obs.pot_count();
  absl::MutexLock lock(&mu_);
  if (Runs(KeyLevel::kSession, key)) {
    v.tracked &=
        UpdateLevel(sprt, KeyLevel::kSession, key, v.llr, v.pots, now_us, &v.session, &v.session_statistic);
  }
  if (Runs(KeyLevel::kPrincipal, key)) {
    v.tracked &= UpdateLevel(sprt, KeyLevel::kPrincipal, key, v.llr, v.pots, now_us, &v.principal,
                             &v.principal_statistic);
  }
  v.blocked = v.session == SprtDecision::kH1 || v.principal == SprtDecision::kH1;
  return v;
}

bool SessionMonitor::IsBlocked(const SessionKey& key) const {
  std::string buffer;
  absl::MutexLock lock(&mu_);
  for (KeyLevel level : {KeyLevel::kSession, KeyLevel::kPrincipal}) {
    if (!Runs(level, key)) continue;
    buffer.clear();
    AppendKeyBytes(key, level, &buffer);
    auto it = states_.find(buffer);
    if (it != states_.end() && it->second.sprt.h1) return true;
  }
  return false;
}

std::optional<KeyState> SessionMonitor::Get(const SessionKey& key, KeyLevel level) const {
  if (level == KeyLevel::kSession && key.session.empty()) return std::nullopt;
  std::string buffer;
  AppendKeyBytes(key, level, &buffer);
  absl::MutexLock lock(&mu_);
  auto it = states_.find(buffer);
  if (it == states_.end()) return std::nullopt;
  return it->second;
}

absl::Status SessionMonitor::Unblock(const SessionKey& key, KeyLevel level) {
  std::string buffer;
  AppendKeyBytes(key, level, &buffer);
  absl::MutexLock lock(&mu_);
  auto it = states_.find(buffer);
  if (it == states_.end() || (level == KeyLevel::kSession && key.session.empty())) {
    return absl::NotFoundError("monitor: no such key");
  }
  SprtState& s = it->second.sprt;
  s.h1 = false;
  s.decided_round = 0;
  s.statistic = 0;
  s.rounds_since_reset = 0;
  it->second.decided_at_us = 0;
  return absl::OkStatus();
}

size_t SessionMonitor::size() const {
  absl::MutexLock lock(&mu_);
  return states_.size();
}

std::string SessionMonitor::Snapshot() const {
  absl::MutexLock lock(&mu_);
  std::vector<const std::pair<const std::string, KeyState>*> entries;
  for (const auto& e : states_) entries.push_back(&e);
  std::sort(entries.begin(), entries.end(), [](auto* a, auto* b) { return a->first < b->first; });
  std::string out(kSnapshotMagic);
  PutLe<uint64_t>(&out, entries.size());
  for (const auto* e : entries) {
    PutLe<uint32_t>(&out, static_cast<uint32_t>(e->first.size()));
    out += e->first;
    out += EncodeKeyState(e->second);
  }
  return out;
}

absl::Status SessionMonitor::Restore(std::string_view bytes) {
  Reader r(bytes);
  std::string_view magic;
  uint64_t count = 0;
  if (!r.Bytes(kSnapshotMagic.size(), &magic) || magic != kSnapshotMagic || !r.Get(&count)) {
    return absl::DataLossError("monitor snapshot: bad header");
  }
  if (count > options_.max_keys) {
    return absl::ResourceExhaustedError(absl::StrCat("monitor snapshot: ", count, " keys > max_keys"));
  }
  // Each record takes at least 4 + 9 + 50 bytes: a count larger than the bytes allow is corrupt.
  if (count > bytes.size() / (4 + 9 + kEncodedKeyStateBytes))
    return absl::DataLossError("monitor snapshot: truncated");
  absl::flat_hash_map<std::string, KeyState> restored;
  restored.reserve(static_cast<size_t>(count));
  for (uint64_t i = 0; i < count; ++i) {
    uint32_t key_len = 0;
    std::string_view key, state;
    if (!r.Get(&key_len) || key_len > kMaxKeyBytes || !r.Bytes(key_len, &key) || !ValidKeyBytes(key) ||
        !r.Bytes(kEncodedKeyStateBytes, &state)) {
      return absl::DataLossError(absl::StrCat("monitor snapshot: record ", i, " is malformed"));
    }
    absl::StatusOr<KeyState> s = DecodeKeyState(state);
    if (!s.ok())
      return absl::DataLossError(absl::StrCat("monitor snapshot: record ", i, ": ", s.status().message()));
    if (!restored.emplace(std::string(key), *s).second) {
      return absl::DataLossError(absl::StrCat("monitor snapshot: record ", i, " repeats a key"));
    }
  }
  if (!r.empty()) return absl::DataLossError("monitor snapshot: trailing bytes");
  absl::MutexLock lock(&mu_);
  states_ = std::move(restored);
  return absl::OkStatus();
}

}  // namespace bulwark::honeypot
