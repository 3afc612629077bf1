// The pieces every route handler works with: the service's backends and limits (ServiceContext),
// one request as a handler sees it (Call), what a handler answers (Reply), and the route table
// entries the route files contribute (RouteSpec).
//
// A handler returns absl::StatusOr<Reply>; errors are statuses, turned into HTTP answers in one
// place (api_status.h). Handlers never throw on purpose; HttpServer catches anything that escapes.
#pragma once

#include <absl/status/statusor.h>
#include <httplib.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "audit/audit_log.h"
#include "audit/audit_operation.h"
#include "auth/principal_registry.h"
#include "bulwark/env.h"
#include "core/json_writer.h"
#include "gate/gate_store.h"
#include "retrieval/defended_retriever.h"
#include "server/authorization.h"
#include "server/credential_cache.h"
#include "server/metrics.h"
#include "server/request_parsing.h"
#include "server/router.h"
#include "store/memory_store.h"

namespace bulwark::server {

struct Call;
struct Reply;
struct RouteSpec;

// Wraps the handlers of authenticated routes (ServiceBackends::interceptor). Handle either answers
// itself (e.g. with a forwarded request's answer) or runs route.handler(call) and may add
// response headers. Thread-safe: called from every worker.
class RouteInterceptor {
 public:
  virtual ~RouteInterceptor() = default;
  virtual absl::StatusOr<Reply> Handle(const RouteSpec& route, const Call& call) = 0;
};

// The backends of the service. Not owned: they must outlive the server.
struct ServiceBackends {
  MemoryStore* store = nullptr;
  PrincipalRegistry* registry = nullptr;
  AuditLog* audit = nullptr;
  Env* env = nullptr;  // clock for audit records; null means Env::Default()
  // The read path of searches and answers (query gate, smoothing). Null: HttpServer uses one over
  // `store` without gates or LLM.
  DefendedRetriever* retriever = nullptr;
  // The fitted query gates (their signed policies are checked by verify); may be null.
  GateStore* gates = nullptr;
  // Runs every authenticated route's handler when set (several replicas over one PostgreSQL
  // store: forwards writes to the namespace's leader, waits for a read's minimum version; see
  // server/replica_routing.h). Null: handlers run directly.
  RouteInterceptor* interceptor = nullptr;
  // Routes a deployment adds after the API's (a replica's internal query-history route,
  // query_history_forwarding.h), and samples it adds to /metrics. Empty: none.
  std::function<void(std::vector<RouteSpec>* routes)> add_routes;
  std::function<std::vector<Sample>()> extra_samples;
};

struct ServiceContext {
  ServiceBackends backends;
  RequestLimits limits;
  Metrics* metrics = nullptr;
  CredentialCache* credentials = nullptr;  // cleared by every revocation made through the API
  // Gauges sampled at scrape time (connection queue, store counters); set by HttpServer.
  std::function<std::vector<Sample>()> gauges;
  // The dashboard's numbers for GET /v1/admin/stats (current counters and the time series of
  // stats_series.h); set by HttpServer.
  std::function<nlohmann::json()> stats;
};

// One request, as a handler sees it.
struct Call {
  const httplib::Request& http;
  const PathParams& params;  // from the route template, e.g. {id}
  const QueryParams& query;  // the URL query string only (never form fields of the body)
  const Caller* caller;      // the authenticated caller; null on public routes
  // For a call made by an MCP tool (mcp_service.h): {"tool", "client", ...}, recorded as the audit
  // record's detail "mcp". Null for HTTP requests.
  const nlohmann::json* mcp = nullptr;

