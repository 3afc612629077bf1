// The SMSR smoothing certificate (DESIGN 4.6; SMSR Component 2): an upper bound on the probability
// that t adversarial entries among the m over-fetched candidates win the majority of nruns runs,
// each of which answers from a uniform k-subset of the candidates.
//
//   p_hit(m, k, t)     = 1 - C(m-t, k) / C(m, k)              (a run's subset holds >= 1 of the t)
//   delta(m,k,t,nruns) = P[Binomial(nruns, p_hit) >= ceil(nruns / 2)]
//
// A tie (nruns even, exactly nruns/2 hit runs) counts as lost, hence ceil, not floor + 1.
// C(m-t,k)/C(m,k) is evaluated as the product prod_{i=0}^{t-1} (m-k-i)/(m-i) and the binomial tail
// in log space, so nothing overflows for m up to kMaxCandidates.
#pragma once

#include <absl/status/statusor.h>

#include <nlohmann/json.hpp>
#include <vector>

namespace bulwark {

struct CertificateParams {
  int m = 20;     // over-fetched candidates; k .. kMaxCandidates
  int k = 5;      // entries per run; 1 .. m
  int nruns = 5;  // runs; 1 .. kMaxRuns
};

inline constexpr int kMaxCandidates = 10'000;
inline constexpr int kMaxRuns = 10'000;

// InvalidArgument unless 1 <= k <= m <= kMaxCandidates and 1 <= nruns <= kMaxRuns.
[[nodiscard]] absl::Status ValidateCertificateParams(const CertificateParams& params);

// p_hit(m, k, t): the probability that a uniform k-subset of m items contains at least one of t
// marked items. InvalidArgument for bad params or t outside 0 .. m.
[[nodiscard]] absl::StatusOr<double> HitProbability(const CertificateParams& params, int t);

// delta(m, k, t, nruns) as above. InvalidArgument for bad params or t outside 0 .. m.
[[nodiscard]] absl::StatusOr<double> CertificateDelta(const CertificateParams& params, int t);

// P[Binomial(n, p) >= r] in log space; 1 for r <= 0, 0 for r > n. Precondition: 0 <= p <= 1.
double BinomialUpperTail(int n, double p, int r);

// The certificate a smoothed answer carries: its parameters and delta for t = 1 .. max_t (t > m
// is reported as 1: that many adversarial entries can fill the whole pool).
struct Certificate {
  CertificateParams params;
  std::vector<double> delta;  // delta[t-1] for t = 1 .. max_t
};
[[nodiscard]] absl::StatusOr<Certificate> MakeCertificate(const CertificateParams& params, int max_t = 3);

// {"m", "k", "nruns", "tie_counts_as_lost": true, "delta": {"1": ..., "2": ..., "3": ...}}
nlohmann::json ToJson(const Certificate& certificate);

}  // namespace bulwark
