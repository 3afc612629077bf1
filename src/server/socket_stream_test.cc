// BudgetedSocketStream over a socketpair: header and body budgets, the end of the headers,
// requests without body framing, and buffered writes.
#include "server/socket_stream.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include <gtest/gtest.h>

namespace bulwark::server {
namespace {

class SocketStreamTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds_), 0); }
  void TearDown() override {
    close(fds_[0]);
    if (fds_[1] >= 0) close(fds_[1]);
  }
  void Send(const std::string& bytes) {
    ASSERT_EQ(write(fds_[1], bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  }
  // Reads byte by byte (as httplib's line reader does) until a read fails; returns what was read.
  std::string Drain(BudgetedSocketStream& s, size_t chunk = 1) {
    std::string out;
    char buf[256];
    ssize_t n;
    while ((n = s.read(buf, std::min(chunk, sizeof(buf)))) > 0) out.append(buf, static_cast<size_t>(n));
    return out;
  }
  BudgetedSocketStream Stream() {
    return BudgetedSocketStream(fds_[0], std::chrono::milliseconds(200), std::chrono::milliseconds(200));
  }
  int fds_[2] = {-1, -1};
};

TEST_F(SocketStreamTest, HeaderBudgetStopsEndlessHeaders) {
  BudgetedSocketStream s = Stream();
  s.StartRequest(/*header_budget=*/100, /*body_budget=*/1000);
  std::string headers = "GET / HTTP/1.1\r\n";
  while (headers.size() < 1000) headers += "X-Pad: aaaaaaaaaa\r\n";
  Send(headers);
  EXPECT_EQ(Drain(s).size(), 100u);
  EXPECT_TRUE(s.budget_exceeded());
  EXPECT_TRUE(s.in_headers());
}

TEST_F(SocketStreamTest, BodyHasItsOwnBudget) {
  BudgetedSocketStream s = Stream();
  s.StartRequest(64, 10);
  const std::string head = "POST / HTTP/1.1\r\nContent-Length: 50\r\n\r\n";
  Send(head + std::string(50, 'x'));
  std::string got = Drain(s, 64);
  EXPECT_EQ(got.size(), head.size() + 10) << "headers end exactly at the blank line, then 10 body bytes";
  EXPECT_TRUE(s.budget_exceeded());
  EXPECT_FALSE(s.in_headers());
}

TEST_F(SocketStreamTest, NoFramingMeansNoBody) {
  BudgetedSocketStream s = Stream();
  s.StartRequest(1000, 1000);
  const std::string head = "POST /v1/admin/verify HTTP/1.1\r\nHost: x\r\n\r\n";
  Send(head + "GET /next HTTP/1.1\r\n");
  EXPECT_EQ(Drain(s), head);
  char c;
  EXPECT_EQ(s.read(&c, 1), 0) << "end of body at once, not a wait for the read timeout";
  EXPECT_FALSE(s.budget_exceeded());
  // The next request on the connection reads on from where the last one ended.
  s.StartRequest(1000, 1000);
  ASSERT_EQ(s.read(&c, 1), 1);
  EXPECT_EQ(c, 'G');
}

TEST_F(SocketStreamTest, FramingHeadersAreCaseInsensitive) {
  BudgetedSocketStream s = Stream();
  s.StartRequest(1000, 1000);
  Send("POST / HTTP/1.1\r\ntransfer-ENCODING: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n");
  EXPECT_NE(Drain(s).find("hello"), std::string::npos);
}

TEST_F(SocketStreamTest, ReadTimesOut) {
  BudgetedSocketStream s = Stream();
  s.StartRequest(100, 100);
  char c;
  EXPECT_EQ(s.read(&c, 1), -1) << "nothing sent: the read timeout expires";
  EXPECT_FALSE(s.budget_exceeded());
}

TEST_F(SocketStreamTest, WritesLeaveTogetherOnFlush) {
  BudgetedSocketStream s = Stream();
  ASSERT_EQ(s.write("HTTP/1.1 200 OK\r\n\r\n", 19), 19);
  ASSERT_EQ(s.write("pong", 4), 4);
  char buf[64] = {};
  EXPECT_EQ(recv(fds_[1], buf, sizeof(buf), MSG_DONTWAIT), -1) << "buffered until flushed";
  ASSERT_TRUE(s.Flush());
  ASSERT_EQ(recv(fds_[1], buf, sizeof(buf), 0), 23) << "one piece";
  EXPECT_STREQ(buf, "HTTP/1.1 200 OK\r\n\r\npong");
  EXPECT_TRUE(s.Flush()) << "nothing pending";
}

TEST_F(SocketStreamTest, ReadSendsPendingOutputFirst) {
  // "100 Continue" must reach the client before the server waits for the body.
  BudgetedSocketStream s = Stream();
  s.StartRequest(100, 100);
  ASSERT_EQ(s.write("HTTP/1.1 100 Continue\r\n\r\n", 25), 25);
  char c;
  EXPECT_EQ(s.read(&c, 1), -1) << "no request bytes: the read times out";
  char buf[64] = {};
  ASSERT_EQ(recv(fds_[1], buf, sizeof(buf), MSG_DONTWAIT), 25);
  EXPECT_STREQ(buf, "HTTP/1.1 100 Continue\r\n\r\n");
}

TEST_F(SocketStreamTest, LargeWritesAreSentWithoutWaitingForFlush) {
  BudgetedSocketStream s = Stream();
  const std::string big(100'000, 'x');
  std::string received;
  std::thread reader([&] {
    char buf[8192];
    ssize_t n;
    while (received.size() < big.size() && (n = recv(fds_[1], buf, sizeof(buf), 0)) > 0) {
      received.append(buf, static_cast<size_t>(n));
    }
  });
  ASSERT_EQ(s.write(big.data(), big.size()), static_cast<ssize_t>(big.size()));
  reader.join();
  EXPECT_EQ(received, big);
}

TEST_F(SocketStreamTest, FlushFailsWhenThePeerIsGone) {
  BudgetedSocketStream s = Stream();
  close(fds_[1]);
  fds_[1] = -1;
  ASSERT_EQ(s.write("lost", 4), 4);
  EXPECT_FALSE(s.Flush());
}

TEST_F(SocketStreamTest, FlushTimesOutWhenThePeerStopsReading) {
  BudgetedSocketStream s = Stream();
  const std::string chunk(1 << 20, 'x');  // more than a socketpair buffers
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(s.write(chunk.data(), chunk.size()), -1);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(190)) << "the write timeout";
}

TEST(SocketStreamAddressTest, ReportsBothEndsOfATcpConnection) {
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(listener, 1), 0);
  ASSERT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const int client = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_EQ(connect(client, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  const int served = accept(listener, nullptr, nullptr);
  ASSERT_GE(served, 0);
  sockaddr_in client_addr{};
  len = sizeof(client_addr);
  ASSERT_EQ(getsockname(client, reinterpret_cast<sockaddr*>(&client_addr), &len), 0);
  {
    BudgetedSocketStream s(served, std::chrono::milliseconds(200), std::chrono::milliseconds(200));
    for (int call = 0; call < 2; ++call) {  // the second call answers from the cache
      std::string ip;
      int port = 0;
      s.get_local_ip_and_port(ip, port);
      EXPECT_EQ(ip, "127.0.0.1");
      EXPECT_EQ(port, ntohs(addr.sin_port));
      s.get_remote_ip_and_port(ip, port);
      EXPECT_EQ(ip, "127.0.0.1");
      EXPECT_EQ(port, ntohs(client_addr.sin_port));
    }
  }
  close(served);
  close(client);
  close(listener);
}

TEST_F(SocketStreamTest, WaitForRequestHonoursTimeoutAndStop) {
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(WaitForRequest(fds_[0], std::chrono::milliseconds(150), [] { return true; }));
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(140));
  EXPECT_FALSE(WaitForRequest(fds_[0], std::chrono::seconds(10), [] { return false; }));
  Send("x");
  EXPECT_TRUE(WaitForRequest(fds_[0], std::chrono::seconds(1), [] { return true; }));
}

}  // namespace
}  // namespace bulwark::server
