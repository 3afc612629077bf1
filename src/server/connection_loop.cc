// The epoll connection loop (see connection_loop.h).
#include "server/connection_loop.h"

#include <absl/strings/str_cat.h>
#include <absl/synchronization/mutex.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "core/status_macros.h"
#include "server/tcp_socket.h"

namespace bulwark::server {
namespace {

constexpr uint64_t kListenTag = 0;  // epoll data of the listening socket
constexpr uint64_t kWakeTag = 1;    // epoll data of the eventfd; connections use their address
constexpr int kAcceptsPerWake = 64;
// What the loop waits for on a connection it owns (edge-triggered).
constexpr uint32_t kConnectionEvents = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
constexpr auto kSweepInterval = std::chrono::milliseconds(100);

int64_t Seconds(std::chrono::milliseconds t) { return std::max<int64_t>(1, t.count() / 1000); }

absl::Status CheckOptions(const ConnectionLoopOptions& o) {
  if (o.max_connections < 1 || o.max_connections > 1'000'000) {
    return absl::InvalidArgumentError("max_connections must be between 1 and 1000000");
  }
  if (o.threads < 1 || o.threads > 1024)
    return absl::InvalidArgumentError("threads must be between 1 and 1024");
  if (o.max_queued < 0 || o.max_queued > 100'000) {
    return absl::InvalidArgumentError("max_queued must be between 0 and 100000");
  }
  if (o.keep_alive_max_requests < 1 || o.idle_timeout.count() < 1 || o.request_timeout.count() < 1 ||
      o.write_timeout.count() < 1) {
    return absl::InvalidArgumentError("keep-alive and timeout settings must be positive");
  }
  if (o.continuation_wait.count() < 0 || o.continuation_wait > std::chrono::milliseconds(100)) {
    return absl::InvalidArgumentError("continuation_wait must be between 0 and 100 ms");
  }
  if (o.framing.max_request_line_bytes > o.framing.max_head_bytes) {
    return absl::InvalidArgumentError("max_request_line_bytes must not exceed max_head_bytes");
  }
  return absl::OkStatus();
}

}  // namespace

struct ConnectionLoop::Connection {
  using Phase = ConnectionLoop::Phase;
  Connection(int socket, std::string peer_address, const FramingLimits& limits)
      : fd(socket), peer(std::move(peer_address)), framer(limits) {}

  int fd;
  std::string peer;  // the client's IP address, as text ("" if unknown)
  Phase phase = Phase::kReading;
  std::string in;  // unconsumed input, from the first byte of the current request
  RequestFramer framer;
  std::string out;  // answer bytes not yet sent, from out_sent
  size_t out_sent = 0;
  bool close_after_write = false;
  bool sent_continue = false;
  bool request_started = false;  // a byte of the current request has arrived
  bool peer_closed = false;      // the client shut down its side while its request was served
  int served = 0;
  size_t drained = 0;                      // bytes discarded while lingering
  Clock::time_point deadline;              // of the current phase; none while dispatched
  std::list<Connection*>* list = nullptr;  // waiting_ or lingering_, per phase
  std::list<Connection*>::iterator position;
};

void ConnectionLoop::SetPhase(Connection& c, Phase phase) {
  if (c.list != nullptr) c.list->erase(c.position);
  c.phase = phase;
  c.list = c.phase == Phase::kReading ? &waiting_ : c.phase == Phase::kLingering ? &lingering_ : nullptr;
  if (c.list != nullptr) c.position = c.list->insert(c.list->end(), &c);
}

ConnectionLoop::ConnectionLoop(const ConnectionLoopOptions& options, ConnectionLoopCallbacks callbacks)
    : options_(options), callbacks_(std::move(callbacks)) {}

absl::StatusOr<std::unique_ptr<ConnectionLoop>> ConnectionLoop::Create(const ConnectionLoopOptions& options,
                                                                       ConnectionLoopCallbacks callbacks) {
  BULWARK_RETURN_IF_ERROR(CheckOptions(options));
  if (!callbacks.serve || !callbacks.refuse)
    return absl::InvalidArgumentError("serve and refuse are required");
  ConnectionLoopOptions fitted = options;
  fitted.max_connections = FitToDescriptorLimit(options.max_connections);
  std::unique_ptr<ConnectionLoop> loop(new ConnectionLoop(fitted, std::move(callbacks)));
  BULWARK_RETURN_IF_ERROR(loop->Listen());
  loop->pool_ = std::make_unique<WorkerPool>(options.threads, options.max_queued);
  return loop;
}

ConnectionLoop::~ConnectionLoop() {
  Stop();
  if (pool_) pool_->Shutdown();
  for (auto& [unused, c] : connections_) ::close(c->fd);
  for (int fd : {listen_fd_, epoll_fd_, wake_fd_}) {
    if (fd >= 0) ::close(fd);
  }
}

absl::Status ConnectionLoop::Listen() {
  BULWARK_ASSIGN_OR_RETURN(listen_fd_, ListenTcp(options_.host, options_.port, options_.listen_backlog));
  port_ = BoundPort(listen_fd_);
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  epoll_event listen_event{EPOLLIN, {.u64 = kListenTag}};
  epoll_event wake_event{EPOLLIN, {.u64 = kWakeTag}};
  if (epoll_fd_ < 0 || wake_fd_ < 0 ||
      ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listen_fd_, &listen_event) != 0 ||
      ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &wake_event) != 0) {
    return absl::InternalError(absl::StrCat("epoll setup failed: errno ", errno));
  }
  return absl::OkStatus();
}

