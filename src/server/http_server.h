// HttpServer: Bulwark's HTTP/1.1 JSON service (doc/api.md). It owns the connection layer
// (connection_loop.h: one epoll thread for every connection, strict RFC 9112 framing in
// request_framing.h, a bounded worker pool), the route table, the per-key rate limiter and the
// metrics; the store, principal registry and audit log are the caller's. Requests and answers are
// httplib::Request / httplib::Response values, so handlers and the router do not see the wire.
//
// A request reaches a handler only once it has arrived completely, within request_timeout_s of its
// first byte. Malformed or ambiguous framing is refused (400, 413, 414, 417, 431, 501, 505) with
// the connection closed; when every worker is busy and max_queued_connections requests wait, new
// requests are answered 503 at once. Every complete request then goes through one path (Dispatch):
// route (404/405) -> authenticate (401) -> rate limit (429) -> handler -> JSON answer. Errors are
// absl::Status values mapped to HTTP in api_status.h; no exception escapes a handler.
//
//   auto server = HttpServer::Create(options, backends);
//   auto port = (*server)->Bind();          // the listening port (chosen when options.port == 0)
//   std::thread t([&] { (*server)->Serve(); });
//   ...
//   (*server)->Stop();  t.join();
#pragma once

#include <absl/status/status.h>
#include <absl/status/statusor.h>

#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include "server/connection_loop.h"
#include "server/credential_cache.h"
#include "server/metrics.h"
#include "server/rate_limiter.h"
#include "server/service.h"
#include "server/stats_series.h"

namespace bulwark::server {

struct ServerOptions {
  std::string host = "127.0.0.1";      // listen address; loopback by default
  int port = 8420;                     // 0 picks a free port (Bind returns it)
  int threads = 32;                    // workers; each runs one request's handler at a time; 1 .. 1024
  int max_queued_connections = 64;     // complete requests waiting for a worker; more are shed (503)
  int max_connections = 1024;          // open connections; at the limit the longest-waiting one is
                                       // closed for a new one; 1 .. 1,000,000 (and RLIMIT_NOFILE)
  size_t max_body_bytes = 1 << 20;     // larger bodies get 413; 1 KiB .. 64 MiB
  size_t max_header_bytes = 64 << 10;  // request line + headers; more gets 431 and a closed connection
  RequestLimits limits;                // k, batch size, JSON depth, list limits
  double rate_per_second = 50;         // per API key; <= 0 disables rate limiting
  double burst = 100;                  // token bucket capacity, >= 1
  // Audit records of failed authentications (401) per client address: a token bucket of this
  // rate and burst. Beyond it a 401 is still answered, and counted in
  // bulwark_refusals_unaudited_total instead of appending a record, so that a flood of bad keys
  // cannot fill the audit log. The same bound applies to the session_blocked refusals of each
  // principal (the honeypot monitor's). <= 0: every refusal is audited.
  double refusal_audit_rate = 5;
  double refusal_audit_burst = 50;
  int keep_alive_max_requests = 10000;  // requests per connection before the server closes it
  int keep_alive_timeout_s = 5;         // idle time before a connection's next request starts
  int request_timeout_s = 10;           // total time from a request's first byte to its last (408)
  int write_timeout_s = 5;              // total time to send one answer
  // How long a worker that answered waits for the same connection's next request (connection_loop.h;
  // 0 disables); 0 .. 100,000.
  int continuation_wait_us = 500;
  int listen_backlog = 1024;  // kernel queue of not-yet-accepted connections
  // How long an authenticated API key is remembered (credential_cache.h). Revocations through the
  // API apply at once; offline ones (`bulwark principals revoke`) within this time. 0 disables.
  int credential_cache_ms = 1000;
  // Requests without an API key act as an admin on every namespace. For local development only;
  // the serve command refuses it on a non-loopback host and warns on every start.
  bool insecure_dev = false;
};

class HttpServer {
 public:
  // InvalidArgument for options out of range or a missing backend (store and registry are required;
  // audit may be null, then searches are not audited and GET /v1/audit answers 503).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<HttpServer>> Create(const ServerOptions& options,
                                                                          const ServiceBackends& backends);
  ~HttpServer();

