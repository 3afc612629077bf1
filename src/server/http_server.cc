// The HTTP server: the connection loop's callbacks and the single request path (see http_server.h).
#include "server/http_server.h"

#include <absl/cleanup/cleanup.h>
#include <absl/strings/str_cat.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <exception>
#include <iterator>
#include <optional>

#include "core/status_macros.h"
#include "server/api_status.h"
#include "server/process_metrics.h"
#include "server/refusal_audit.h"
#include "server/request_guards.h"
#include "server/response_writer.h"

namespace bulwark::server {
namespace {

using Clock = std::chrono::steady_clock;

int64_t MonotonicMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now().time_since_epoch()).count();
}

// CPU time used by the calling thread, in microseconds.
int64_t ThreadCpuMicros() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<int64_t>(t.tv_sec) * 1'000'000 + t.tv_nsec / 1'000;
}

// httplib's set_content without copying the body: replaces the body and the Content-Type.
void SetContent(httplib::Response& response, std::string body, const std::string& content_type) {
  response.body = std::move(body);
  response.headers.erase("Content-Type");
  response.set_header("Content-Type", content_type);
}

void WriteJson(httplib::Response& response, int status, const nlohmann::json& body) {
  response.status = status;
  // `replace`: a message that quotes invalid UTF-8 from a request must not make dump() throw.
  SetContent(response, body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
             "application/json");
}

void WriteStatus(httplib::Response& response, const absl::Status& status) {
  WriteJson(response, HttpStatusOf(status.code()), ErrorBody(status));
}

// The metrics label of a request method: the methods the API knows, else "other" (a client picks
// the method token, and a label must come from a closed set: metrics.h).
std::string_view MethodLabel(std::string_view method) {
  for (std::string_view known : {"GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"}) {
    if (method == known) return known;
  }
  return method.empty() ? "unknown" : "other";
}

// The reject reason a refused request counts under, by its HTTP status; nullopt for others.
std::optional<RejectReason> RejectReasonOf(int status) {
  switch (status) {
    case 400:
      return RejectReason::kBadRequest;
    case 401:
      return RejectReason::kUnauthenticated;
    case 403:
      return RejectReason::kForbidden;
    case 413:
    case 431:
      return RejectReason::kPayloadTooLarge;
    case 429:
      return RejectReason::kRateLimited;
    default:
      return std::nullopt;
  }
}