void ConnectionLoop::Stop() {
  stopping_.store(true);
  const uint64_t one = 1;
  if (wake_fd_ >= 0) [[maybe_unused]]
    ssize_t n = ::write(wake_fd_, &one, sizeof(one));
}

absl::Status ConnectionLoop::Run() {
  epoll_event events[256];
  Clock::time_point last_sweep = Clock::now();
  while (!stopping_.load()) {
    const int n = ::epoll_wait(epoll_fd_, events, 256, static_cast<int>(kSweepInterval.count()));
    if (n < 0 && errno != EINTR) return absl::InternalError(absl::StrCat("epoll_wait failed: errno ", errno));
    for (int i = 0; i < n; ++i) HandleEvent(events[i]);
    const Clock::time_point now = Clock::now();
    if (now - last_sweep >= kSweepInterval) {
      Sweep(now);
      last_sweep = now;
    }
    closed_.clear();
  }
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, listen_fd_, nullptr);
  pool_->Shutdown();  // the requests the workers hold are finished; their answers are sent by them
  for (auto& [unused, c] : connections_) ::close(c->fd);
  waiting_.clear();
  lingering_.clear();
  connections_.clear();
  stats_.open.store(0);
  return absl::OkStatus();
}

void ConnectionLoop::HandleEvent(const epoll_event& event) {
  if (event.data.u64 == kListenTag) return Accept();
  if (event.data.u64 == kWakeTag) {
    uint64_t count;
    [[maybe_unused]] ssize_t n = ::read(wake_fd_, &count, sizeof(count));
    return TakeCompletions();
  }
  Connection& c = *static_cast<Connection*>(event.data.ptr);
  if (c.phase == Phase::kClosed) return;  // closed earlier in this batch
  if (c.phase == Phase::kDispatched) {    // its worker owns the socket until it answers
    if (event.events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) c.peer_closed = true;
    return;
  }
  if (event.events & EPOLLERR) return Close(c);
  if ((event.events & EPOLLOUT) && c.out_sent < c.out.size()) Write(c);
  if (!(event.events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP))) return;
  if (c.phase == Phase::kReading) {
    ReadAndFrame(c);
  } else if (c.phase == Phase::kLingering) {
    Drain(c);
  }
}

