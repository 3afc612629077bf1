// How the read-time defenses' results read on a terminal (see read_defense_text.h).
#include "cli/read_defense_text.h"

#include <absl/strings/str_cat.h>

#include <cmath>
#include <iomanip>
#include <sstream>

#include "core/strings.h"

namespace bulwark::cli {

std::string Fixed(double x, int digits) {
  if (std::isnan(x)) return "-";
  std::ostringstream s;
  s << std::fixed << std::setprecision(digits) << x;
  return s.str();
}

std::string DescribeGate(const GateVerdict& v) {
  if (!v.score_kind) return std::string(ToString(v.decision));
  std::string out = absl::StrCat(ToAbsl(ToString(v.decision)), " (", ToAbsl(ToString(*v.score_kind)), " ",
                                 Fixed(v.score), v.flagged ? " > " : " <= ", Fixed(v.threshold), ")");
  if (v.decision == GateDecision::kStrip) {
    std::string removed;
    for (const std::string& t : v.removed_tokens) removed += (removed.empty() ? "" : " ") + t;
    absl::StrAppend(&out, ", removed [", removed, "], score after ", Fixed(v.score_after));
  }
  return out;
}

std::string DescribeCertificate(const Certificate& c) {
  std::string out =
      absl::StrCat("certificate m=", c.params.m, " k=", c.params.k, " nruns=", c.params.nruns, ":");
  for (size_t t = 1; t <= c.delta.size(); ++t)
    absl::StrAppend(&out, " delta(t=", t, ")=", Fixed(c.delta[t - 1]));
  return out;
}

void PrintSmoothed(std::ostream& out, const SmoothedAnswer& a) {
  if (a.abstained) {
    out << "answer: none -- " << a.reason << " (abstained)\n";
  } else {
    out << "answer: " << a.answer << "\n";
  }
  out << "majority: " << a.majority_runs << " of " << a.runs.size() << " runs (" << a.responder
      << " responder, " << a.judge << " equivalence)\n";
  if (!a.certificate.delta.empty()) out << DescribeCertificate(a.certificate) << "\n";
  for (size_t r = 0; r < a.runs.size(); ++r) {
    std::string ids;
    for (const std::string& id : a.runs[r].entry_ids) ids += (ids.empty() ? "" : ",") + id;
    out << "run " << r + 1 << " [group " << a.runs[r].group << "] " << ids << "\n    -> "
        << a.runs[r].response << "\n";
  }
  out << "seed: " << a.seed_hex << "\n";
}

}  // namespace bulwark::cli
