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
// off. Each namespace has a GuardSetting (retrieval/honeypot_settings.h): its mode — off (no
// observation), monitor (default: observe and record decisions, refuse nothing), block (refuse
// blocked keys) —, k_obs, estimator, SPRT and whether the extraction-intent table its fit stored
// (retrieval/honeypot_intent_table.h) adds the query text's evidence to every round's LLR.
// Settings, intent tables and blocks are read from storage at Create
// and again every `settings_refresh_ms`, so `bulwark honeypots mode` and `bulwark sessions unblock`
// run by another process reach a running server within that interval. Thread-safe.
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>
#include <absl/status/statusor.h>
#include <absl/synchronization/mutex.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bulwark/env.h"
#include "honeypot/coverage_evidence.h"
#include "honeypot/intent_evidence.h"
#include "honeypot/relevance_evidence.h"
#include "honeypot/session_monitor.h"
#include "retrieval/honeypot_intent_table.h"
#include "retrieval/honeypot_settings.h"
#include "storage/honeypot_repository.h"
#include "store/entry_store.h"

namespace bulwark {

struct HoneypotGuardOptions {
  // The defaults of a namespace without a stored setting: monitor.llr.kind (count or similarity),
  // monitor.sprt, default_mode and k_obs (research/mempot.md 5: the observation is the top 4).
  honeypot::MonitorOptions monitor;
  HoneypotMode default_mode = HoneypotMode::kMonitor;
  int k_obs = 4;  // 1 .. 64
  // How often stored settings and blocks are read again (the first search after the interval
  // reads them; < 0: only at Create). A repository is needed for blocks and legacy settings.
  int settings_refresh_ms = 1000;
  // Block mode: the search whose observation decides H1 is refused too (CheckDecided), so the
  // deciding query's hits never reach the extractor; false: it is answered and only later searches
  // are refused (the behaviour before 2026-11-24 evening).
  bool refuse_deciding_search = true;
  // Query-text evidence added to every observed search's LLR (honeypot/intent_evidence.h) of a
  // namespace whose setting has `intent` and which has no stored table of its own (the stored
  // table wins); null: none (the pots' evidence alone).
  std::shared_ptr<const honeypot::IntentEvidence> intent;
  // Relevance evidence added to every observed search's LLR (honeypot/relevance_evidence.h): the
  // observation's best memory cosine below the calibrated threshold. Unset: none. Evaluation
  // only for now (no stored table: `honeypots fit` does not calibrate one).
  std::optional<honeypot::RelevanceCalibration> relevance;
  // Coverage evidence added to every observed search's LLR (honeypot/coverage_evidence.h): the
  // observation's memory rows new to the (namespace, principal). Null: none. Evaluation only for
  // now (`honeypots fit` does not calibrate one).
  std::shared_ptr<honeypot::CoverageEvidence> coverage;
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
  // `entries` is required; `repository` may be null (blocks are then not persisted and the
  // count_calibrated estimator, whose table is the newest fit run's, is unavailable). Loads every
  // persisted block into the monitor and every namespace's stored setting and intent table.
  // InvalidArgument for bad options; DataLoss for a damaged stored block, setting or intent table;
  // the repository's errors.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<HoneypotGuard>> Create(
      const HoneypotGuardOptions& options, EntryStore* entries, HoneypotRepository* repository, Env* env);
  ~HoneypotGuard();

