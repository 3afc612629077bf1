// The smoothed answer route (SMSR Component 2, DESIGN 4.6):
//
//   POST   /v1/answer                   reader   smoothed answer with its certificate (+ audit)
//
// The question goes through the same read path as a search (query gate, then an over-fetch of m
// verified entries), then the Smoother answers from nruns uniform k-subsets and returns the answer
// a strict majority of runs agree on, or abstains. The reply names the entries behind every run.
#include <absl/strings/str_cat.h>

#include "core/hex.h"
#include "core/status_macros.h"
#include "server/api_status.h"
#include "server/service.h"

namespace bulwark::server {
namespace {

absl::StatusOr<Reply> Answer(ServiceContext& ctx, const Call& call) {
  BULWARK_RETURN_IF_ERROR(CheckQueryParams(call.query, {"namespace"}));
  BULWARK_ASSIGN_OR_RETURN(auto request, ParseAnswerRequest(call.http.body, ctx.limits));
  BULWARK_ASSIGN_OR_RETURN(auto ns, ResolveNamespace(request.name_space, call.query));
  BULWARK_RETURN_IF_ERROR(Authorize(*call.caller, ns, Need::kRead, NamespaceNotFound()));
  SearchOptions options;
  options.k = request.defenses.smoothing->k;
  options.metadata_filter = request.filter;
  auto result = ctx.backends.retriever->Search(
      MakeDefendedRequest(call, ns, request.question, std::move(options), request.defenses));
  if (!result.ok()) return ReadPathStatus(result.status());
  ctx.metrics->CountGateDecision(result->gate.decision);
  ctx.metrics->ObserveSearchStages(result->stages);

  // "Which memories fed this answer": every entry of every run, in order of first appearance.
  std::vector<std::string> ids;
  if (result->smoothed) {
    for (const SmoothedRun& run : result->smoothed->runs) {
      for (const std::string& id : run.entry_ids) {
        if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
      }
    }
  }
  RecordAudit(ctx, call, ns, AuditOperation::kAnswer, ids, Sha256Hex(request.question),
              DefenseDetail(*result));
  if (result->rejected()) return QueryRejected(result->gate, ReportViewFor(*call.caller));
  Reply reply;
  reply.body = ToJson(*result->smoothed);
  reply.body["gate"] = GateJson(*result, ReportViewFor(*call.caller));
  return reply;
}

}  // namespace

void AddAnswerRoutes(ServiceContext& ctx, std::vector<RouteSpec>* routes) {
  routes->push_back(
      {"POST", "/v1/answer", Access::kAuthenticated, [&ctx](const Call& call) { return Answer(ctx, call); }});
}

}  // namespace bulwark::server
