// ConnectionLoop: the server's connection layer. One thread (the one calling Run) owns the
// listening socket and every connection through epoll: it accepts, reads, frames requests
// (request_framing.h), enforces deadlines and writes what is left of answers. Only complete
// requests go to the WorkerPool (worker_pool.h); a worker runs the handler, sends the answer
// itself when the socket takes it at once, and hands the connection back.
//
// Keep-alive continuation: after answering, the worker waits up to `continuation_wait` (default
// 500 us, and only while no other request waits for a worker) for the same client's next request
// and serves it too when it arrives complete. A client that sends its next request as soon as it
// has the answer (an agent's burst, a closed-loop benchmark) then costs one thread wake-up per
// request instead of three (loop -> worker -> loop -> loop); anything else (a partial request, a
// framing error, the end of the stream, a silent client) goes back to the loop, which re-frames
// the buffered bytes under its deadlines. A worker spends at most `continuation_wait` per answer
// on this, and never while the queue holds work (measured in bench/RESULTS.md).
//
// Why this design (issue #18): the previous server gave each keep-alive connection a worker thread
// for its whole life and timed reads per byte, so 32 connections that each sent one header byte
// every 3 s held all 32 workers and /healthz timed out for as long as they lasted. Here a connection
// costs a worker only while its handler runs; waiting connections cost a file descriptor and their
// buffered bytes. Each request must arrive within one total deadline (request_timeout, from its
// first byte to its last; idle_timeout before that first byte), so a slow client is closed on a
// schedule it cannot stretch. Refusals cost microseconds on the loop thread: a 503 for a full
// worker queue, a 4xx for a malformed request and a 408 for a missed deadline are written without
// blocking, then the connection is half-closed and its remaining input discarded for at most
// kLingerTime (so the client reads the answer instead of a reset) without holding any thread.
// When max_connections are open, a new connection takes the slot of a lingering one or else of the
// one that has been waiting longest for its request (idle or slow: an attacker's connections are
// the old ones; found in O(1) from a list kept in arrival order); only when every slot is busy with
// a handler is the new connection answered 503 and closed at once.
//
// Why not Boost.Beast, libmicrohttpd or h2o: the router and handlers speak httplib::Request /
// Response, which an own loop can fill directly; the limits that matter here (total deadlines,
// no thread per slow client, bounded shedding, strict RFC 9112 framing) would still have to be
// configured or added around any of them, and their framing strictness depends on the Debian
// version. A loop of a few hundred lines over epoll, with its framer fuzzed on its own
// (fuzz/request_framing_fuzz.cc), is smaller than that glue and fully under our tests.
#pragma once

#include <absl/base/thread_annotations.h>
#include <absl/status/status.h>
#include <absl/status/statusor.h>
#include <absl/synchronization/mutex.h>
#include <sys/epoll.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "server/request_framing.h"
#include "server/worker_pool.h"

namespace bulwark::server {

struct ConnectionLoopOptions {
  std::string host = "127.0.0.1";
  int port = 0;                         // 0 picks a free port
  int listen_backlog = 1024;            // kernel queue of not-yet-accepted connections
  int max_connections = 1024;           // open connections; 1 .. 1,000,000 (also bounded by RLIMIT_NOFILE)
  int threads = 32;                     // workers (handlers running at once)
  int max_queued = 64;                  // complete requests waiting for a worker; beyond: 503
  int keep_alive_max_requests = 10000;  // requests per connection, then it is closed
  std::chrono::milliseconds idle_timeout{5000};      // accept or previous answer -> first byte of a request
  std::chrono::milliseconds request_timeout{10000};  // first byte of a request -> its last byte (408 after)
  std::chrono::milliseconds write_timeout{5000};     // to send one answer
  // How long a worker that has answered waits for the same connection's next request (0: never;
  // at most 100 ms).
  std::chrono::microseconds continuation_wait{500};
  FramingLimits framing;
};

// A complete answer as bytes on the wire.
struct WireAnswer {
  std::string bytes;
  bool close = false;  // close the connection after sending it
};

// A request the loop refuses itself, before or instead of a handler.
struct Refusal {
  int status = 400;
  std::string code;  // API error code ("bad_request", "overloaded", "request_timeout", ...)
  std::string message;
  std::string method;  // of the request, when its line was read; else ""
};

struct ConnectionLoopCallbacks {
  // Runs on a worker for each complete request. Must not throw.
  std::function<WireAnswer(FramedRequest&)> serve;
  // Runs on the loop thread: the complete answer (with `Connection: close`) to a refusal. Must be
  // fast and must not block or throw.
  std::function<std::string(const Refusal&)> refuse;
};

// Counters of the loop, read by /metrics from any thread.
struct ConnectionStats {
  std::atomic<int64_t> open{0};             // connections open
  std::atomic<int64_t> shed_total{0};       // answered 503 because the workers and queue were full
  std::atomic<int64_t> timed_out_total{0};  // closed because a request or an answer missed its deadline
  std::atomic<int64_t> evicted_total{0};    // closed to make room for a new connection
  std::atomic<int64_t> refused_total{0};    // malformed or oversized requests answered 4xx/5xx
};

class ConnectionLoop {
 public:
  // Creates the listening socket (non-blocking, loopback or `host`), the epoll set and the workers.
  // InvalidArgument for options out of range or a host that is not an IPv4/IPv6 address;
  // Unavailable if the address cannot be bound.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<ConnectionLoop>> Create(
      const ConnectionLoopOptions& options, ConnectionLoopCallbacks callbacks);
  ~ConnectionLoop();

