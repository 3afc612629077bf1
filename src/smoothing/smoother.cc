// Smoothed retrieval (see smoother.h).
#include "smoothing/smoother.h"

#include <absl/strings/str_cat.h>

#include "core/parallel_for.h"
#include "core/status_macros.h"
#include "smoothing/subset_sampler.h"

namespace bulwark {

absl::Status ValidateSmoothingOptions(const SmoothingOptions& o) {
  if (o.m < 1 || o.m > kMaxPool)
    return absl::InvalidArgumentError(absl::StrCat("m must be between 1 and ", kMaxPool));
  if (o.k < 1 || o.k > o.m) return absl::InvalidArgumentError("smoothing k must be between 1 and m");
  if (o.nruns < 1 || o.nruns > kMaxSmoothingRuns) {
    return absl::InvalidArgumentError(absl::StrCat("nruns must be between 1 and ", kMaxSmoothingRuns));
  }
  return absl::OkStatus();
}

nlohmann::json ToJson(const SmoothedAnswer& a) {
  nlohmann::json runs = nlohmann::json::array(), groups = nlohmann::json::array();
  for (const SmoothedRun& r : a.runs) {
    runs.push_back({{"entry_ids", r.entry_ids}, {"response", r.response}, {"group", r.group}});
  }
  for (const AnswerGroup& g : a.groups) groups.push_back({{"answer", g.answer}, {"runs", g.runs}});
  nlohmann::json j = {{"answer", a.abstained ? nlohmann::json(nullptr) : nlohmann::json(a.answer)},
                      {"abstained", a.abstained},
                      {"majority_runs", a.majority_runs},
                      {"nruns", a.runs.size()},
                      {"runs", runs},
                      {"groups", groups},
                      {"certificate", ToJson(a.certificate)},
                      {"responder", a.responder},
                      {"judge", a.judge},
                      {"seed", a.seed_hex}};
  if (a.abstained) j["reason"] = a.reason;
  return j;
}

absl::StatusOr<SmoothedAnswer> Smoother::Answer(std::string_view question, std::span<const SearchHit> pool,
                                                const SmoothingOptions& options, SeededCsprng* rng) const {
  if (auto s = ValidateSmoothingOptions(options); !s.ok()) return s;
  SmoothedAnswer out;
  out.responder = std::string(responder_->name());
  out.judge = std::string(judge_->name());
  out.seed_hex = rng->seed_hex();
  out.certificate.params = {.m = static_cast<int>(pool.size()), .k = 0, .nruns = options.nruns};
  if (pool.empty()) {
    out.reason = "no memories";
    return out;
  }
  const CertificateParams params = {.m = static_cast<int>(pool.size()),
                                    .k = std::min(options.k, static_cast<int>(pool.size())),
                                    .nruns = options.nruns};
  BULWARK_ASSIGN_OR_RETURN(auto certificate, MakeCertificate(params));
  out.certificate = std::move(certificate);

  SubsetSampler sampler(rng);
  BULWARK_ASSIGN_OR_RETURN(auto subsets, sampler.DrawRuns(params.m, params.k, params.nruns));
  std::vector<std::string> responses(params.nruns);
  absl::Status answered =
      ParallelFor(params.nruns, static_cast<size_t>(std::max(1, responder_->max_concurrency())),
                  [&](size_t begin, size_t end) {
                    for (size_t r = begin; r < end; ++r) {
                      std::vector<const SearchHit*> context;
                      for (int i : subsets[r]) context.push_back(&pool[i]);
                      BULWARK_ASSIGN_OR_RETURN(auto response, responder_->Respond(question, context));
                      responses[r] = std::move(response);
                    }
                    return absl::OkStatus();
                  });
  BULWARK_RETURN_IF_ERROR(answered);

  BULWARK_ASSIGN_OR_RETURN(auto aggregated, AggregateByEquivalence(question, responses, *judge_));
  out.groups = aggregated.groups;
  out.runs.resize(params.nruns);
  for (int r = 0; r < params.nruns; ++r) {
    for (int i : subsets[r]) out.runs[r].entry_ids.push_back(pool[i].entry.id);
    out.runs[r].response = std::move(responses[r]);
  }
  for (size_t g = 0; g < out.groups.size(); ++g) {
    for (int r : out.groups[g].runs) out.runs[r].group = static_cast<int>(g);
  }
  if (aggregated.abstained()) {
    out.reason = "no consistent answer";
  } else {
    out.abstained = false;
    out.answer = out.groups[aggregated.majority].answer;
    out.majority_runs = static_cast<int>(out.groups[aggregated.majority].runs.size());
  }
  return out;
}

}  // namespace bulwark