void ConnectionLoop::Accept() {
  for (int i = 0; i < kAcceptsPerWake; ++i) {
    sockaddr_storage address{};
    socklen_t address_size = sizeof(address);
    const int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&address), &address_size,
                             SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        // Out of descriptors: free one, or stop accepting briefly (the kernel backlog holds them).
        if (!EvictOldestWaiting()) {
          ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, listen_fd_, nullptr);
          accept_paused_ = true;
          accept_resume_ = Clock::now() + std::chrono::milliseconds(50);
        }
      }
      return;
    }
    if (static_cast<int>(connections_.size()) >= options_.max_connections && !EvictOldestWaiting()) {
      ShedAtAccept(fd);
      continue;
    }
    Admit(fd, PeerAddressText(address));
  }
}

void ConnectionLoop::Admit(int fd, std::string peer) {
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  auto owned = std::make_unique<Connection>(fd, std::move(peer), options_.framing);
  Connection& c = *owned;
  epoll_event event{kConnectionEvents, {.ptr = &c}};
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event) != 0) {
    ::close(fd);
    return;
  }
  connections_.emplace(&c, std::move(owned));
  stats_.open.fetch_add(1);
  SetPhase(c, Phase::kReading);
  c.deadline = Clock::now() + options_.idle_timeout;
  ReadAndFrame(c);  // edge-triggered: the request may already be here
}

void ConnectionLoop::Watch(Connection& c, uint32_t events) {
  epoll_event event{events | EPOLLET, {.ptr = &c}};
  // Re-arming reports what is already pending (the kernel re-checks readiness on MOD).
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, c.fd, &event) != 0) {
    spdlog::warn("epoll_ctl(MOD) failed for a connection: errno {}", errno);
  }
}

void ConnectionLoop::ShedAtAccept(int fd) {
  stats_.shed_total.fetch_add(1);
  const std::string answer =
      callbacks_.refuse(Refusal{503, "overloaded", "the server is overloaded; retry later", ""});
  char sink[4096];  // what already arrived, so that closing is less likely to reset the connection
  [[maybe_unused]] ssize_t n = ::recv(fd, sink, sizeof(sink), MSG_DONTWAIT);
  SendSome(fd, answer);
  ::shutdown(fd, SHUT_WR);
  ::close(fd);
}

void ConnectionLoop::ReadAndFrame(Connection& c) {
  if (!c.in.empty() && Frame(c)) return;  // a pipelined request, already buffered
  char buffer[kReadChunk];
  while (c.phase == Phase::kReading) {
    const ssize_t n = ::recv(c.fd, buffer, sizeof(buffer), 0);
    if (n > 0) {
      if (!c.request_started) {
        c.request_started = true;
        c.deadline = Clock::now() + options_.request_timeout;
      }
      c.in.append(buffer, static_cast<size_t>(n));
      if (Frame(c)) return;
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return;
    } else {
      return Close(c);  // end of stream or error: a partial request is abandoned
    }
  }
}

bool ConnectionLoop::Frame(Connection& c) {
  switch (c.framer.Parse(c.in)) {
    case RequestFramer::Result::kComplete:
      Dispatch(c);
      return true;
    case RequestFramer::Result::kError: {
      stats_.refused_total.fetch_add(1);
      const FramingError& e = c.framer.error();
      Refuse(c, Refusal{e.status, e.code, e.message, c.framer.request().method});
      return true;
    }
    case RequestFramer::Result::kNeedMore:
      break;
  }
  if (c.framer.awaiting_body() && c.framer.request().expect_continue && !c.sent_continue) {
    c.sent_continue = true;
    c.out.append("HTTP/1.1 100 Continue\r\n\r\n");
    Write(c);
  }
  return c.phase != Phase::kReading;
}

FramedRequest ConnectionLoop::TakeFramed(Connection& c) {
  FramedRequest request = c.framer.TakeRequest();
  c.in.erase(0, c.framer.consumed());  // what is left is the next, pipelined request
  c.framer.Reset();
  c.sent_continue = false;
  c.request_started = false;
  if (++c.served >= options_.keep_alive_max_requests) request.keep_alive = false;
  return request;
}

