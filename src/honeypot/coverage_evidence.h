// Coverage evidence for the honeypot monitor (issue #13 point 7, the extractor the pots were not
// fitted on): a per-round log-likelihood ratio from how many of the observation's memories are new
// to the principal, added to the pot estimator's LLR in the same Wald SPRT (as the intent grammar's
// and the relevance evidence's are; Observation::text_llr carries the sum).
//
// The principle: extraction is, by definition, maximising the distinct memories returned, while a
// user revisits (follow-ups on the last hit, the same few topics). It needs no wording and no pot:
// only the ids of the observation's memory rows.
//
//   n_t      = memory rows of round t's top k_obs not among the ids the principal's window holds
//   window   = the last `window` memory ids observed for this (namespace, principal), oldest
//              dropped first (a FIFO: "seen" means seen recently, so a long-lived principal that
//              has touched most of a namespace is not treated as having seen it forever)
//   l(n)     = clamp(log((1 - rho) p1(n) / p0(n) + rho), floor, cap)
//
// p0, p1: Jeffreys-smoothed pmfs of n under benign-simulator sessions and the fit's attack
// sessions (CountCalibration::Fit over novelty counts instead of pot counts), rho the unseen-family
// weight. The default floor 0 keeps the evidence one-sided (a round that revisits says nothing: an
// extractor can revisit too, and negative rounds would cancel the pots' and the grammar's evidence).
//
// Memory: a principal's window is `window` 8-byte ids plus its key; at most `max_keys` principals
// are tracked (the least recently seen one is dropped first), so the tracker holds at most
// max_keys * (8 * window + key + ~64) bytes: 4096 * (512 + ~100) = ~2.5 MB at the defaults.
// Novel() scans the window linearly (k_obs * window compares, 256 at the defaults).
#pragma once

#include <absl/base/thread_annotations.h>
#include <absl/container/flat_hash_map.h>
#include <absl/status/statusor.h>
#include <absl/synchronization/mutex.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "honeypot/llr_estimator.h"
#include "honeypot/session_monitor.h"

namespace bulwark::honeypot {

struct CoverageWindowOptions {
  size_t window = 64;      // memory ids remembered per principal (16 rounds at k_obs 4); 1 .. 4096
  size_t max_keys = 4096;  // principals tracked; 1 .. 2^20
};

// The seen-id windows of many principals. Thread-safe.
class CoverageWindows {
 public:
  // InvalidArgument for a window or max_keys out of range.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<CoverageWindows>> Create(
      const CoverageWindowOptions& options);

  // The number of `ids` (distinct among themselves) not in `key`'s window, then records them, oldest
  // out first. A new key starts empty (every id is new); when max_keys keys are tracked, the least
  // recently used one is dropped first.
  int Novel(std::string_view key, std::span<const int64_t> ids);
  size_t size() const;
  const CoverageWindowOptions& options() const { return options_; }

 private:
  explicit CoverageWindows(const CoverageWindowOptions& options) : options_(options) {}
  struct Window {
    std::vector<int64_t> ids;  // a ring of up to options_.window ids
    size_t next = 0;           // where the next id goes once the ring is full
    uint64_t last_used = 0;
  };
  void EvictOldest() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const CoverageWindowOptions options_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Window> windows_ ABSL_GUARDED_BY(mu_);
  uint64_t clock_ ABSL_GUARDED_BY(mu_) = 0;
};

// The novelty LLR table and the windows it is applied with.
struct CoverageCalibration {
  CountCalibration table;  // llr[n], n = 0 .. k_obs novel memory rows
  size_t benign_rounds = 0, attack_rounds = 0;
  std::vector<size_t> benign_histogram, attack_histogram;  // rounds per novel count 0 .. k_obs
  bool monotone = true;

  // CountCalibration::Fit over novelty counts (its monotone table unless `monotone` is false), clamped to
  // [floor, cap] (cap > 0, floor <= 0). Its errors, and InvalidArgument for a bad floor or cap.
  // With `monotone` (the default since 2026-11-25) the table never decreases in n, so with floor 0 a
  // round that revisits (n = 0) gets exactly 0; `monotone` false is the unconstrained table that
  // learned the reverse on the built-in extractors (doc/honeypots.md, "Coverage evidence").
  [[nodiscard]] static absl::StatusOr<CoverageCalibration> Fit(std::span<const int> benign_novel,
                                                               std::span<const int> attack_novel, int k_obs,
                                                               double cap = 1.1, double unseen_weight = 0.5,
                                                               double floor = 0, bool monotone = true);
  // l(n); a count beyond the table uses its last entry, a negative one 0.
  double Llr(int novel) const;
  // {"llr": [..], "benign_rounds", "attack_rounds", "benign_histogram", "attack_histogram"}.
  nlohmann::json ToJson() const;
};

// The novelty LLR constrained to be non-decreasing in n (a round with more never-seen memories is
// never less suspicious than one with fewer): CountCalibration::Fit's monotone table, unclamped;
// k_obs + 1 entries, llr[0] <= 0 always. Empty if Fit refuses the input (k_obs outside [1, 64], a
// side empty, a count outside [0, k_obs], unseen_weight outside [0, 1)).
std::vector<double> MonotoneNoveltyLlr(std::span<const int> benign_novel, std::span<const int> attack_novel,
                                       int k_obs, double unseen_weight);

// The novel counts of one session's rounds, from the memory ids each round observed (a fresh
// window per session, as a principal that only ever runs this session): what the calibration is
// fitted on.
std::vector<int> SessionNovelty(std::span<const std::vector<int64_t>> round_ids, size_t window);

// Calibration plus windows: what the read path holds.
class CoverageEvidence {
 public:
  CoverageEvidence(CoverageCalibration calibration, std::unique_ptr<CoverageWindows> windows)
      : calibration_(std::move(calibration)), windows_(std::move(windows)) {}
  // The round's LLR for `key` (a principal's key bytes) from the memory rows of `top` (rows with
  // is_pot or id < 0 are skipped), recording them in its window.
  double Observe(std::string_view key, std::span<const RetrievedRow> top);
  // The same for the principal-level key of `key` (AppendKeyBytes, KeyLevel::kPrincipal): the
  // session is ignored, so rotating it does not reset the window.
  double Observe(const SessionKey& key, std::span<const RetrievedRow> top);
  const CoverageCalibration& calibration() const { return calibration_; }
  const CoverageWindows& windows() const { return *windows_; }

 private:
  const CoverageCalibration calibration_;
  std::unique_ptr<CoverageWindows> windows_;
};

}  // namespace bulwark::honeypot