absl::Status CheckOptions(const ServerOptions& o, const ServiceBackends& b) {
  if (b.store == nullptr || b.registry == nullptr)
    return absl::InvalidArgumentError("store and registry are required");
  if (o.threads < 1 || o.threads > 1024)
    return absl::InvalidArgumentError("threads must be between 1 and 1024");
  if (o.max_queued_connections < 0 || o.max_queued_connections > 100'000) {
    return absl::InvalidArgumentError("max_queued_connections must be between 0 and 100000");
  }
  if (o.max_header_bytes < 1024 || o.max_header_bytes > (1u << 20)) {
    return absl::InvalidArgumentError("max_header_bytes must be between 1 KiB and 1 MiB");
  }
  if (o.max_body_bytes < 1024 || o.max_body_bytes > (64u << 20)) {
    return absl::InvalidArgumentError("max_body_bytes must be between 1 KiB and 64 MiB");
  }
  if (o.limits.max_k < 1 || o.limits.max_k > 1000)
    return absl::InvalidArgumentError("max k must be between 1 and 1000");
  if (o.limits.max_smoothing_runs < 1 || o.limits.max_smoothing_runs > kMaxSmoothingRuns) {
    return absl::InvalidArgumentError("max smoothing runs must be between 1 and 101");
  }
  if (o.limits.max_batch_entries < 1)
    return absl::InvalidArgumentError("max batch entries must be at least 1");
  if (o.limits.max_depth < 2 || o.limits.max_depth > 1000) {
    return absl::InvalidArgumentError("max JSON depth must be between 2 and 1000");
  }
  if (o.rate_per_second > 0 && o.burst < 1) return absl::InvalidArgumentError("burst must be at least 1");
  if (o.port < 0 || o.port > 65535) return absl::InvalidArgumentError("port must be between 0 and 65535");
  if (o.credential_cache_ms < 0 || o.credential_cache_ms > 60'000) {
    return absl::InvalidArgumentError("credential_cache_ms must be between 0 and 60000");
  }
  if (o.keep_alive_max_requests < 1 || o.keep_alive_timeout_s < 1 || o.request_timeout_s < 1 ||
      o.write_timeout_s < 1 || o.keep_alive_timeout_s > 3600 || o.request_timeout_s > 3600 ||
      o.write_timeout_s > 3600) {
    return absl::InvalidArgumentError("keep-alive and timeout settings must be between 1 and 3600 s");
  }
  if (o.max_connections < 1 || o.max_connections > 1'000'000) {
    return absl::InvalidArgumentError("max_connections must be between 1 and 1000000");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Create(const ServerOptions& options,
                                                               const ServiceBackends& backends) {
  BULWARK_RETURN_IF_ERROR(CheckOptions(options, backends));
  std::unique_ptr<HttpServer> server(new HttpServer(options, backends));
  server->InstallRoutes();
  return server;
}

HttpServer::HttpServer(const ServerOptions& options, const ServiceBackends& backends)
    : options_(options),
      limiter_(options.rate_per_second, options.burst),
      refusal_audits_(options.refusal_audit_rate, std::max(1.0, options.refusal_audit_burst)),
      credentials_(static_cast<int64_t>(options.credential_cache_ms) * 1000) {
  context_.backends = backends;
  if (context_.backends.env == nullptr) context_.backends.env = Env::Default();
  if (context_.backends.retriever == nullptr) {
    default_retriever_ =
        std::make_unique<DefendedRetriever>(backends.store, nullptr, nullptr, context_.backends.env);
    context_.backends.retriever = default_retriever_.get();
  }
  context_.limits = options.limits;
  context_.metrics = &metrics_;
  context_.credentials = &credentials_;
  context_.gauges = [this] { return Gauges(); };
  context_.stats = [this] { return StatsJson(); };
}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::InstallRoutes() {
  AddMemoryRoutes(context_, &routes_);
  AddAnswerRoutes(context_, &routes_);
  AddQuarantineRoutes(context_, &routes_);
  AddAdminRoutes(context_, &routes_);
  AddSessionRoutes(context_, &routes_);
  AddListRoutes(context_, &routes_);
  AddMem0Routes(context_, &routes_);
  AddHealthRoutes(context_, &routes_);
  AddMcpRoutes(context_, &routes_);
  AddDashboardRoutes(context_, &routes_);
  if (context_.backends.add_routes) context_.backends.add_routes(&routes_);
  for (const RouteSpec& route : routes_) table_.Add(route.method, route.pattern);
}

void HttpServer::ChargeWork(std::string_view key_id, int64_t handler_us, size_t answer_bytes) {
  // One request's token covers up to kWorkBytesPerToken of answer and kWorkMicrosPerToken of
  // handler CPU time; each further such unit costs one more token.
  constexpr double kWorkBytesPerToken = 16 << 10;
  constexpr double kWorkMicrosPerToken = 10'000;
  const double extra = std::max(0.0, static_cast<double>(answer_bytes) / kWorkBytesPerToken - 1) +
                       std::max(0.0, static_cast<double>(handler_us) / kWorkMicrosPerToken - 1);
  limiter_.Charge(key_id, extra, MonotonicMicros());
}

absl::StatusOr<int> HttpServer::Bind() {
  if (loop_ != nullptr) return absl::FailedPreconditionError("already bound");
  const ServerOptions& o = options_;
  ConnectionLoopOptions loop_options;
  loop_options.host = o.host;
  loop_options.port = o.port;
  loop_options.listen_backlog = o.listen_backlog;
  loop_options.max_connections = o.max_connections;
  loop_options.threads = o.threads;
  loop_options.max_queued = o.max_queued_connections;
  loop_options.keep_alive_max_requests = o.keep_alive_max_requests;
  loop_options.idle_timeout = std::chrono::seconds(o.keep_alive_timeout_s);
  loop_options.request_timeout = std::chrono::seconds(o.request_timeout_s);
  loop_options.write_timeout = std::chrono::seconds(o.write_timeout_s);
  loop_options.continuation_wait = std::chrono::microseconds(o.continuation_wait_us);
  loop_options.framing.max_head_bytes = o.max_header_bytes;
  loop_options.framing.max_request_line_bytes = std::min<size_t>(8 << 10, o.max_header_bytes);
  loop_options.framing.max_body_bytes = o.max_body_bytes;
  ConnectionLoopCallbacks callbacks;
  callbacks.serve = [this](FramedRequest& request) { return ServeRequest(request); };
  callbacks.refuse = [this](const Refusal& refusal) { return RefuseRequest(refusal); };
  BULWARK_ASSIGN_OR_RETURN(auto loop, ConnectionLoop::Create(loop_options, std::move(callbacks)));
  loop_ = std::move(loop);
  return loop_->port();
}

absl::Status HttpServer::Serve() {
  if (loop_ == nullptr) return absl::FailedPreconditionError("Bind() first");
  return loop_->Run();
}

void HttpServer::Stop() {
  if (loop_ != nullptr) loop_->Stop();
}

WireAnswer HttpServer::ServeRequest(FramedRequest& framed) {
  httplib::Request request;
  request.method = std::move(framed.method);
  request.version = framed.version_minor == 0 ? "HTTP/1.0" : "HTTP/1.1";
  request.target = std::move(framed.target);
  const size_t mark = request.target.find('?');
  request.path = httplib::detail::decode_url(request.target.substr(0, mark), false);
  for (auto& [name, value] : framed.headers) request.headers.emplace(std::move(name), std::move(value));
  request.body = std::move(framed.body);
  request.remote_addr = std::move(framed.peer_address);
  httplib::Response response;
  Dispatch(request, response);
  const bool close = !framed.keep_alive;
  return WireAnswer{WriteResponse(response, ResponseFraming{request.method == "HEAD", close,
                                                            !close && framed.version_minor == 0}),
                    close};
}

std::string HttpServer::RefuseRequest(const Refusal& refusal) {
  httplib::Response response;
  WriteJson(response, refusal.status, ErrorBody(refusal.code, refusal.message));
  response.set_header("Cache-Control", "no-store");
  response.set_header("X-Content-Type-Options", "nosniff");
  response.set_header("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'");
  if (refusal.status == 503) {
    response.set_header("Retry-After", "1");
    metrics_.CountReject(RejectReason::kOverloaded);
  } else if (auto reason = RejectReasonOf(refusal.status)) {
    metrics_.CountReject(*reason);
  }
  metrics_.ObserveRequest(refusal.status == 503 ? "shed" : "unmatched", MethodLabel(refusal.method),
                          refusal.status, 0);
  return WriteResponse(response, ResponseFraming{refusal.method == "HEAD", /*close=*/true, false});
}

std::vector<Sample> HttpServer::Gauges() const {
  static const ConnectionStats kNone;
  const ConnectionStats& c = loop_ ? loop_->stats() : kNone;
  std::vector<Sample> samples = {
      {"bulwark_connections_open", "Open client connections.", "gauge", static_cast<double>(c.open.load())},
      {"bulwark_connections_active", "Requests being served by a worker.", "gauge",
       static_cast<double>(loop_ ? loop_->workers_active() : 0)},
      {"bulwark_connections_queued", "Complete requests waiting for a worker.", "gauge",
       static_cast<double>(loop_ ? loop_->requests_queued() : 0)},
      {"bulwark_connections_shed_total",
       "Requests or connections answered 503 because the workers were full.", "counter",
       static_cast<double>(c.shed_total.load())},
      {"bulwark_connections_timed_out_total",
       "Connections closed because a request or answer missed its deadline.", "counter",
       static_cast<double>(c.timed_out_total.load())},
      {"bulwark_connections_evicted_total", "Waiting connections closed to make room for a new one.",
       "counter", static_cast<double>(c.evicted_total.load())},
      {"bulwark_requests_malformed_total", "Requests refused for their framing or size before any handler.",
       "counter", static_cast<double>(c.refused_total.load())},
      {"bulwark_signature_failures_total", "Stored rows that failed signature verification (this process).",
       "counter", static_cast<double>(context_.backends.store->signature_failures())},
      {"bulwark_rate_limiter_keys", "API keys with a partly used token bucket.", "gauge",
       static_cast<double>(limiter_.tracked_keys())},
      {"bulwark_refusals_unaudited_total",
       "Failed authentications (401) and session_blocked refusals answered without an audit record (over the "
       "per-address or per-principal limit).",
       "counter", static_cast<double>(unaudited_refusals_.load())},
      {"bulwark_audit_dropped_total", "Audit records dropped because the audit queue stayed full.", "counter",
       context_.backends.audit ? static_cast<double>(context_.backends.audit->DroppedCount()) : 0.0},
      {"bulwark_audit_write_failing",
       "1 while the audit log's latest write failed (requests are refused with 503 audit_unavailable).",
       "gauge", context_.backends.audit && !context_.backends.audit->WriteHealth().ok() ? 1.0 : 0.0},
  };
  // The honeypot monitor's counters, without namespace labels (a label would reveal namespaces).
  if (const HoneypotGuard* guard = context_.backends.retriever->honeypot_guard(); guard != nullptr) {
    samples.push_back({"bulwark_honeypot_observations_total",
                       "Searches whose observation fed the honeypot monitor.", "counter",
                       static_cast<double>(guard->observations())});
    samples.push_back({"bulwark_honeypot_blocks_total",
                       "Sessions or principals the honeypot monitor blocked.", "counter",
                       static_cast<double>(guard->blocks())});
    samples.push_back({"bulwark_honeypot_refusals_total", "Searches and answers refused as session_blocked.",
                       "counter", static_cast<double>(guard->refusals())});
  }
  if (auto& more = context_.backends.extra_samples) std::ranges::move(more(), std::back_inserter(samples));
  for (Sample& s : ProcessSamples()) samples.push_back(std::move(s));
  return samples;
}

StatsCounters HttpServer::CurrentCounters() const {
  StatsCounters c;
  c.requests = metrics_.requests_total();
  for (int i = 0; i < kRejectReasonCount; ++i) c.rejects[i] = metrics_.rejects(static_cast<RejectReason>(i));
  c.entries_added = metrics_.count(EventCounter::kEntriesAdded);
  c.quarantined = metrics_.count(EventCounter::kEntriesQuarantined);
  c.released = metrics_.count(EventCounter::kQuarantineReleased);
  c.rejected = metrics_.count(EventCounter::kQuarantineRejected);
  c.withheld_candidates = metrics_.count(EventCounter::kSearchWithheldCandidates);
  c.signature_failures = context_.backends.store->signature_failures();
  for (int i = 0; i < kGateDecisionCount; ++i) {
    c.gate_decisions[i] = metrics_.gate_decisions(static_cast<GateDecision>(i));
  }
  if (const HoneypotGuard* guard = context_.backends.retriever->honeypot_guard(); guard != nullptr) {
    c.honeypot_blocks = guard->blocks();
    c.honeypot_refusals = guard->refusals();
  }
  return c;
}

nlohmann::json HttpServer::StatsJson() {
  const int64_t now_us = context_.backends.env->NowMicros();
  stats_.Tick(now_us);
  nlohmann::json out = stats_.ToJson();
  out["now_us"] = now_us;
  out["totals"] = CurrentCounters().ToJson();
  // The blocks in force now (null when the honeypot monitor is off).
  out["blocked_sessions"] = nullptr;
  if (const HoneypotGuard* guard = context_.backends.retriever->honeypot_guard(); guard != nullptr) {
    if (auto blocked = guard->Blocked(); blocked.ok()) out["blocked_sessions"] = blocked->size();
  }
  return out;
}

void HttpServer::Dispatch(const httplib::Request& request, httplib::Response& response) {
  const Clock::time_point start = Clock::now();
  std::string route = "unmatched";
  try {
    Answer(request, response, &route);
  } catch (const std::exception& e) {
    spdlog::error("{} {}: unhandled exception: {}", request.method, route, e.what());
    WriteJson(response, 500, ErrorBody("internal", "internal error"));
  } catch (...) {
    spdlog::error("{} {}: unhandled exception", request.method, route);
    WriteJson(response, 500, ErrorBody("internal", "internal error"));
  }
  response.set_header("Cache-Control", "no-store");
  if (!response.has_header("X-Content-Type-Options"))
    response.set_header("X-Content-Type-Options", "nosniff");
  // An API answer is data, never a page: nothing in it may load or run, and no page may frame it.
  // The dashboard's own answers carry their policy (dashboard_routes.cc).
  if (!response.has_header("Content-Security-Policy")) {
    response.set_header("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'");
  }
  if (!response.has_header("Referrer-Policy")) response.set_header("Referrer-Policy", "no-referrer");
  if (auto reason = RejectReasonOf(response.status)) metrics_.CountReject(*reason);
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  metrics_.ObserveRequest(route, MethodLabel(request.method), response.status, seconds);
  stats_.Observe(context_.backends.env->NowMicros(), seconds);
}

void HttpServer::RecordRefusal(const httplib::Request& request, std::string_view route, const Caller* caller,
                               const absl::Status& status) {
  const int http_status = HttpStatusOf(status.code());
  if ((http_status != 401 && http_status != 403) || context_.backends.audit == nullptr) return;
  context_.backends.audit->Append(RefusalRecord(request, MethodLabel(request.method), route, caller, status,
                                                context_.backends.env->NowMicros()));
}

namespace {

// The route's handler, through the interceptor for authenticated calls (replicas, service.h).
absl::StatusOr<Reply> RunHandler(const ServiceContext& context, const RouteSpec& route, const Call& call) {
  if (call.caller == nullptr || context.backends.interceptor == nullptr) return route.handler(call);
  return context.backends.interceptor->Handle(route, call);
}

}  // namespace

bool HttpServer::RefusedByHeaders(const httplib::Request& request, const RouteSpec& route,
                                  httplib::Response& response) const {
  if (options_.insecure_dev) {
    if (absl::Status origin = CheckLocalOrigin(request); !origin.ok()) {
      WriteStatus(response, origin);
      return true;
    }
  }
  if (absl::Status json = route.json_body ? CheckJsonBody(request) : absl::OkStatus(); !json.ok()) {
    WriteJson(response, 415, ErrorBody(json));
    return true;
  }
  return false;
}

bool HttpServer::Admit(const httplib::Request& request, const RouteSpec& route, httplib::Response& response,
                       std::optional<Caller>* caller) {
  if (route.access != Access::kAuthenticated) return true;
  auto authenticated = Authenticate(request, *context_.backends.registry, &credentials_, MonotonicMicros(),
                                    options_.insecure_dev);
  if (!authenticated.ok()) {
    if (authenticated.status().code() == absl::StatusCode::kUnauthenticated) {
      response.set_header("WWW-Authenticate", "Bearer realm=\"bulwark\"");
    }
    if (refusal_audits_.Acquire(request.remote_addr, MonotonicMicros()).allowed) {
      RecordRefusal(request, route.pattern, nullptr, authenticated.status());
    } else {
      unaudited_refusals_.fetch_add(1);
    }
    WriteStatus(response, authenticated.status());
    return false;
  }
  *caller = *std::move(authenticated);
  RateLimiter::Decision decision = limiter_.Acquire((*caller)->key_id, MonotonicMicros());
  if (!decision.allowed) {
    const int64_t retry_after =
        std::max<int64_t>(1, static_cast<int64_t>(std::ceil(decision.retry_after_seconds)));
    response.set_header("Retry-After", std::to_string(retry_after));
    WriteStatus(response,
                ApiError(absl::StatusCode::kResourceExhausted, "rate_limited",
                         absl::StrCat("rate limit exceeded for this API key; retry in ", retry_after, " s")));
    return false;
  }
  return true;
}

void HttpServer::WriteReply(const httplib::Request& request, const RouteSpec& route, const Caller* caller,
                            absl::StatusOr<Reply> reply, httplib::Response& response) {
  if (!reply.ok()) {
    if (HttpStatusOf(reply.status().code()) == 500) {
      spdlog::error("{} {}: {}", request.method, route.pattern, reply.status().ToString());
    }
    // A blocked session's refusals are bounded per principal like failed authentications per
    // address (a blocked extractor retrying must not fill the audit log).
    if (ApiCodeOf(reply.status()) != "session_blocked" ||
        refusal_audits_
            .Acquire("session_blocked/" + (caller ? caller->principal.name : ""), MonotonicMicros())
            .allowed) {
      RecordRefusal(request, route.pattern, caller, reply.status());
    } else {
      unaudited_refusals_.fetch_add(1);
    }
    WriteStatus(response, reply.status());
    return;
  }
  for (const auto& [name, value] : reply->headers) response.set_header(name, value);
  if (!reply->text.empty() || !reply->content_type.empty()) {
    response.status = reply->status;
    SetContent(response, std::move(reply->text), reply->content_type);
    return;
  }
  WriteJson(response, reply->status, reply->body);
}

void HttpServer::Answer(const httplib::Request& request, httplib::Response& response,
                        std::string* route_label) {
  RouteMatch match = table_.Find(request.method, request.path);
  if (match.kind == RouteMatch::Kind::kNoRoute) {
    WriteJson(response, 404, ErrorBody("no_route", "no such route (see doc/api.md)"));
    return;
  }
  if (match.kind == RouteMatch::Kind::kMethodNotAllowed) {
    response.set_header("Allow", match.allowed_methods);
    WriteJson(response, 405,
              ErrorBody("method_not_allowed", absl::StrCat("this route accepts ", match.allowed_methods)));
    return;
  }
  const RouteSpec& route = routes_[match.index];
  *route_label = route.pattern;
  if (RefusedByHeaders(request, route, response)) return;
  std::optional<Caller> caller;
  if (!Admit(request, route, response, &caller)) return;

  // httplib merges form-encoded bodies into request.params (curl -d sends that content type);
  // the API reads parameters from the URL only.
  QueryParams query;
  if (size_t mark = request.target.find('?'); mark != std::string::npos) {
    httplib::detail::parse_query_text(request.target.substr(mark + 1), query);
  }
  if (route.needs_audit && context_.backends.audit != nullptr) {
    if (absl::Status audit = context_.backends.audit->WriteHealth(); !audit.ok()) {
      // Fail closed (issue #18 point 8): nothing is served that the audit log could not record.
      WriteStatus(response, ApiError(absl::StatusCode::kUnavailable, "audit_unavailable",
                                     "the audit log cannot write records now; requests are refused until "
                                     "it can (an operator sees why in GET /v1/audit or /metrics)"));
      response.set_header("Retry-After", "1");
      return;
    }
  }
  const Call call{request, match.params, query, caller ? &*caller : nullptr};
  const int64_t handler_start_us = ThreadCpuMicros();
  absl::StatusOr<Reply> reply = RunHandler(context_, route, call);
  // Work beyond one request's share is charged to the key afterwards (issue #18 point 9): CPU time
  // of the handler's thread (time spent waiting for the disk or for a core is not the caller's
  // work) and the answer's size.
  absl::Cleanup charge = [&] {
    if (caller) ChargeWork(caller->key_id, ThreadCpuMicros() - handler_start_us, response.body.size());
  };
  WriteReply(request, route, caller ? &*caller : nullptr, std::move(reply), response);
}

}  // namespace bulwark::server
