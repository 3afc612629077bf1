// The HTTP server: httplib wiring and the single request path (see http_server.h).
#include "server/http_server.h"

#include <sys/socket.h>

#include <chrono>
#include <cmath>
#include <exception>
#include <optional>

#include <absl/strings/str_cat.h>
#include <spdlog/spdlog.h>

#include "server/api_status.h"
#include "server/socket_stream.h"

namespace bulwark::server {
namespace {

using Clock = std::chrono::steady_clock;

int64_t MonotonicMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now().time_since_epoch()).count();
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
  SetContent(response, body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), "application/json");
}

void WriteStatus(httplib::Response& response, const absl::Status& status) {
  WriteJson(response, HttpStatusOf(status.code()), ErrorBody(status));
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
  if (o.keep_alive_max_requests < 1 || o.keep_alive_timeout_s < 1 || o.read_timeout_s < 1 ||
      o.write_timeout_s < 1) {
    return absl::InvalidArgumentError("keep-alive and timeout settings must be positive");
  }
  return absl::OkStatus();
}

}  // namespace

namespace {

// The stream of the connection this thread serves, for the error handler (431 vs 400).
thread_local const BudgetedSocketStream* t_current_stream = nullptr;
// Set when a request was refused before it was read completely (unparsable, too large, shed): the
// connection's byte stream can no longer be trusted, so it is closed after the answer.
thread_local bool t_close_after_answer = false;

}  // namespace

// httplib::Server with two changes: connections are served through BudgetedSocketStream (bounded
// bytes per request, prompt exit on Stop), and the listen backlog can be widened (httplib's is 5).
class HttpServer::HttplibServer : public httplib::Server {
 public:
  HttplibServer(size_t header_budget, size_t body_budget)
      : header_budget_(header_budget), body_budget_(body_budget) {}

  void SetBacklog(int backlog) {
    const socket_t sock = svr_sock_;
    if (sock != INVALID_SOCKET) ::listen(sock, backlog);  // Linux: listen() again resizes the queue
  }

 private:
  // Replaces httplib's keep-alive loop; each request is parsed and routed by httplib as usual.
  bool process_and_close_socket(socket_t sock) override {
    using std::chrono::microseconds;
    using std::chrono::seconds;
    BudgetedSocketStream stream(sock, seconds(read_timeout_sec_) + microseconds(read_timeout_usec_),
                                seconds(write_timeout_sec_) + microseconds(write_timeout_usec_));
    t_current_stream = &stream;
    t_close_after_answer = false;
    bool ok = false;
    for (size_t left = keep_alive_max_count_; left > 0; --left) {
      if (!WaitForRequest(sock, seconds(keep_alive_timeout_sec_),
                          [this] { return svr_sock_ != INVALID_SOCKET; })) {
        break;
      }
      stream.StartRequest(header_budget_, body_budget_);
      bool closed = false;
      ok = process_request(stream, /*close_connection=*/left == 1, closed, nullptr);
      ok = stream.Flush() && ok;  // the answer leaves in one send (socket_stream.h)
      if (!ok || closed || t_close_after_answer) break;
    }
    t_current_stream = nullptr;
    if (t_close_after_answer) {
      LingeringClose(sock, std::chrono::seconds(1), 8u << 20);
    } else {
      ::shutdown(sock, SHUT_RDWR);
      ::close(sock);
    }
    return ok;
  }

  const size_t header_budget_;
  const size_t body_budget_;
};

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Create(const ServerOptions& options,
                                                               const ServiceBackends& backends) {
  if (auto s = CheckOptions(options, backends); !s.ok()) return s;
  std::unique_ptr<HttpServer> server(new HttpServer(options, backends));
  server->InstallRoutes();
  return server;
}

