// The cap of the extraction-intent evidence (intent_evidence.h), derived from the SPRT's upper
// boundary and from how much a pot-less round can cost in the count table (llr_estimator.h).
//
// The intent table's design (intent_evidence.h) is "one explicit request alone never blocks; two
// do, and a pot hit with one does". Its cap was log A / 2 (+ a little: 1.1 at alpha = beta = 0.1),
// which makes two requests block only when the rounds carrying them cost nothing else. But every
// round also carries the count table's entry for its pot count, and a family the pots were not
// fitted on draws none: the n = 0 entry is negative, bounded below by
//   P = min(-log(rho), count_cap)      (rho = the table's unseen-family weight, CountCalibration::Fit;
//                                       count_cap = the table's clamp; each bound only where set)
// So two requests in pot-less rounds sum to at least 2 (cap - P), and the design needs
//   cap = log A / 2 + P + 1e-6       (2 (cap - P) >= log A: two requests block)
// while one request alone in a pot-less round stays at cap - P' < log A for the table's actual
// n = 0 entry -P' (-P <= -P' < 0) as long as log A / 2 + P < log A, i.e. P < log A / 2 (checked).
// At alpha = beta = 0.1, rho = 1/2, count cap 1.1: P = log 2, cap = 1.0986 + 0.6931 = 1.7918.
// (Before 2026-11-24 late the cap stayed 1.1 after the unseen weight was added: two requests in
// pot-less rounds then summed to 0.88 and an unseen family needed five.)
#pragma once

#include <absl/status/statusor.h>

namespace bulwark::honeypot {

// The cap above for an SPRT upper boundary `log_a` (> 0), the count table's unseen weight `rho`
// (CountCalibration::Fit's unseen_weight, [0, 1)) and its clamp `count_cap` (<= 0: none).
// InvalidArgument for a bad argument, or when no bound on a pot-less round exists (rho = 0 and no
// clamp) or the bound is not below log A / 2 (one request in a pot-less round could then block).
[[nodiscard]] absl::StatusOr<double> TwoRequestIntentCap(double log_a, double rho, double count_cap);

}  // namespace bulwark::honeypot
