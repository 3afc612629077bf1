// Exact, overflow-free evaluation of the SMSR certificate (see certificate.h).
#include "smoothing/certificate.h"

#include <absl/strings/str_cat.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "core/status_macros.h"

namespace bulwark {

absl::Status ValidateCertificateParams(const CertificateParams& p) {
  if (p.m < 1 || p.m > kMaxCandidates) {
    return absl::InvalidArgumentError(absl::StrCat("m must be between 1 and ", kMaxCandidates));
  }
  if (p.k < 1 || p.k > p.m) return absl::InvalidArgumentError("k must be between 1 and m");
  if (p.nruns < 1 || p.nruns > kMaxRuns) {
    return absl::InvalidArgumentError(absl::StrCat("nruns must be between 1 and ", kMaxRuns));
  }
  return absl::OkStatus();
}

absl::StatusOr<double> HitProbability(const CertificateParams& p, int t) {
  if (auto s = ValidateCertificateParams(p); !s.ok()) return s;
  if (t < 0 || t > p.m) return absl::InvalidArgumentError("t must be between 0 and m");
  // C(m-t,k)/C(m,k) = prod_{i=0}^{t-1} (m-k-i)/(m-i); a factor is 0 once m-k-i reaches 0 (more
  // marked items than unpicked ones: every subset holds one).
  double miss = 1.0;
  for (int i = 0; i < t && miss > 0; ++i) {
    miss *= static_cast<double>(std::max(0, p.m - p.k - i)) / static_cast<double>(p.m - i);
  }
  return 1.0 - miss;
}

namespace {

// sum_{j=lo}^{hi} C(n,j) p^j q^(n-j), in log space relative to the largest term, so no term
// overflows and a tiny sum does not underflow term by term.
double BinomialSum(int n, double p, int lo, int hi) {
  if (lo > hi) return 0.0;
  const double log_p = std::log(p), log_q = std::log1p(-p);
  const double log_n_fact = std::lgamma(n + 1.0);
  std::vector<double> logs;
  logs.reserve(hi - lo + 1);
  double max_log = -INFINITY;
  for (int j = lo; j <= hi; ++j) {
    const double l =
        log_n_fact - std::lgamma(j + 1.0) - std::lgamma(n - j + 1.0) + j * log_p + (n - j) * log_q;
    logs.push_back(l);
    max_log = std::max(max_log, l);
  }
  double sum = 0;
  for (double l : logs) sum += std::exp(l - max_log);
  return std::exp(max_log) * sum;
}

}  // namespace

double BinomialUpperTail(int n, double p, int r) {
  if (r <= 0) return 1.0;
  if (r > n) return 0.0;
  if (p <= 0) return 0.0;
  if (p >= 1) return 1.0;
  // Sum the smaller side and complement when the tail holds the bulk of the mass: then a tail
  // close to 1 is exact to rounding, not to the relative error of lgamma at large n.
  if (r > n * p) return std::min(1.0, BinomialSum(n, p, r, n));
  return std::max(0.0, 1.0 - BinomialSum(n, p, 0, r - 1));
}

absl::StatusOr<double> CertificateDelta(const CertificateParams& p, int t) {
  BULWARK_ASSIGN_OR_RETURN(auto p_hit, HitProbability(p, t));
  const int needed = (p.nruns + 1) / 2;  // ceil(nruns / 2): a tie counts as lost (DESIGN 4.6)
  return BinomialUpperTail(p.nruns, p_hit, needed);
}

absl::StatusOr<Certificate> MakeCertificate(const CertificateParams& params, int max_t) {
  if (auto s = ValidateCertificateParams(params); !s.ok()) return s;
  Certificate certificate;
  certificate.params = params;
  for (int t = 1; t <= max_t; ++t) {
    if (t > params.m) {
      certificate.delta.push_back(1.0);
      continue;
    }
    BULWARK_ASSIGN_OR_RETURN(auto delta, CertificateDelta(params, t));
    certificate.delta.push_back(delta);
  }
  return certificate;
}

nlohmann::json ToJson(const Certificate& c) {
  nlohmann::json delta = nlohmann::json::object();
  for (size_t t = 1; t <= c.delta.size(); ++t) delta[std::to_string(t)] = c.delta[t - 1];
  return {{"m", c.params.m},
          {"k", c.params.k},
          {"nruns", c.params.nruns},
          {"tie_counts_as_lost", true},
          {"delta", delta}};
}

}  // namespace bulwark
