// Liveness and metrics:
//
//   GET /healthz   public; {"status": "ok"} while the server answers
//   GET /metrics   service admin (admin role + "*" grant); Prometheus text (metrics.h). Its labels
//                  never name a namespace, so a namespace-scoped admin gets 403.
#include "core/status_macros.h"
#include "server/service.h"
#include "store/memory_store_impl.h"

namespace bulwark::server {
namespace {

absl::StatusOr<Reply> Healthz(const Call& call) {
  BULWARK_RETURN_IF_ERROR(CheckQueryParams(call.query, {}));
  Reply reply;
  reply.body = {{"status", "ok"}};
  return reply;
}

absl::StatusOr<Reply> MetricsText(ServiceContext& ctx, const Call& call) {
  // The series are service-wide (no label names a namespace), so they would tell an admin scoped
  // to some namespaces about the others' traffic: only a service admin reads them (issue #18 9).
  BULWARK_RETURN_IF_ERROR(RequireServiceAdmin(*call.caller));
  BULWARK_RETURN_IF_ERROR(CheckQueryParams(call.query, {}));
  Reply reply;
  const LatencyHistogram::Snapshot write_gate = ctx.backends.store->impl().defenses->screen_latency().Take();
  reply.text = ctx.metrics->Render(ctx.gauges ? ctx.gauges() : std::vector<Sample>{}, &write_gate);
  reply.content_type = "text/plain; version=0.0.4; charset=utf-8";
  return reply;
}

}  // namespace

void AddHealthRoutes(ServiceContext& ctx, std::vector<RouteSpec>* routes) {
  routes->push_back({"GET", "/healthz", Access::kPublic, Healthz, /*needs_audit=*/false});
  routes->push_back({"GET", "/metrics", Access::kAuthenticated,
                     [&ctx](const Call& call) { return MetricsText(ctx, call); }, /*needs_audit=*/false});
}

}  // namespace bulwark::server