  // Binds the listening socket. Returns the bound port. Unavailable if the address is taken.
  [[nodiscard]] absl::StatusOr<int> Bind();
  // Serves until Stop() (from any thread). Returns after the workers have finished. Requires Bind.
  [[nodiscard]] absl::Status Serve();
  // Stops accepting and makes Serve return. Thread-safe; idempotent.
  void Stop();

  const Metrics& metrics() const { return metrics_; }
  // The connection layer's counters; null before Bind.
  const ConnectionStats* connection_stats() const { return loop_ ? &loop_->stats() : nullptr; }

 private:
  // Charges `key_id`'s rate-limit bucket for the work of a request beyond one token's share.
  void ChargeWork(std::string_view key_id, int64_t handler_us, size_t answer_bytes);
  HttpServer(const ServerOptions& options, const ServiceBackends& backends);
  void InstallRoutes();
  // The connection loop's callbacks: a complete request's answer (on a worker), and the answer to
  // a request refused before any handler (on the loop thread).
  WireAnswer ServeRequest(FramedRequest& framed);
  std::string RefuseRequest(const Refusal& refusal);
  // The single request path; fills `response`. Never throws.
  void Dispatch(const httplib::Request& request, httplib::Response& response);
  void Answer(const httplib::Request& request, httplib::Response& response, std::string* route_label);
  // For a route that needs authentication: authenticates the caller into *caller and takes a
  // rate-limit token. On a refusal (401/403, audited within the bounds; 429) writes the answer
  // and returns false. True at once for a public route (*caller stays empty).
  bool Admit(const httplib::Request& request, const RouteSpec& route, httplib::Response& response,
             std::optional<Caller>* caller);
  // Writes a handler's reply: its JSON body or text, or its error (401/403 audited within the
  // bounds; 500 logged).
  void WriteReply(const httplib::Request& request, const RouteSpec& route, const Caller* caller,
                  absl::StatusOr<Reply> reply, httplib::Response& response);
  // Answers a request refused for its headers before authentication (request_guards.h): under
  // --insecure-dev a foreign Host/Origin (403), and a body not declared JSON (415) unless the
  // route takes another body. True if so.
  bool RefusedByHeaders(const httplib::Request& request, const RouteSpec& route,
                        httplib::Response& response) const;
  // Appends a "refused" audit record when `status` answers 401 or 403 (issue #18 point 8): the
  // principal (if authenticated), the key id presented, method, route and error code.
  void RecordRefusal(const httplib::Request& request, std::string_view route, const Caller* caller,
                     const absl::Status& status);
  std::vector<Sample> Gauges() const;
  // The counters the dashboard's time series samples (stats_series.h), and GET /v1/admin/stats.
  StatsCounters CurrentCounters() const;
  nlohmann::json StatsJson();

  ServerOptions options_;
  ServiceContext context_;
  Metrics metrics_;
  RateLimiter limiter_;
  RateLimiter refusal_audits_;  // per client address (ServerOptions::refusal_audit_rate)
  std::atomic<int64_t> unaudited_refusals_{0};
  CredentialCache credentials_;
  RouteTable table_;
  std::vector<RouteSpec> routes_;                         // parallel to table_
  std::unique_ptr<DefendedRetriever> default_retriever_;  // when the backends bring none
  std::unique_ptr<ConnectionLoop> loop_;                  // created by Bind
  // 10-s windows over the last hour (360 samples of 208 bytes), for the dashboard's health charts.
  StatsSeries stats_{10'000'000, 360, [this] { return CurrentCounters(); }};
};

}  // namespace bulwark::server
