// HoneypotGuard: the MemPot side of the read path (DESIGN 3, 4.7; issue #13 point 3):
//
//   before retrieval: a (namespace, principal[, session]) the monitor has blocked is refused
//                     (block mode) with PermissionDenied "session_blocked", before any index work
//   after retrieval:  the observation (EntryStore::Observe: top k_obs of the unfiltered ranking over
//                     memories and pots, from the search's own index scan and the small pot
//                     index: no second scan, no row read) -> SessionMonitor (one SPRT per session and one
//                     per principal); a new H1 decision is persisted through HoneypotRepository,
//                     so blocks survive a restart
//
// The observation never reaches the caller; search results are the same with the guard on or
// off. Modes per namespace: off (no observation), monitor (default: observe and record decisions,
// refuse nothing), block (refuse blocked keys). Thread-safe.
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/status/statusor.h>
#include <absl/synchronization/mutex.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bulwark/env.h"
#include "honeypot/session_monitor.h"
#include "storage/honeypot_repository.h"
#include "store/entry_store.h"

namespace bulwark {

enum class HoneypotMode { kOff, kMonitor, kBlock };
std::string_view ToString(HoneypotMode mode);
// "off" | "monitor" | "block"; InvalidArgument otherwise.
[[nodiscard]] absl::StatusOr<HoneypotMode> ParseHoneypotMode(std::string_view name);

struct HoneypotGuardOptions {
  honeypot::MonitorOptions monitor;
  HoneypotMode default_mode = HoneypotMode::kMonitor;
  int k_obs = 4;  // research/mempot.md 5: the observation is the top 4; 1 .. 64
};

// One blocked key as the admin routes list it.
struct BlockedKey {
  std::string name_space;
  std::string principal;
  std::string session;  // empty for a principal-level block
  honeypot::KeyState state;
};

class HoneypotGuard {
 public:
  // `entries` is required; `repository` may be null (blocks are then not persisted). Loads every
  // persisted block into the monitor and every namespace's stored setting. InvalidArgument for bad options;
  // DataLoss for a damaged stored block; the repository's errors.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<HoneypotGuard>> Create(
      const HoneypotGuardOptions& options, EntryStore* entries, HoneypotRepository* repository, Env* env);

  // The namespace's mode and k_obs for this process (stored settings are loaded at Create; a
  // namespace without one has the options' defaults). SetMode changes only this process.
  void SetMode(std::string_view name_space, HoneypotMode mode);
  HoneypotMode Mode(std::string_view name_space) const;
  int KObs(std::string_view name_space) const;

  // Before retrieval: PermissionDenied("session_blocked") if the namespace is in block mode and a
  // level of `key` is blocked; OK otherwise.
  [[nodiscard]] absl::Status CheckAllowed(const honeypot::SessionKey& key) const;
  // After retrieval (not in off mode): feeds the observation of `query` to the monitor and
  // persists a new H1 decision. The repository's error if persisting fails (the decision stands
  // in memory); the store's errors for the observation.
  // `query_text` non-empty: the observation is over the hybrid ranking (namespaces whose retrieval
  // is hybrid; EntryStore::Observe).
  [[nodiscard]] absl::StatusOr<honeypot::MonitorVerdict> Observe(const honeypot::SessionKey& key,
                                                                 const std::vector<float>& query,
                                                                 std::string_view query_text = {});
  // True if searches of the namespace are observed: its mode is not off and it has pots. The
  // read path then asks the search itself for the observation (SearchOptions::observation).
  bool ShouldObserve(std::string_view name_space) const;
  // Feeds an observation the search computed (SearchObservation::rows) to the monitor, as Observe
  // does after its own observation. Same errors as Observe's persisting.
  [[nodiscard]] absl::StatusOr<honeypot::MonitorVerdict> Record(
      const honeypot::SessionKey& key, std::span<const EntryStore::ObservedRow> rows);

  // The persisted blocks (all namespaces, or one), by key.
  [[nodiscard]] absl::StatusOr<std::vector<BlockedKey>> Blocked(std::string_view name_space = {}) const;
  // Clears the block of the key (`session` empty: the principal level) in the monitor and the
  // repository. NotFound if it is not blocked.
  [[nodiscard]] absl::Status Unblock(std::string_view name_space, std::string_view principal,
                                     std::string_view session);

  int64_t observations() const { return observations_.load(); }
  int64_t blocks() const { return blocks_.load(); }
  int64_t refusals() const { return refusals_.load(); }

 private:
  HoneypotGuard(const HoneypotGuardOptions& options, std::unique_ptr<honeypot::SessionMonitor> monitor,
                EntryStore* entries, HoneypotRepository* repository, Env* env);
  absl::Status LoadBlocks();
  absl::Status LoadSettings();
  absl::Status PersistBlock(const honeypot::SessionKey& key, honeypot::KeyLevel level);

  const HoneypotGuardOptions options_;
  std::unique_ptr<honeypot::SessionMonitor> monitor_;
  EntryStore* entries_;
  HoneypotRepository* repository_;
  Env* env_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, HoneypotMode> modes_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, int> k_obs_ ABSL_GUARDED_BY(mu_);
  mutable std::atomic<int64_t> observations_{0}, blocks_{0}, refusals_{0};
};

}  // namespace bulwark