HttpServer::HttpServer(const ServerOptions& options, const ServiceBackends& backends)
    : options_(options),
      limiter_(options.rate_per_second, options.burst),
      credentials_(static_cast<int64_t>(options.credential_cache_ms) * 1000),
      http_(std::make_unique<HttplibServer>(options.max_header_bytes, options.max_body_bytes)) {
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
}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::InstallRoutes() {
  AddMemoryRoutes(context_, &routes_);
  AddAnswerRoutes(context_, &routes_);
  AddQuarantineRoutes(context_, &routes_);
  AddAdminRoutes(context_, &routes_);
  AddHealthRoutes(context_, &routes_);
  for (const RouteSpec& route : routes_) table_.Add(route.method, route.pattern);

  auto dispatch = [this](const httplib::Request& request, httplib::Response& response) {
    Dispatch(request, response);
  };
  // One catch-all per method: routing, 404 and 405 are ours (router.h), in JSON.
  http_->Get(".*", dispatch);
  http_->Post(".*", dispatch);
  http_->Put(".*", dispatch);
  http_->Patch(".*", dispatch);
  http_->Delete(".*", dispatch);
  http_->Options(".*", dispatch);

  // Shed connections are answered before their body is read (connection_queue.h).
  http_->set_pre_routing_handler([this](const httplib::Request& request, httplib::Response& response) {
    if (!ConnectionQueue::ServingShedConnection()) return httplib::Server::HandlerResponse::Unhandled;
    t_close_after_answer = true;  // its body, if any, is never read
    response.set_header("Connection", "close");
    response.set_header("Retry-After", "1");
    WriteJson(response, 503, ErrorBody("overloaded", "the server is overloaded; retry later"));
    metrics_.CountReject(RejectReason::kOverloaded);
    metrics_.ObserveRequest("shed", request.method, 503, 0);
    return httplib::Server::HandlerResponse::Handled;
  });
  // Errors httplib produces itself (413 body too large, 400 unparsable request line, ...) arrive
  // with an empty body: give them the JSON error shape. Our own errors already have a body.
  http_->set_error_handler(httplib::Server::HandlerWithResponse(
      [this](const httplib::Request& request, httplib::Response& response) {
        if (!response.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        t_close_after_answer = true;
        response.set_header("Connection", "close");
        if (t_current_stream != nullptr && t_current_stream->budget_exceeded() &&
            t_current_stream->in_headers()) {
          WriteJson(response, 431,
                    ErrorBody("headers_too_large",
                              absl::StrCat("request headers exceed ", options_.max_header_bytes, " bytes")));
        } else if (response.status == 413) {
          WriteJson(response, 413,
                    ErrorBody("payload_too_large",
                              absl::StrCat("request body exceeds ", options_.max_body_bytes, " bytes")));
        } else if (response.status == 414) {
          WriteJson(response, 414, ErrorBody("uri_too_long", "the request target is too long"));
        } else if (response.status == 404) {
          WriteJson(response, 404, ErrorBody("no_route", "no such route (see doc/api.md)"));
        } else {
          WriteJson(response, response.status, ErrorBody("bad_request", "malformed HTTP request"));
        }
        if (auto reason = RejectReasonOf(response.status)) metrics_.CountReject(*reason);
        metrics_.ObserveRequest("unmatched", request.method, response.status, 0);
        return httplib::Server::HandlerResponse::Handled;
      }));
  http_->set_exception_handler([](const httplib::Request&, httplib::Response& response, std::exception_ptr) {
    WriteJson(response, 500, ErrorBody("internal", "internal error"));
  });
}

absl::StatusOr<int> HttpServer::Bind() {
  const ServerOptions& o = options_;
  http_->new_task_queue = [this] {
    return new ConnectionQueue(options_.threads, options_.max_queued_connections, &queue_stats_);
  };
  http_->set_payload_max_length(o.max_body_bytes);
  http_->set_keep_alive_max_count(static_cast<size_t>(o.keep_alive_max_requests));
  http_->set_keep_alive_timeout(o.keep_alive_timeout_s);
  http_->set_read_timeout(o.read_timeout_s, 0);
  http_->set_write_timeout(o.write_timeout_s, 0);
  http_->set_tcp_nodelay(true);
  int port = o.port;
  if (port == 0) {
    port = http_->bind_to_any_port(o.host);
    if (port <= 0) return absl::UnavailableError(absl::StrCat("cannot listen on ", o.host, " (any port)"));
  } else if (!http_->bind_to_port(o.host, port)) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", o.host, ":", port, " (address in use?)"));
  }
  http_->SetBacklog(o.listen_backlog);
  bound_ = true;
  return port;
}

