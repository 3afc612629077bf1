// HttpServer: Bulwark's HTTP/1.1 JSON service (doc/api.md) on cpp-httplib. It owns the listening
// socket, a bounded worker pool (connection_queue.h), the route table, the per-key rate limiter and
// the metrics; the store, principal registry and audit log are the caller's.
//
// Every request goes through one path (Dispatch): shed if overloaded (503) -> route (404/405) ->
// authenticate (401) -> rate limit (429) -> handler -> JSON answer. Errors are absl::Status values
// mapped to HTTP in api_status.h; no exception escapes a handler. Bodies above max_body_bytes are
// refused with 413 and header sections above max_header_bytes with 431, before any handler runs;
// each request reads at most their sum from the socket (socket_stream.h).
//
//   auto server = HttpServer::Create(options, backends);
//   auto port = (*server)->Bind();          // the listening port (chosen when options.port == 0)
//   std::thread t([&] { (*server)->Serve(); });
//   ...
//   (*server)->Stop();  t.join();
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include <absl/status/status.h>
#include <absl/status/statusor.h>

#include "server/connection_queue.h"
#include "server/credential_cache.h"
#include "server/metrics.h"
#include "server/rate_limiter.h"
#include "server/service.h"

namespace bulwark::server {

struct ServerOptions {
  std::string host = "127.0.0.1";       // listen address; loopback by default
  int port = 8420;                      // 0 picks a free port (Bind returns it)
  int threads = 32;                     // workers; each serves one keep-alive connection at a time; 1 .. 1024
  int max_queued_connections = 64;      // accepted connections waiting for a worker; more are shed (503)
  size_t max_body_bytes = 1 << 20;      // larger bodies get 413; 1 KiB .. 64 MiB
  size_t max_header_bytes = 64 << 10;   // request line + headers; more gets 431 and a closed connection
  RequestLimits limits;                 // k, batch size, JSON depth, list limits
  double rate_per_second = 50;          // per API key; <= 0 disables rate limiting
  double burst = 100;                   // token bucket capacity, >= 1
  int keep_alive_max_requests = 10000;  // requests per connection before the server closes it
  int keep_alive_timeout_s = 5;         // idle time before a keep-alive connection is closed
  int read_timeout_s = 5;               // per read of a request
  int write_timeout_s = 5;              // per write of a response
  int listen_backlog = 1024;            // kernel queue of not-yet-accepted connections
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
  const ConnectionQueueStats& queue_stats() const { return queue_stats_; }

 private:
  class HttplibServer;
  HttpServer(const ServerOptions& options, const ServiceBackends& backends);
  void InstallRoutes();
  // The single request path; fills `response`. Never throws.
  void Dispatch(const httplib::Request& request, httplib::Response& response);
  void Answer(const httplib::Request& request, httplib::Response& response, std::string* route_label);
  std::vector<Sample> Gauges() const;

  ServerOptions options_;
  ServiceContext context_;
  Metrics metrics_;
  RateLimiter limiter_;
  CredentialCache credentials_;
  ConnectionQueueStats queue_stats_;
  RouteTable table_;
  std::vector<RouteSpec> routes_;  // parallel to table_
  std::unique_ptr<DefendedRetriever> default_retriever_;  // when the backends bring none
  std::unique_ptr<HttplibServer> http_;
  std::atomic<bool> bound_{false};
};

}  // namespace bulwark::server
