// Wald's sequential probability ratio test as MemPot uses it (Sec. 3, Eq. 2-7; Sec. 4.3): the
// statistic S_n = sum_{t <= n} l_t (Eq. 3) accumulates per-round LLRs l_t, and the test decides
//   H1 (attacker) once S_n >= log A,  A = (1 - beta) / alpha                              Eq. 5
//   H0 (benign)   once S_n <= log B,  B = beta / (1 - alpha)
// With alpha = beta = 0.1, log A = +2.19722 and log B = -2.19722. Comparisons allow 1e-9 of
// rounding, because at k = 4, eps_cnt = 0.5 the all-pot increment of Eq. 17 equals log A exactly.
// An H1 decision is final (the caller blocks; only an operator clears it). The paper says nothing
// about H0; the policy is a setting (research/mempot.md 2.5):
//   restart (default)  record the H0 decision and reset S to 0 (the repeated SPRT)
//   floor              S = max(log B, S + l): never decides H0, cannot bank credit below log B
//   cusum              S = max(0, S + l): Page's CUSUM, optimal against a benign warm-up
//   none               unbounded below: paper-literal; a long benign prefix hides an attack
// The statistic is a double; a per-key state is 32 bytes.
#pragma once

#include <absl/status/statusor.h>

#include <cstdint>
#include <string_view>

namespace bulwark::honeypot {

enum class LowerBoundary { kRestart, kFloor, kCusum, kNone };
std::string_view ToString(LowerBoundary policy);
// "restart" | "floor" | "cusum" | "none"; InvalidArgument otherwise.
[[nodiscard]] absl::StatusOr<LowerBoundary> ParseLowerBoundary(std::string_view name);

struct SprtOptions {
  double alpha = 0.1;  // type-I error budget P0(D = H1), in (0, 1)
  double beta = 0.1;   // type-II error budget P1(D = H0), in (0, 1); alpha + beta < 1
  LowerBoundary lower_boundary = LowerBoundary::kRestart;
};

enum class SprtDecision : uint8_t { kContinue = 0, kH0 = 1, kH1 = 2 };

struct SprtState {
  double statistic = 0;             // S since the last reset
  uint32_t rounds = 0;              // observations in total
  uint32_t rounds_since_reset = 0;  // observations since the last H0 restart
  uint32_t h0_decisions = 0;        // H0 decisions so far (restart policy)
  uint32_t decided_round = 0;       // the round of the H1 decision; 0 while undecided
  bool h1 = false;                  // H1 decided: final
  bool operator==(const SprtState&) const = default;
};

class Sprt {
 public:
  static constexpr double kTolerance = 1e-9;

  // InvalidArgument unless 0 < alpha, beta < 1 and alpha + beta < 1 (so log B < 0 < log A).
  [[nodiscard]] static absl::StatusOr<Sprt> Create(const SprtOptions& options);

  double upper() const { return upper_; }  // log A = log((1 - beta) / alpha)
  double lower() const { return lower_; }  // log B = log(beta / (1 - alpha))
  const SprtOptions& options() const { return options_; }

  // Adds one round's LLR to `state` and applies the boundaries and the H0 policy. Returns kH1
  // when S reaches log A (and for every later round: the decision is final and S stays frozen),
  // kH0 when S reaches log B under `restart`, kContinue otherwise. A non-finite LLR counts as the
  // round but leaves S unchanged.
  SprtDecision Update(SprtState& state, double llr) const;

 private:
  explicit Sprt(const SprtOptions& options);
  SprtOptions options_;
  double upper_ = 0;
  double lower_ = 0;
};

}  // namespace bulwark::honeypot
