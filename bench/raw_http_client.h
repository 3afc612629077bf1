// A minimal HTTP/1.1 keep-alive client for load generation: one blocking loopback TCP connection,
// each request written as one prebuilt buffer, each response framed by Content-Length; after a
// `Connection: close` response the next call reconnects, as any keep-alive client does. It does
// only what a load generator like wrk does per request, so that on a 2-core machine the client
// threads take as little CPU as possible from the server under test. Not a general client: no
// chunked responses, no redirects, no TLS; a response it cannot frame is an error and closes the
// socket.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

namespace bulwark::bench {

class RawHttpClient {
 public:
  RawHttpClient(int port, std::string authorization)
      : port_(port), authorization_(std::move(authorization)) {}
  RawHttpClient(const RawHttpClient&) = delete;
  RawHttpClient& operator=(const RawHttpClient&) = delete;
  ~RawHttpClient() { Close(); }

  // POSTs `body` as JSON to `path` and returns the status code, or -1 on a transport or framing
  // error (the connection is then closed and reopened by the next call). `response` gets the body.
  int Post(std::string_view path, std::string_view body, std::string* response) {
    if (fd_ < 0 && !Connect()) return -1;
    request_.clear();
    request_.append("POST ").append(path).append(" HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ");
    request_.append(authorization_).append("\r\nContent-Type: application/json\r\nContent-Length: ");
    request_.append(std::to_string(body.size())).append("\r\n\r\n").append(body);
    if (!SendAll(request_)) return Fail();
    return ReadResponse(response);
  }

 private:
  bool Connect() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd_ < 0) return false;
    int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    timeval timeout{10, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port_));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      Close();
      return false;
    }
    buffer_.clear();
    return true;
  }

  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  int Fail() {
    Close();
    return -1;
  }

  bool SendAll(std::string_view data) {
    while (!data.empty()) {
      ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      data.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }

  bool ReadMore() {
    char chunk[16384];
    ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
    if (n <= 0) return false;
    buffer_.append(chunk, static_cast<size_t>(n));
    return true;
  }

  // Frames one response from buffer_ (reading as needed); leaves any following bytes in buffer_.
  int ReadResponse(std::string* response) {
    size_t header_end;
    while ((header_end = buffer_.find("\r\n\r\n")) == std::string::npos) {
      if (buffer_.size() > 65536 || !ReadMore()) return Fail();
    }
    // "HTTP/1.1 200 OK"
    if (buffer_.size() < 12 || buffer_.compare(0, 5, "HTTP/") != 0) return Fail();
    const int status = std::atoi(buffer_.c_str() + 9);
    const std::string_view headers(buffer_.data(), header_end);
    size_t length = 0;
    bool framed = false;
    bool close = false;  // the server ends the connection after this response (keep-alive limit)
    for (size_t pos = headers.find("\r\n"); pos != std::string_view::npos;
         pos = headers.find("\r\n", pos + 2)) {
      std::string_view line = headers.substr(pos + 2, headers.find("\r\n", pos + 2) - (pos + 2));
      constexpr std::string_view kLength = "content-length:";
      if (line.size() > kLength.size() && strncasecmp(line.data(), kLength.data(), kLength.size()) == 0) {
        length = std::strtoul(std::string(line.substr(kLength.size())).c_str(), nullptr, 10);
        framed = true;
      }
      constexpr std::string_view kClose = "connection: close";
      if (line.size() == kClose.size() && strncasecmp(line.data(), kClose.data(), kClose.size()) == 0)
        close = true;
    }
    if (!framed) return Fail();
    const size_t total = header_end + 4 + length;
    while (buffer_.size() < total) {
      if (!ReadMore()) return Fail();
    }
    response->assign(buffer_, header_end + 4, length);
    buffer_.erase(0, total);
    if (close) Close();
    return status;
  }

  const int port_;
  const std::string authorization_;
  int fd_ = -1;
  std::string request_;
  std::string buffer_;
};

}  // namespace bulwark::bench
