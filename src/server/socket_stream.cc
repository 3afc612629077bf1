// A budgeted, buffered socket stream for httplib (see socket_stream.h).
#include "server/socket_stream.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

namespace bulwark::server {
namespace {

// poll() for `events` for up to `timeout_ms`, retrying on EINTR. True if ready.
bool PollFor(socket_t sock, short events, int timeout_ms) {
  pollfd p{sock, events, 0};
  while (true) {
    int n = ::poll(&p, 1, timeout_ms);
    if (n < 0 && errno == EINTR) continue;
    return n > 0;
  }
}

ssize_t RecvRetryingEintr(socket_t sock, char* buffer, size_t size, int flags) {
  ssize_t n;
  do {
    n = ::recv(sock, buffer, size, flags);
  } while (n < 0 && errno == EINTR);
  return n;
}

int ToMillis(std::chrono::microseconds t) {
  return static_cast<int>(std::clamp<int64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(t).count(), 1, 24 * 3600 * 1000));
}

void Describe(const sockaddr_storage& addr, std::string& ip, int& port) {
  char text[INET6_ADDRSTRLEN] = {};
  if (addr.ss_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&addr);
    inet_ntop(AF_INET, &a->sin_addr, text, sizeof(text));
    port = ntohs(a->sin_port);
  } else if (addr.ss_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&addr);
    inet_ntop(AF_INET6, &a->sin6_addr, text, sizeof(text));
    port = ntohs(a->sin6_port);
  }
  ip = text;
}

}  // namespace

BudgetedSocketStream::BudgetedSocketStream(socket_t sock, std::chrono::microseconds read_timeout,
                                           std::chrono::microseconds write_timeout)
    : sock_(sock), read_timeout_ms_(ToMillis(read_timeout)), write_timeout_ms_(ToMillis(write_timeout)) {}

void BudgetedSocketStream::StartRequest(size_t header_budget, size_t body_budget) {
  budget_ = header_budget;
  body_budget_ = body_budget;
  in_headers_ = true;
  tail_ = 0;
  line_start_.clear();
  body_framed_ = false;
  exceeded_ = false;
}

void BudgetedSocketStream::ScanHeaderByte(char c) {
  tail_ = (tail_ << 8) | static_cast<uint8_t>(c);
  if (c == '\n') {
    line_start_.clear();
    return;
  }
  if (line_start_.size() < 18) {
    line_start_ += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (line_start_ == "content-length:" || line_start_ == "transfer-encoding:") body_framed_ = true;
  }
}

bool BudgetedSocketStream::is_readable() const {
  return buffer_begin_ < buffer_end_ || PollFor(sock_, POLLIN, read_timeout_ms_);
}

bool BudgetedSocketStream::is_writable() const { return PollFor(sock_, POLLOUT, write_timeout_ms_); }

ssize_t BudgetedSocketStream::read(char* ptr, size_t size) {
  if (size == 0) return 0;
  if (!Flush()) return -1;
  if (!in_headers_ && !body_framed_) return 0;  // no body (RFC 9112 6.3)
  if (budget_ == 0) {
    exceeded_ = true;
    return -1;
  }
  size = std::min(size, budget_);
  if (buffer_begin_ == buffer_end_) {
    // Most reads of a keep-alive request find its bytes already there: poll only when they are not.
    ssize_t n = RecvRetryingEintr(sock_, buffer_, kBufferSize, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!PollFor(sock_, POLLIN, read_timeout_ms_)) return -1;
      n = RecvRetryingEintr(sock_, buffer_, kBufferSize, 0);
    }
    if (n <= 0) return n;
    buffer_begin_ = 0;
    buffer_end_ = static_cast<size_t>(n);
  }
  size_t n = std::min(size, buffer_end_ - buffer_begin_);
  bool headers_ended = false;
  if (in_headers_) {
    // Deliver up to the end of the headers only, so the body is counted against its own budget.
    for (size_t i = 0; i < n && !headers_ended; ++i) {
      ScanHeaderByte(buffer_[buffer_begin_ + i]);
      headers_ended = tail_ == 0x0d0a0d0a || (tail_ & 0xffff) == 0x0a0a;
      if (headers_ended) n = i + 1;
    }
  }
  std::memcpy(ptr, buffer_ + buffer_begin_, n);
  buffer_begin_ += n;
  budget_ -= n;
  if (headers_ended) {
    in_headers_ = false;
    budget_ = body_budget_;
  }
  return static_cast<ssize_t>(n);
}

ssize_t BudgetedSocketStream::write(const char* ptr, size_t size) {
  pending_output_.append(ptr, size);
  if (pending_output_.size() >= kMaxPendingOutput && !Flush()) return -1;
  return static_cast<ssize_t>(size);
}

bool BudgetedSocketStream::Flush() {
  size_t sent = 0;
  while (sent < pending_output_.size()) {
    ssize_t n = ::send(sock_, pending_output_.data() + sent, pending_output_.size() - sent,
                       MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (PollFor(sock_, POLLOUT, write_timeout_ms_)) continue;
    }
    if (n <= 0) {
      pending_output_.clear();
      return false;
    }
    sent += static_cast<size_t>(n);
  }
  pending_output_.clear();
  return true;
}

BudgetedSocketStream::Address BudgetedSocketStream::AddressOf(socket_t sock,
                                                              int (*query)(int, sockaddr*, socklen_t*)) {
  Address a;
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  if (query(sock, reinterpret_cast<sockaddr*>(&addr), &len) == 0) Describe(addr, a.ip, a.port);
  return a;
}

void BudgetedSocketStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  if (!remote_) remote_ = AddressOf(sock_, getpeername);
  ip = remote_->ip;
  port = remote_->port;
}

void BudgetedSocketStream::get_local_ip_and_port(std::string& ip, int& port) const {
  if (!local_) local_ = AddressOf(sock_, getsockname);
  ip = local_->ip;
  port = local_->port;
}

void LingeringClose(socket_t sock, std::chrono::milliseconds max_wait, size_t max_bytes) {
  ::shutdown(sock, SHUT_WR);
  const auto deadline = std::chrono::steady_clock::now() + max_wait;
  char sink[16384];
  for (size_t drained = 0; drained < max_bytes;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || !PollFor(sock, POLLIN, static_cast<int>(left.count()))) break;
    ssize_t n = ::recv(sock, sink, sizeof(sink), 0);
    if (n <= 0) break;  // the client closed too
    drained += static_cast<size_t>(n);
  }
  ::close(sock);
}

bool WaitForRequest(socket_t sock, std::chrono::milliseconds timeout,
                    const std::function<bool()>& keep_waiting) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (keep_waiting()) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{sock, POLLIN, 0};
    int n = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 100)));
    if (n < 0 && errno != EINTR) return false;
    if (n > 0) return (p.revents & (POLLIN | POLLHUP)) != 0 && (p.revents & (POLLERR | POLLNVAL)) == 0;
  }
  return false;
}

}  // namespace bulwark::server