absl::Status HttpServer::Serve() {
  if (!bound_) return absl::FailedPreconditionError("Bind() first");
  http_->listen_after_bind();
  return absl::OkStatus();
}

void HttpServer::Stop() {
  if (http_) http_->stop();
}

std::vector<Sample> HttpServer::Gauges() const {
  return {
      {"bulwark_connections_active", "Connections being served by a worker.", "gauge",
       static_cast<double>(queue_stats_.active.load())},
      {"bulwark_connections_queued", "Accepted connections waiting for a worker.", "gauge",
       static_cast<double>(queue_stats_.queued.load())},
      {"bulwark_connections_shed_total", "Connections answered 503 because the queue was full.", "counter",
       static_cast<double>(queue_stats_.shed_total.load())},
      {"bulwark_signature_failures_total", "Stored rows that failed signature verification (this process).",
       "counter", static_cast<double>(context_.backends.store->signature_failures())},
      {"bulwark_rate_limiter_keys", "API keys with a partly used token bucket.", "gauge",
       static_cast<double>(limiter_.tracked_keys())},
      {"bulwark_audit_dropped_total", "Audit records dropped because the audit queue stayed full.", "counter",
       context_.backends.audit ? static_cast<double>(context_.backends.audit->DroppedCount()) : 0.0},
  };
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
  response.set_header("X-Content-Type-Options", "nosniff");
  if (auto reason = RejectReasonOf(response.status)) metrics_.CountReject(*reason);
  metrics_.ObserveRequest(route, request.method, response.status,
                          std::chrono::duration<double>(Clock::now() - start).count());
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

  std::optional<Caller> caller;
  if (route.access == Access::kAuthenticated) {
    auto authenticated = Authenticate(request, *context_.backends.registry, &credentials_, MonotonicMicros(),
                                      options_.insecure_dev);
    if (!authenticated.ok()) {
      if (authenticated.status().code() == absl::StatusCode::kUnauthenticated) {
        response.set_header("WWW-Authenticate", "Bearer realm=\"bulwark\"");
      }
      WriteStatus(response, authenticated.status());
      return;
    }
    caller = *std::move(authenticated);
    RateLimiter::Decision decision = limiter_.Acquire(caller->key_id, MonotonicMicros());
    if (!decision.allowed) {
      const int64_t retry_after =
          std::max<int64_t>(1, static_cast<int64_t>(std::ceil(decision.retry_after_seconds)));
      response.set_header("Retry-After", std::to_string(retry_after));
      WriteStatus(response, ApiError(absl::StatusCode::kResourceExhausted, "rate_limited",
                                     absl::StrCat("rate limit exceeded for this API key; retry in ",
                                                  retry_after, " s")));
      return;
    }
  }

  // httplib merges form-encoded bodies into request.params (curl -d sends that content type);
  // the API reads parameters from the URL only.
  QueryParams query;
  if (size_t mark = request.target.find('?'); mark != std::string::npos) {
    httplib::detail::parse_query_text(request.target.substr(mark + 1), query);
  }
  const Call call{request, match.params, query, caller ? &*caller : nullptr};
  absl::StatusOr<Reply> reply = route.handler(call);
  if (!reply.ok()) {
    if (HttpStatusOf(reply.status().code()) == 500) {
      spdlog::error("{} {}: {}", request.method, route.pattern, reply.status().ToString());
    }
    WriteStatus(response, reply.status());
    return;
  }
  if (!reply->text.empty() || !reply->content_type.empty()) {
    response.status = reply->status;
    SetContent(response, std::move(reply->text), reply->content_type);
    return;
  }
  WriteJson(response, reply->status, reply->body);
}

}  // namespace bulwark::server