void ConnectionLoop::Dispatch(Connection& c) {
  FramedRequest request = TakeFramed(c);
  const std::string method = request.method;
  // An interim answer still unsent goes first: the worker then leaves all sending to the loop.
  const bool worker_sends = c.out_sent == c.out.size();
  const bool queued =
      pool_->TrySubmit([this, connection = &c, worker_sends, request = std::move(request)]() mutable {
        ServeOnWorker(*connection, worker_sends, std::move(request));
      });
  if (queued) {
    // The worker owns the socket now: stop the loop being woken by the client's next request (or
    // by the worker's sends) while it does; a hang-up is still reported (EPOLLRDHUP, EPOLLHUP).
    Watch(c, EPOLLRDHUP);
    return SetPhase(c, Phase::kDispatched);
  }
  stats_.shed_total.fetch_add(1);
  Refuse(c, Refusal{503, "overloaded", "the server is overloaded; retry later", method});
}

// While dispatched, the loop does not touch the connection's socket, input, framer or counters
// (HandleEvent only notes peer_closed, Sweep and eviction skip it), so the worker may use them;
// PostCompletion's mutex orders its writes before the loop's next reads.
void ConnectionLoop::ServeOnWorker(Connection& c, bool worker_sends, FramedRequest request) {
  while (true) {
    request.peer_address = c.peer;
    WireAnswer answer = callbacks_.serve(request);
    const ssize_t sent = worker_sends ? SendSome(c.fd, answer.bytes) : 0;
    answer.bytes.erase(0, static_cast<size_t>(std::max<ssize_t>(sent, 0)));
    bool close = answer.close || sent < 0;
    const bool all_sent = worker_sends && answer.bytes.empty();
    if (close || !all_sent || !TakeNextRequest(c, &request, &close)) {
      return PostCompletion(Completion{&c, std::move(answer.bytes), close});
    }
  }
}

bool ConnectionLoop::TakeNextRequest(Connection& c, FramedRequest* request, bool* close) {
  if (options_.continuation_wait.count() == 0 || stopping_.load() ||
      c.served >= options_.keep_alive_max_requests) {
    return false;
  }
  if (c.in.empty()) {
    if (pool_->queued() > 0) return false;  // others wait for a worker: hand this one back
    pollfd ready{c.fd, POLLIN, 0};
    const auto wait = std::chrono::duration_cast<std::chrono::nanoseconds>(options_.continuation_wait);
    const timespec timeout{0, static_cast<long>(wait.count())};
    if (::ppoll(&ready, 1, &timeout, nullptr) <= 0) return false;  // silent (or EINTR): the loop waits
    char buffer[kReadChunk];
    while (true) {
      const ssize_t n = ::recv(c.fd, buffer, sizeof(buffer), MSG_DONTWAIT);
      if (n > 0) {
        c.in.append(buffer, static_cast<size_t>(n));
        if (static_cast<size_t>(n) < sizeof(buffer)) break;
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        break;
      } else {
        *close = true;  // end of stream or error: the loop lingers and closes
        return false;
      }
    }
  }
  // Anything but a complete request (more to come, or a framing error) goes back to the loop,
  // which parses the same bytes again (the framer's result is sticky) under its deadlines.
  if (c.framer.Parse(c.in) != RequestFramer::Result::kComplete) return false;
  *request = TakeFramed(c);
  return true;
}

void ConnectionLoop::PostCompletion(Completion completion) {
  bool wake;
  {
    absl::MutexLock lock(&completions_mu_);
    wake = completions_.empty();
    completions_.push_back(std::move(completion));
  }
  const uint64_t one = 1;
  if (wake) [[maybe_unused]]
    ssize_t n = ::write(wake_fd_, &one, sizeof(one));
}

void ConnectionLoop::TakeCompletions() {
  std::vector<Completion> done;
  {
    absl::MutexLock lock(&completions_mu_);
    done.swap(completions_);
  }
  const Clock::time_point now = Clock::now();
  for (Completion& d : done) {
    Connection& c = *d.connection;
    Watch(c, kConnectionEvents);
    c.out.erase(0, c.out_sent);
    c.out_sent = 0;
    c.out.append(d.unsent);
    c.close_after_write = d.close || c.peer_closed;
    SetPhase(c, Phase::kWriting);
    c.deadline = now + options_.write_timeout;
    Write(c);
  }
}

