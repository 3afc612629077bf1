// The operator dashboard's routes (issue #16, doc/dashboard.md):
//
//   GET /ui                   public; 308 redirect to /ui/
//   GET /ui/                  public; the single page (index.html of the embedded ui/dist/)
//   GET /ui/assets/{file}     public; a script, style sheet or image of the bundle; 404 for another
//   GET /v1/whoami            any role; the caller's principal, role, grants and key id, so the page
//                             shows only what the key may do
//   GET /v1/admin/stats       service admin; current counters and a per-10-s series over the last
//                             hour (stats_series.h) as JSON, for the health screen's charts
//
// The page itself holds no data (every number comes from an API call that carries the key from
// sessionStorage), so /ui needs no key. Every /ui answer carries a strict Content-Security-Policy
// (scripts and styles from this origin only, nothing inline, no framing), nosniff and no referrer,
// and never a cookie.
#include <string>

#include "core/status_macros.h"
#include "server/api_status.h"
#include "server/service.h"
#include "server/ui_assets.h"

namespace bulwark::server {
namespace {

constexpr std::string_view kUiPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

void AddUiHeaders(Reply& reply) {
  reply.headers.emplace_back("Content-Security-Policy", kUiPolicy);
  reply.headers.emplace_back("X-Content-Type-Options", "nosniff");
  reply.headers.emplace_back("Referrer-Policy", "no-referrer");
  reply.headers.emplace_back("Cross-Origin-Opener-Policy", "same-origin");
}

absl::StatusOr<Reply> ServeAsset(std::string_view path) {
  const UiAsset* asset = FindUiAsset(path);
  if (asset == nullptr) {
    return ApiError(absl::StatusCode::kNotFound, "not_found", "no such dashboard file");
  }
  Reply reply;
  reply.text = std::string(asset->bytes);
  reply.content_type = std::string(asset->content_type);
  AddUiHeaders(reply);
  return reply;
}

absl::StatusOr<Reply> RedirectToIndex(const Call&) {
  Reply reply;
  reply.status = 308;
  reply.text = "/ui/\n";
  reply.content_type = "text/plain; charset=utf-8";
  reply.headers.emplace_back("Location", "/ui/");
  AddUiHeaders(reply);
  return reply;
}

absl::StatusOr<Reply> WhoAmI(const Call& call) {
  BULWARK_RETURN_IF_ERROR(CheckQueryParams(call.query, {}));
  const Principal& p = call.caller->principal;
  Reply reply;
  reply.body = {{"principal", p.name},
                {"role", ToString(p.role)},
                {"namespaces", p.namespaces},
                {"key_id", call.caller->key_id},
                {"service_admin", RequireServiceAdmin(*call.caller).ok()}};
  return reply;
}

absl::StatusOr<Reply> Stats(ServiceContext& ctx, const Call& call) {
  // Service-wide numbers, like /metrics: a namespace-scoped admin would learn about the others.
  BULWARK_RETURN_IF_ERROR(RequireServiceAdmin(*call.caller));
  BULWARK_RETURN_IF_ERROR(CheckQueryParams(call.query, {}));
  if (!ctx.stats) return absl::UnavailableError("statistics are not kept by this server");
  Reply reply;
  reply.body = ctx.stats();
  return reply;
}

}  // namespace

void AddDashboardRoutes(ServiceContext& ctx, std::vector<RouteSpec>* routes) {
  routes->push_back({"GET", "/ui", Access::kPublic, RedirectToIndex, /*needs_audit=*/false});
  routes->push_back({"GET", "/ui/", Access::kPublic, [](const Call&) { return ServeAsset("index.html"); },
                     /*needs_audit=*/false});
  routes->push_back({"GET", "/ui/assets/{file}", Access::kPublic,
                     [](const Call& call) { return ServeAsset("assets/" + std::string(call.Param("file"))); },
                     /*needs_audit=*/false});
  routes->push_back({"GET", "/v1/whoami", Access::kAuthenticated, WhoAmI});
  routes->push_back({"GET", "/v1/admin/stats", Access::kAuthenticated,
                     [&ctx](const Call& call) { return Stats(ctx, call); }, /*needs_audit=*/false});
}

}  // namespace bulwark::server
