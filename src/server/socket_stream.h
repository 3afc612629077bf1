// BudgetedSocketStream: the httplib::Stream the server reads requests from. It behaves like
// httplib's own socket stream (buffered reads, read and write timeouts) with one addition: byte
// budgets per request, one for the request line and headers (up to the blank line that ends them)
// and one for the body. httplib 0.11 bounds the length of each header line but not their number,
// so without a budget one connection could grow the server's memory without limit by sending
// header lines forever; and a body declared larger than the limit would be read to its end before
// the 413. Once a budget is used up, reads fail and the server closes the connection
// (LingeringClose, so the client still receives the error answer).
//
// It also applies RFC 9112 6.3 where httplib 0.11 does not: a request with neither Content-Length
// nor Transfer-Encoding has no body. (httplib would read such a POST "until the connection
// closes", so `curl -X POST URL` without -d hung for the read timeout.) Reads of its body return
// end-of-stream at once.
//
// Writes are buffered: what httplib writes for a response (status line and headers, then the body)
// leaves in one send() when the stream next reads or when the server calls Flush() after the
// request, so a small answer costs one system call and one TCP segment instead of two of each.
// Reads and writes first try the socket without waiting and poll() only when it is not ready.
#pragma once

#include <sys/socket.h>
#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <httplib.h>

namespace bulwark::server {

class BudgetedSocketStream : public httplib::Stream {
 public:
  BudgetedSocketStream(socket_t sock, std::chrono::microseconds read_timeout,
                       std::chrono::microseconds write_timeout);

  // Starts a new request: at most `header_budget` bytes up to and including the blank line after
  // the headers, then at most `body_budget` bytes.
  void StartRequest(size_t header_budget, size_t body_budget);
  // True once a read was refused because a budget was used up; in_headers() tells which.
  bool budget_exceeded() const { return exceeded_; }
  bool in_headers() const { return in_headers_; }

  bool is_readable() const override;  // buffered bytes, or the socket turns readable within the read timeout
  bool is_writable() const override;  // the socket turns writable within the write timeout
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override;  // buffers; see Flush
  // Sends every buffered byte, waiting up to the write timeout whenever the socket is full. False
  // on a socket error or timeout (the connection is then unusable). read() flushes first, so a
  // "100 Continue" reaches the client before the server waits for the body.
  bool Flush();
  // The connection's addresses, asked of the kernel once per connection (httplib asks per request).
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  socket_t socket() const override { return sock_; }

 private:
  static constexpr size_t kBufferSize = 4096;
  static constexpr size_t kMaxPendingOutput = 64 * 1024;  // a larger write is sent at once
  void ScanHeaderByte(char c);  // tracks the end of the headers and the body framing headers
  const socket_t sock_;
  const int read_timeout_ms_;
  const int write_timeout_ms_;
  char buffer_[kBufferSize];
  size_t buffer_begin_ = 0;
  size_t buffer_end_ = 0;
  size_t budget_ = 0;       // bytes the current phase may still read
  size_t body_budget_ = 0;  // budget of the body, once the headers end
  bool in_headers_ = true;
  uint32_t tail_ = 0;         // last four header bytes, to find "\r\n\r\n"
  std::string line_start_;    // the first bytes of the current header line, lowercased
  bool body_framed_ = false;  // a Content-Length or Transfer-Encoding header was seen
  bool exceeded_ = false;
  std::string pending_output_;  // written, not yet sent
  struct Address {
    std::string ip;
    int port = 0;
  };
  // What getpeername or getsockname (`query`) reports for `sock`; empty if it fails.
  static Address AddressOf(socket_t sock, int (*query)(int, sockaddr*, socklen_t*));
  mutable std::optional<Address> remote_, local_;  // cached by the getters
};

// Closes a connection whose request was refused before it was read to its end: sends FIN, then
// reads and discards what the client still sends (at most `max_bytes`, for at most `max_wait`)
// before closing, so that the client reads the error answer instead of a connection reset.
void LingeringClose(socket_t sock, std::chrono::milliseconds max_wait, size_t max_bytes);

// Waits until `sock` has data (the next request of a keep-alive connection). False after
// `timeout` without data, on a socket error, or as soon as `keep_waiting()` returns false (checked
// every 100 ms; the server uses it to stop promptly).
bool WaitForRequest(socket_t sock, std::chrono::milliseconds timeout,
                    const std::function<bool()>& keep_waiting);

}  // namespace bulwark::server