  // Overrides the namespace's mode in this process only (over any stored setting; for tests and
  // the evaluation).
  void SetMode(std::string_view name_space, HoneypotMode mode);
  HoneypotMode Mode(std::string_view name_space) const;
  int KObs(std::string_view name_space) const;
  // The namespace's setting in force (stored, legacy or the defaults; SetMode not included).
  GuardSetting Setting(std::string_view name_space) const;
  // The intent evidence the namespace's searches get: its stored table, else the options' (null
  // when its setting's `intent` is off or there is neither).
  std::shared_ptr<const honeypot::IntentEvidence> Intent(std::string_view name_space) const;
  // Signs and stores the namespace's setting and applies it at once in this process.
  // InvalidArgument for an invalid setting or namespace; FailedPrecondition for count_calibrated
  // when the namespace has no current fit run with a calibrated table of k_obs + 1 entries; the
  // backend's errors.
  [[nodiscard]] absl::Status PutSetting(std::string_view name_space, const GuardSetting& setting);
  // Reads the stored settings, intent tables and blocks again now (what the refresh interval
  // does): a block deleted from storage since the last read is cleared in the monitor. A setting or
  // table that no longer verifies keeps the namespace's previous one (logged). The storage's errors.
  [[nodiscard]] absl::Status Refresh();

  // Before retrieval: PermissionDenied("session_blocked") if the namespace is in block mode and a
  // level of `key` is blocked; OK otherwise. The refusal carries payload kRefusalPayloadUrl: a
  // JSON object with the namespace and the blocked level's state (level, rounds, decided_round,
  // pot_hits, statistic), for the audit record (never for the caller).
  static constexpr char kRefusalPayloadUrl[] = "bulwark.dev/honeypot-refusal";
  [[nodiscard]] absl::Status CheckAllowed(const honeypot::SessionKey& key) const;
  // After the observation of a search, before its hits are returned: CheckAllowed's refusal when
  // `verdict` is blocked and the options refuse the deciding search; OK otherwise.
  [[nodiscard]] absl::Status CheckDecided(const honeypot::SessionKey& key,
                                          const honeypot::MonitorVerdict& verdict) const;
  // After retrieval (not in off mode): feeds the observation of `query` to the monitor and
  // persists a new H1 decision. The repository's error if persisting fails (the decision stands
  // in memory); the store's errors for the observation.
  // `query_text` non-empty: the observation is over the hybrid ranking (namespaces whose retrieval
  // is hybrid; EntryStore::Observe). `request_text`: the query as the caller sent it, for the
  // options' intent evidence (ignored without one).
  [[nodiscard]] absl::StatusOr<honeypot::MonitorVerdict> Observe(const honeypot::SessionKey& key,
                                                                 const std::vector<float>& query,
                                                                 std::string_view query_text = {},
                                                                 std::string_view request_text = {});
  // True if searches of the namespace are observed: its mode is not off and it has pots. The
  // read path then asks the search itself for the observation (SearchOptions::observation).
  bool ShouldObserve(std::string_view name_space) const;
  // Feeds an observation the search computed (SearchObservation::rows) to the monitor with the
  // namespace's estimator and SPRT, as Observe does after its own observation. Same errors as
  // Observe's persisting.
  // `request_text` as for Observe.
  [[nodiscard]] absl::StatusOr<honeypot::MonitorVerdict> Record(const honeypot::SessionKey& key,
                                                                std::span<const EntryStore::ObservedRow> rows,
                                                                std::string_view request_text = {});

  // The persisted blocks (all namespaces, or one), by key.
  [[nodiscard]] absl::StatusOr<std::vector<BlockedKey>> Blocked(std::string_view name_space = {}) const;
  // Clears the block of the key (`session` empty: the principal level) in the monitor and the
  // repository. NotFound if it is not blocked.
  [[nodiscard]] absl::Status Unblock(std::string_view name_space, std::string_view principal,
                                     std::string_view session);

  // What one search needs from the guard, from one settings lookup (Begin): whether it is observed,
  // at which depth, whether its rows' cosines are read, and the namespace's estimator and SPRT for
  // Record.
  class SearchPlan;
  // Before retrieval: CheckAllowed's refusal; else the search's plan (Mode, ShouldObserve and KObs
  // as they would answer now).
  [[nodiscard]] absl::StatusOr<SearchPlan> Begin(const honeypot::SessionKey& key) const;
  // Record with the plan's estimator and SPRT (no second settings lookup). Same errors.
  [[nodiscard]] absl::StatusOr<honeypot::MonitorVerdict> Record(const SearchPlan& plan,
                                                                const honeypot::SessionKey& key,
                                                                std::span<const EntryStore::ObservedRow> rows,
                                                                std::string_view request_text = {});