void ConnectionLoop::Write(Connection& c) {
  const ssize_t n = SendSome(c.fd, std::string_view(c.out).substr(c.out_sent));
  if (n < 0) return Close(c);
  c.out_sent += static_cast<size_t>(n);
  if (c.out_sent < c.out.size()) return;  // the next EPOLLOUT edge resumes
  c.out.clear();
  c.out_sent = 0;
  if (c.phase != Phase::kWriting) return;  // an interim 100 Continue
  if (c.close_after_write) return StartLinger(c);
  AfterAnswer(c);
}

void ConnectionLoop::AfterAnswer(Connection& c) {
  SetPhase(c, Phase::kReading);
  c.request_started = !c.in.empty();
  c.deadline = Clock::now() + (c.request_started ? options_.request_timeout : options_.idle_timeout);
  ReadAndFrame(c);  // edge-triggered: what arrived while the request was served raised no new event
}

void ConnectionLoop::Refuse(Connection& c, Refusal refusal) {
  c.out.erase(0, c.out_sent);
  c.out_sent = 0;
  c.out.append(callbacks_.refuse(refusal));
  c.in.clear();
  c.close_after_write = true;
  SetPhase(c, Phase::kWriting);
  c.deadline = Clock::now() + options_.write_timeout;
  Write(c);
}

void ConnectionLoop::StartLinger(Connection& c) {
  ::shutdown(c.fd, SHUT_WR);
  SetPhase(c, Phase::kLingering);
  c.deadline = Clock::now() + kLingerTime;
  c.in = std::string();
  Drain(c);
}

void ConnectionLoop::Drain(Connection& c) {
  char sink[kReadChunk];
  while (true) {
    const ssize_t n = ::recv(c.fd, sink, sizeof(sink), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n <= 0) return Close(c);  // the client closed too (or failed)
    c.drained += static_cast<size_t>(n);
    if (c.drained > kLingerBytes) return Close(c);
  }
}

void ConnectionLoop::Close(Connection& c) {
  ::close(c.fd);  // also leaves the epoll set
  c.fd = -1;
  SetPhase(c, Phase::kClosed);
  auto it = connections_.find(&c);
  closed_.push_back(std::move(it->second));  // events later in this batch may still name it
  connections_.erase(it);
  stats_.open.fetch_sub(1);
}

bool ConnectionLoop::EvictOldestWaiting() {
  Connection* victim = !lingering_.empty() ? lingering_.front()
                       : !waiting_.empty() ? waiting_.front()
                                           : nullptr;
  if (victim == nullptr) return false;
  stats_.evicted_total.fetch_add(1);
  if (victim->phase == Phase::kReading && victim->request_started) {
    SendSome(victim->fd, callbacks_.refuse(Refusal{503, "overloaded", "the server is overloaded; retry later",
                                                   victim->framer.request().method}));
  }
  Close(*victim);
  return true;
}

void ConnectionLoop::Sweep(Clock::time_point now) {
  if (accept_paused_ && now >= accept_resume_) {
    epoll_event listen_event{EPOLLIN, {.u64 = kListenTag}};
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listen_fd_, &listen_event);
    accept_paused_ = false;
  }
  std::vector<Connection*> expired;
  for (auto& [unused, c] : connections_) {
    if (c->phase != Phase::kDispatched && now >= c->deadline) expired.push_back(c.get());
  }
  for (Connection* c : expired) {
    if (c->phase == Phase::kReading && c->request_started) {
      stats_.timed_out_total.fetch_add(1);
      Refuse(*c, Refusal{408, "request_timeout",
                         absl::StrCat("the request did not arrive within ", Seconds(options_.request_timeout),
                                      " s"),
                         c->framer.request().method});
    } else if (c->phase == Phase::kWriting) {
      stats_.timed_out_total.fetch_add(1);
      Close(*c);
    } else if (c->phase != Phase::kClosed) {
      Close(*c);  // idle past its keep-alive time, or done lingering
    }
  }
}

}  // namespace bulwark::server
