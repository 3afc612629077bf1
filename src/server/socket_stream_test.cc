// BudgetedSocketStream over a socketpair: header and body budgets, the end of the headers, and
// requests without body framing.
#include "server/socket_stream.h"

#include <sys/socket.h>
#include <unistd.h>

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

TEST_F(SocketStreamTest, ReadTimesOutAndWritesReachThePeer) {
  BudgetedSocketStream s = Stream();
  s.StartRequest(100, 100);
  char c;
  EXPECT_EQ(s.read(&c, 1), -1) << "nothing sent: the read timeout expires";
  EXPECT_FALSE(s.budget_exceeded());
  ASSERT_EQ(s.write("pong", 4), 4);
  char buf[8] = {};
  ASSERT_EQ(read(fds_[1], buf, sizeof(buf)), 4);
  EXPECT_STREQ(buf, "pong");
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
