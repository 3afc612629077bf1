// SessionMonitor: MemPot's sequential detector over the searches of each client (DESIGN 4.7,
// research/mempot.md 5.3). One SPRT per (namespace, principal, session) and one per (namespace,
// principal): the session id is chosen by the client, so rotating it per query must not reset the
// principal-level test. A key whose SPRT decides H1 is blocked until an operator unblocks it.
//
// Observe() costs one LLR (O(k_obs)) and two hash lookups under a mutex: well under 2 us (see
// bench/honeypot_bench.cc). The state per key is 56 bytes plus its key. Memory is bounded by
// max_keys: inserting a key into a full table first evicts keys idle for more than idle_ttl_us,
// then the least recently seen one; blocked keys are never evicted (when every key is blocked, the
// new key is not tracked and the verdict says so).
//
// Snapshot()/Restore() move the whole table as bytes (format in doc/honeypots.md), and
// EncodeKeyState/DecodeKeyState one key's state, so the store can persist blocks. Restored bytes
// are untrusted: every size is bounded before allocation and every field is range-checked.
#pragma once

#include <absl/base/thread_annotations.h>
#include <absl/container/flat_hash_map.h>
#include <absl/status/statusor.h>
#include <absl/synchronization/mutex.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "honeypot/llr_estimator.h"
#include "honeypot/sprt.h"

namespace bulwark::honeypot {

enum class MonitorScope { kSession, kPrincipal, kBoth };
std::string_view ToString(MonitorScope scope);
[[nodiscard]] absl::StatusOr<MonitorScope> ParseMonitorScope(
    std::string_view name);  // session|principal|both

struct MonitorOptions {
  SprtOptions sprt;                                    // alpha = beta = 0.1, restart
  LlrOptions llr;                                      // count (Eq. 17), eps 0.5
  MonitorScope scope = MonitorScope::kBoth;            // which SPRTs run; block when any decides H1
  size_t max_keys = 1 << 20;                           // tracked keys (both levels), 1 .. 2^26
  int64_t idle_ttl_us = int64_t{24} * 3600 * 1000000;  // evictable after this idle time, > 0
};

// Who searched. An empty session means "no session header": only the principal-level SPRT runs.
struct SessionKey {
  std::string_view ns;
  std::string_view principal;
  std::string_view session;
};

enum class KeyLevel : uint8_t { kSession = 0, kPrincipal = 1 };

struct KeyState {
  SprtState sprt;
  uint64_t pot_hits = 0;  // pots observed in total
  int64_t last_seen_us = 0;
  int64_t decided_at_us = 0;  // time of the H1 decision; 0 while undecided
  bool operator==(const KeyState&) const = default;
};

struct MonitorVerdict {
  bool blocked = false;                              // some level has decided H1 (now or before)
  bool tracked = true;                               // false when a full table of blocked keys left no room
  double llr = 0;                                    // this round's LLR (pots + text)
  double text_llr = 0;                               // of which the query text's (Observation)
  int pots = 0;                                      // pots in the observation
  SprtDecision session = SprtDecision::kContinue;    // this round's decisions (kContinue when a
  SprtDecision principal = SprtDecision::kContinue;  //   level does not run)
  double session_statistic = 0;
  double principal_statistic = 0;
};

class SessionMonitor {
 public:
  // InvalidArgument for invalid SPRT or LLR options, max_keys outside [1, 2^26], idle_ttl_us <= 0.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<SessionMonitor>> Create(const MonitorOptions& options);

  // Feeds one search's observation at time now_us to the key's SPRTs (Eq. 3, 5) and returns the
  // verdict. Observations of a blocked key still count rounds but do not move its statistic.
  // Thread-safe.
  MonitorVerdict Observe(const SessionKey& key, const Observation& obs, int64_t now_us);
  // The same with another estimator and SPRT than the options' (a namespace's own setting,
  // HoneypotGuard). Preconditions: ValidateLlrOptions(llr).ok(); `sprt` outlives the call. A key's
  // state is the same whatever the parameters: a changed setting continues from its statistic.
  MonitorVerdict Observe(const SessionKey& key, const Observation& obs, int64_t now_us, const Sprt& sprt,
                         const LlrOptions& llr);

  // True if a level that runs for `key` has decided H1 (check before retrieval). Thread-safe.
  bool IsBlocked(const SessionKey& key) const;

  // The state of one level of `key` (nullopt if untracked; kSession with an empty session is
  // always nullopt).
  std::optional<KeyState> Get(const SessionKey& key, KeyLevel level) const;

  // Clears the H1 decision and the statistic of one level of `key`. NotFound if it is not tracked.
  [[nodiscard]] absl::Status Unblock(const SessionKey& key, KeyLevel level);

  size_t size() const;
  const MonitorOptions& options() const { return options_; }
  const Sprt& sprt() const { return sprt_; }

  // The whole table as bytes, keys in sorted order (so equal tables give equal bytes).
  std::string Snapshot() const;
  // Replaces the table with a snapshot. DataLoss for bad magic, a truncated or oversized record,
  // an out-of-range field or a duplicate key; ResourceExhausted for more than max_keys keys. The
  // table is unchanged on error.
  [[nodiscard]] absl::Status Restore(std::string_view bytes);

 private:
  SessionMonitor(const MonitorOptions& options, Sprt sprt) : options_(options), sprt_(sprt) {}
  // The state for `key` at `level`, inserted if absent; null if there is no room.
  KeyState* FindOrInsert(const std::string& key, int64_t now_us) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool MakeRoom(int64_t now_us) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool UpdateLevel(const Sprt& sprt, KeyLevel level, const SessionKey& key, double llr, int pots,
                   int64_t now_us, SprtDecision* decision, double* statistic)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool Runs(KeyLevel level, const SessionKey& key) const;

  const MonitorOptions options_;
  const Sprt sprt_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, KeyState> states_ ABSL_GUARDED_BY(mu_);
};

// The table key of one level: a level byte, then the length-prefixed (u32 LE) namespace,
// principal and, for kSession, session. Length-prefixed so that no two keys collide.
void AppendKeyBytes(const SessionKey& key, KeyLevel level, std::string* out);

// One KeyState as kEncodedKeyStateBytes (50) bytes, version byte 1 first, and back. DataLoss for a wrong size
// or version or an out-of-range field (a decided state without its round, rounds_since_reset > rounds, a
// non-finite statistic, ...).
inline constexpr size_t kEncodedKeyStateBytes = 50;
std::string EncodeKeyState(const KeyState& state);
[[nodiscard]] absl::StatusOr<KeyState> DecodeKeyState(std::string_view bytes);

}  // namespace bulwark::honeypot