  std::string_view Param(std::string_view name) const { return PathParam(params, name); }
};

struct Reply {
  int status = 200;
  nlohmann::json body;       // sent as application/json unless `text` is set
  std::string text;          // a non-JSON body (Prometheus text)
  std::string content_type;  // for `text`
  // Extra response headers (the dashboard's Content-Security-Policy, a redirect's Location).
  std::vector<std::pair<std::string, std::string>> headers;
};

using Handler = std::function<absl::StatusOr<Reply>(const Call&)>;

enum class Access {
  kPublic,         // no API key needed (GET /healthz)
  kAuthenticated,  // a valid API key; the handler checks role and grants
};

struct RouteSpec {
  std::string method;
  std::string pattern;  // RouteTable template, also the metrics `route` label
  Access access = Access::kAuthenticated;
  Handler handler;
  // Refused with 503 "audit_unavailable" while the audit log cannot write (doc/api.md, "Audit fails
  // closed"). False only for the routes an operator needs to see and repair that state: /metrics,
  // /v1/audit and /v1/admin/verify (each reports the audit failure itself), and /healthz.
  bool needs_audit = true;
  // False for a route whose body is not JSON (the replicas' internal query-history batches,
  // query_history_forwarding.h): the JSON Content-Type check (request_guards.h) is skipped.
  bool json_body = true;
};

// Route files: each appends its routes. `context` must outlive the routes.
void AddMemoryRoutes(ServiceContext& context, std::vector<RouteSpec>* routes);
void AddQuarantineRoutes(ServiceContext& context, std::vector<RouteSpec>* routes);
void AddAdminRoutes(ServiceContext& context, std::vector<RouteSpec>* routes);
void AddHealthRoutes(ServiceContext& context, std::vector<RouteSpec>* routes);
void AddAnswerRoutes(ServiceContext& context, std::vector<RouteSpec>* routes);
void AddSessionRoutes(ServiceContext& context, std::vector<RouteSpec>* routes);
void AddMcpRoutes(ServiceContext& context, std::vector<RouteSpec>* routes);  // POST /mcp
// GET /v1/memories (list), GET /v1/namespaces, delete-all and forget (list_routes.cc).
void AddListRoutes(ServiceContext& context, std::vector<RouteSpec>* routes);
// Mem0's platform paths (mem0_routes.cc, doc/mem0.md).
void AddMem0Routes(ServiceContext& context, std::vector<RouteSpec>* routes);
// The operator dashboard: /ui/ and its assets, GET /v1/whoami, GET /v1/admin/stats
// (dashboard_routes.cc, doc/dashboard.md).
void AddDashboardRoutes(ServiceContext& context, std::vector<RouteSpec>* routes);

// Shared by the route files.

// How much of an entry's write-gate `report` (detector scores, thresholds, matched rules) an answer
// carries (issue #18 point 7). Only admins see it: to anyone else it is an oracle for tuning a
// poison until it passes. Readers and writers see the decision alone, which `state` already says
// ("active": stored; "quarantined": held for review).
enum class ReportView { kHidden, kFull };
ReportView ReportViewFor(const Caller& caller);  // kFull for the admin role, else kHidden

// ToJson(entry) plus the hex signature "tag"; without "report" unless `view` is kFull.
nlohmann::json EntryJson(const Entry& entry, ReportView view);
// The query gate's verdict for an answer. kFull (admins): ToJson(gate) — scores, thresholds,
// removed tokens — plus the cleaned "query" the search used when the gate stripped it (the audit
// log never gets it). kHidden: {"mode", "decision", "flagged"} only, so a reader cannot tune a
// query against the gate's score (issue #18 point 7).
nlohmann::json GateJson(const DefendedSearchResult& result, ReportView view);
// EntryJson(entry, view), plus "score" when given, written straight to `w` (the search answer's hits).
void WriteEntryJson(JsonWriter& w, const Entry& entry, std::optional<float> score, ReportView view);
// The body of a search answer: {"gate", "hits" (entries with "score"), "k", "smoothed" (if
// smoothed), "withheld_candidates"}, written without building a nlohmann tree (json_writer.h).
// Hits carry their report only for ReportView::kFull.
std::string SearchResponseJson(const DefendedSearchResult& result, ReportView view);
// The body of an add answer: {"entries": [EntryJson...]} when `as_batch`, else {"entry": EntryJson}
// of the one entry (`entries` holds exactly one then), written without a nlohmann tree: the bytes
// the nlohmann object dumps to (held to that by AddResponseJsonTest).
std::string AddResponseJson(std::span<const Entry> entries, bool as_batch, ReportView view);
// The entry `id` of `name_space` as the caller may see it: NotFound (EntryNotFound) for a missing
// entry, one in another namespace, or a honeypot; InvalidArgument for a malformed id.
[[nodiscard]] absl::StatusOr<Entry> LoadVisibleEntry(ServiceContext& context, std::string_view name_space,
                                                     std::string_view id);
// The read path request of a search or an answer: the caller's parsed defense fields, and whether
// it may weaken the namespace's gate policy (admins may).
DefendedSearchRequest MakeDefendedRequest(const Call& call, std::string name_space, std::string query,
                                          SearchOptions options, const ReadDefenseFields& defenses);
// A read path error as the API answers it: the honeypot guard's refusal becomes the generic
// 403 {"code": "session_blocked", "message": "this session is blocked"}; others are unchanged.
absl::Status ReadPathStatus(const absl::Status& status);
// The canned refusal of a query the gate rejected: 403 {"code": "query_rejected", ...}; the message
// names the score and threshold for kFull only.
absl::Status QueryRejected(const GateVerdict& verdict, ReportView view);
// Issue #18 point 4: an update is made only by a principal who could create the entry as it
// stands -- an admin, or its current principal when its source is not "system". PermissionDenied
// otherwise.
[[nodiscard]] absl::Status MayRewrite(const Caller& caller, const Entry& entry);
// The add of POST /v1/memories when the request has a client `key` (upsert) or an
// Idempotency-Key header (keyed_add.cc); `request` is parsed and authorized for `name_space`.
[[nodiscard]] absl::StatusOr<Reply> KeyedAdd(ServiceContext& context, const Call& call, AddRequest request,
                                             const std::string& name_space);
// Appends an audit record for `call` (time, principal, session, namespace, operation, ids); its
// detail gains "key_id", the caller's API key id. Service-wide actions use namespace "*".
void RecordAudit(ServiceContext& context, const Call& call, std::string_view name_space,
                 AuditOperation operation, std::vector<std::string> returned_ids, std::string query_hash = "",
                 nlohmann::json detail = nlohmann::json::object());

}  // namespace bulwark::server
