// The SPRT boundaries and update (see sprt.h).
#include "honeypot/sprt.h"

#include <absl/status/status.h>
#include <absl/strings/str_cat.h>

#include <algorithm>
#include <cmath>

namespace bulwark::honeypot {

std::string_view ToString(LowerBoundary policy) {
  switch (policy) {
    case LowerBoundary::kRestart:
      return "restart";
    case LowerBoundary::kFloor:
      return "floor";
    case LowerBoundary::kCusum:
      return "cusum";
    case LowerBoundary::kNone:
      return "none";
  }
  return "restart";
}

absl::StatusOr<LowerBoundary> ParseLowerBoundary(std::string_view name) {
  for (LowerBoundary p :
       {LowerBoundary::kRestart, LowerBoundary::kFloor, LowerBoundary::kCusum, LowerBoundary::kNone}) {
    if (name == ToString(p)) return p;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown lower boundary '", std::string(name), "' (restart | floor | cusum | none)"));
}

absl::StatusOr<Sprt> Sprt::Create(const SprtOptions& options) {
  const double a = options.alpha, b = options.beta;
  if (!(a > 0 && a < 1) || !(b > 0 && b < 1) || !(a + b < 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("SPRT: need 0 < alpha, beta < 1 and alpha + beta < 1; got alpha ", a, ", beta ", b));
  }
  return Sprt(options);
}

Sprt::Sprt(const SprtOptions& options)
    : options_(options),
      upper_(std::log((1 - options.beta) / options.alpha)),
      lower_(std::log(options.beta / (1 - options.alpha))) {}

SprtDecision Sprt::Update(SprtState& state, double llr) const {
  ++state.rounds;
  if (state.h1) return SprtDecision::kH1;
  ++state.rounds_since_reset;
  if (std::isfinite(llr)) state.statistic += llr;
  switch (options_.lower_boundary) {
    case LowerBoundary::kFloor:
      state.statistic = std::max(state.statistic, lower_);
      break;
    case LowerBoundary::kCusum:
      state.statistic = std::max(state.statistic, 0.0);
      break;
    case LowerBoundary::kRestart:
    case LowerBoundary::kNone:
      break;
  }
  if (state.statistic >= upper_ - kTolerance) {
    state.h1 = true;
    state.decided_round = state.rounds;
    return SprtDecision::kH1;
  }
  if (options_.lower_boundary == LowerBoundary::kRestart && state.statistic <= lower_ + kTolerance) {
    ++state.h0_decisions;
    state.statistic = 0;
    state.rounds_since_reset = 0;
    return SprtDecision::kH0;
  }
  return SprtDecision::kContinue;
}

}  // namespace bulwark::honeypot