  int port() const { return port_; }  // the bound port
  // Serves until Stop(); then stops accepting, lets the workers finish the requests they hold,
  // and closes every connection. OK, or Internal if epoll fails.
  [[nodiscard]] absl::Status Run();
  // Makes Run return. Thread-safe; idempotent; may be called before Run.
  void Stop();

  const ConnectionStats& stats() const { return stats_; }
  int64_t workers_active() const { return pool_->active(); }
  int64_t requests_queued() const { return pool_->queued(); }

 private:
  struct Connection;
  // A connection reads a request (or waits for one), is served by a worker, writes an answer, and
  // after a refusal or `Connection: close` lingers: half-closed, discarding input, until closed.
  enum class Phase { kReading, kDispatched, kWriting, kLingering, kClosed };
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::milliseconds kLingerTime{1000};
  static constexpr size_t kLingerBytes = 8 << 20;
  static constexpr size_t kReadChunk = 16 << 10;

  ConnectionLoop(const ConnectionLoopOptions& options, ConnectionLoopCallbacks callbacks);
  absl::Status Listen();
  void HandleEvent(const epoll_event& event);
  void Accept();
  void Admit(int fd, std::string peer);
  // Sets the epoll events the loop is woken for on `c` (always edge-triggered).
  void Watch(Connection& c, uint32_t events);
  void ReadAndFrame(Connection& c);
  bool Frame(Connection& c);  // true when the connection left the reading state
  void Dispatch(Connection& c);
  // Runs on a worker: serves `request` and, while TakeNextRequest finds one, the connection's next
  // requests; then hands the connection back with what it could not send.
  void ServeOnWorker(Connection& c, bool worker_sends, FramedRequest request);
  // On a worker that has sent a whole keep-alive answer: true and the next request in `request`
  // when one is complete within continuation_wait; false to hand the connection back (with
  // `*close` set when the client's stream ended or failed).
  bool TakeNextRequest(Connection& c, FramedRequest* request, bool* close);
  // Counts one request taken off the framer: resets the framer, drops its bytes from `in`.
  FramedRequest TakeFramed(Connection& c);
  void TakeCompletions();
  void AfterAnswer(Connection& c);
  void Refuse(Connection& c, Refusal refusal);
  void Write(Connection& c);
  void StartLinger(Connection& c);
  void Drain(Connection& c);
  void Close(Connection& c);
  // Moves `c` to `phase`, keeping waiting_ and lingering_ in order of arrival there.
  void SetPhase(Connection& c, Phase phase);
  bool EvictOldestWaiting();
  void Sweep(Clock::time_point now);
  void ShedAtAccept(int fd);

  const ConnectionLoopOptions options_;
  const ConnectionLoopCallbacks callbacks_;
  ConnectionStats stats_;
  int port_ = 0;
  int listen_fd_ = -1;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;  // eventfd: completions posted, or Stop
  bool accept_paused_ = false;
  Clock::time_point accept_resume_{};
  std::atomic<bool> stopping_{false};
  std::unordered_map<Connection*, std::unique_ptr<Connection>> connections_;  // loop thread only
  std::vector<std::unique_ptr<Connection>> closed_;                           // freed after each epoll batch
  std::list<Connection*> waiting_;    // reading a request or idle, longest-waiting first
  std::list<Connection*> lingering_;  // answered and closing, oldest first
  std::unique_ptr<WorkerPool> pool_;

  // A worker's result, handed back to the loop.
  struct Completion {
    Connection* connection;
    std::string unsent;  // what the worker could not send at once
    bool close;
  };
  absl::Mutex completions_mu_;
  std::vector<Completion> completions_ ABSL_GUARDED_BY(completions_mu_);
  void PostCompletion(Completion completion);
};

}  // namespace bulwark::server