  int64_t observations() const { return observations_.load(); }
  int64_t blocks() const { return blocks_.load(); }
  int64_t refusals() const { return refusals_.load(); }

 private:
  // What one namespace's searches are observed and tested with.
  struct Params {
    GuardSetting setting;
    honeypot::Sprt sprt;
    honeypot::LlrOptions llr;
    std::shared_ptr<const honeypot::IntentEvidence> intent;  // in use: null when off or none
    std::shared_ptr<const honeypot::IntentEvidence> table;   // the namespace's stored table, if any
  };
  using ParamsMap = absl::flat_hash_map<std::string, std::shared_ptr<const Params>>;
  using TableMap = absl::flat_hash_map<std::string, std::shared_ptr<const honeypot::IntentEvidence>>;

  HoneypotGuard(const HoneypotGuardOptions& options, std::unique_ptr<honeypot::SessionMonitor> monitor,
                EntryStore* entries, HoneypotRepository* repository, Env* env,
                std::shared_ptr<const Params> defaults);
  absl::Status LoadBlocks();
  // The params of `setting` for `name_space` (its calibrated table from the newest current run;
  // `table`: its stored intent table, null if none).
  absl::StatusOr<std::shared_ptr<const Params>> MakeParams(
      std::string_view name_space, const GuardSetting& setting,
      std::shared_ptr<const honeypot::IntentEvidence> table) const;
  // Every stored intent table. `strict`: the first bad one is the error; otherwise a bad one keeps
  // `previous`' table for its namespace.
  absl::Status ReadTables(bool strict, const ParamsMap& previous, TableMap* out) const;
  // Every stored setting (legacy rows, then signed ones over them). `strict`: the first bad one is
  // the error; otherwise a bad one keeps `previous`' entry for its namespace.
  absl::Status ReadSettings(bool strict, const ParamsMap& previous, ParamsMap* out) const;
  absl::Status RefreshBlocks();
  void MaybeRefresh() const;
  std::shared_ptr<const Params> ParamsOf(std::string_view name_space) const;
  // ParamsOf and Mode under one lock.
  std::pair<std::shared_ptr<const Params>, HoneypotMode> ParamsAndMode(std::string_view name_space) const;
  absl::Status PersistBlock(const honeypot::SessionKey& key, honeypot::KeyLevel level);

  const HoneypotGuardOptions options_;
  std::unique_ptr<honeypot::SessionMonitor> monitor_;
  EntryStore* entries_;
  HoneypotRepository* repository_;
  Env* env_;
  std::unique_ptr<GuardSettingStore> settings_;
  std::unique_ptr<IntentTableStore> intent_tables_;  // null without a repository
  const std::shared_ptr<const Params> defaults_;
  mutable absl::Mutex mu_;
  ParamsMap params_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, HoneypotMode> mode_overrides_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<std::string> stored_blocks_ ABSL_GUARDED_BY(mu_);  // keys read at the last refresh
  mutable std::atomic<int64_t> next_refresh_us_{0};
  mutable std::atomic<bool> refreshing_{false};
  mutable std::atomic<int64_t> observations_{0}, blocks_{0}, refusals_{0};

 public:
  class SearchPlan {
   public:
    bool observe() const { return observe_; }
    int k_obs() const { return params_ ? params_->setting.k_obs : 0; }
    // Whether Record reads the observed rows' cosines (SearchObservation::cosines): false for the
    // count estimators without relevance evidence, which read only which rows are pots.
    bool cosines() const { return cosines_; }

   private:
    friend class HoneypotGuard;
    std::shared_ptr<const Params> params_;
    bool observe_ = false;
    bool cosines_ = true;
  };
};

}  // namespace bulwark
