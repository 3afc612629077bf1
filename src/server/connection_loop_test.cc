// ConnectionLoop on loopback with a stub handler: pipelining, refusal of ambiguous framing with the
// connection closed, total request deadlines, slow clients that hold no worker, shedding, eviction
// at the connection limit, 100-continue, and a prompt Stop.
#include "server/connection_loop.h"

#include <absl/strings/str_cat.h>
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace bulwark::server {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using Clock = std::chrono::steady_clock;

std::string Answer(int status, const std::string& body, bool close) {
  return absl::StrCat("HTTP/1.1 ", status, " X\r\nContent-Length: ", body.size(), "\r\n",
                      close ? "Connection: close\r\n" : "", "\r\n", body);
}

size_t Count(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) ++n;
  return n;
}

// A blocking loopback client with bounded reads.
class Client {
 public:
  explicit Client(int port) : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  }
  ~Client() { close(fd_); }
  bool connected() const { return connected_; }
  bool Send(const std::string& bytes) {
    return send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size());
  }
  // Reads until `done(received)`, end of stream, or `timeout`; returns everything received so far.
  const std::string& ReadUntil(const std::function<bool(const std::string&)>& done,
                               std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    const auto deadline = Clock::now() + timeout;
    while (!eof_ && !done(received_)) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      pollfd p{fd_, POLLIN, 0};
      if (left <= 0 || poll(&p, 1, static_cast<int>(left)) <= 0) break;
      char buffer[4096];
      const ssize_t n = recv(fd_, buffer, sizeof(buffer), 0);
      if (n <= 0) {
        eof_ = true;
      } else {
        received_.append(buffer, static_cast<size_t>(n));
      }
    }
    return received_;
  }
  const std::string& ReadToEnd(std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    return ReadUntil([](const std::string&) { return false; }, timeout);
  }
  bool eof() const { return eof_; }

 private:
  int fd_;
  bool connected_ = false;
  bool eof_ = false;
  std::string received_;
};

class ConnectionLoopTest : public ::testing::Test {
 protected:
  void Start(ConnectionLoopOptions options) {
    ConnectionLoopCallbacks callbacks;
    callbacks.serve = [this](FramedRequest& r) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        ++started_;
        served_on_.push_back(std::this_thread::get_id());
        started_cv_.notify_all();
        release_cv_.wait(lock, [this] { return !hold_; });
      }
      return WireAnswer{Answer(200, absl::StrCat(r.method, " ", r.target, " ", r.body), !r.keep_alive),
                        !r.keep_alive};
    };
    callbacks.refuse = [](const Refusal& r) { return Answer(r.status, r.code, true); };
    auto loop = ConnectionLoop::Create(options, std::move(callbacks));
    ASSERT_TRUE(loop.ok()) << loop.status();
    loop_ = *std::move(loop);
    thread_ = std::thread([this] { ASSERT_TRUE(loop_->Run().ok()); });
  }
  void TearDown() override {
    Release();
    if (loop_) loop_->Stop();
    if (thread_.joinable()) thread_.join();
  }
  void Hold() {
    std::lock_guard<std::mutex> lock(mu_);
    hold_ = true;
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    hold_ = false;
    release_cv_.notify_all();
  }
  bool WaitStarted(int n) {
    std::unique_lock<std::mutex> lock(mu_);
    return started_cv_.wait_for(lock, std::chrono::seconds(5), [&] { return started_ >= n; });
  }
  static std::string Get(const std::string& target) {
    return absl::StrCat("GET ", target, " HTTP/1.1\r\nHost: x\r\n\r\n");
  }
  static std::function<bool(const std::string&)> Answers(size_t n) {
    return [n](const std::string& s) { return Count(s, "HTTP/1.1 ") >= n && s.size() > 0; };
  }

  std::unique_ptr<ConnectionLoop> loop_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable started_cv_, release_cv_;
  int started_ = 0;
  std::vector<std::thread::id> served_on_;  // the thread of each handler call, in order
  bool hold_ = false;
};

TEST_F(ConnectionLoopTest, PipelinedRequestsAreAnsweredInOrder) {
  Start({});
  Client c(loop_->port());
  ASSERT_TRUE(c.Send(Get("/a") + "POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi" + Get("/c")));
  const std::string& got =
      c.ReadUntil([](const std::string& s) { return s.find("GET /c") != std::string::npos; });
  const size_t a = got.find("GET /a "), b = got.find("POST /b hi"), c_at = got.find("GET /c ");
  ASSERT_NE(a, std::string::npos) << got;
  ASSERT_NE(b, std::string::npos) << got;
  ASSERT_NE(c_at, std::string::npos) << got;
  EXPECT_LT(a, b);
  EXPECT_LT(b, c_at);
  EXPECT_FALSE(c.eof()) << "keep-alive";
}

// However a framing error is phrased, the client gets one 400-class answer, the connection closes,
// and nothing after the refused request is ever served.
TEST_F(ConnectionLoopTest, AmbiguousFramingIsRefusedAndTheConnectionClosed) {
  Start({});
  for (std::string framing :
       {"Content-Length: 5\r\nTransfer-Encoding: chunked", "Content-Length: 5\r\nContent-Length: 7",
        "Content-Length: +5", "Transfer-Encoding: gzip, chunked", "X: a\r\n b\r\nContent-Length: 5",
        "Content-Length : 5"}) {
    Client c(loop_->port());
    ASSERT_TRUE(c.Send(absl::StrCat("POST / HTTP/1.1\r\nHost: x\r\n", framing,
                                    "\r\n\r\n5\r\nhello\r\n0\r\n\r\n", Get("/smuggled"))));
    const std::string& got = c.ReadToEnd();
    EXPECT_TRUE(c.eof()) << framing;
    EXPECT_EQ(Count(got, "HTTP/1.1 "), 1u) << framing << "\n" << got;
    EXPECT_THAT(got, Not(HasSubstr("smuggled"))) << framing;
    EXPECT_THAT(got, HasSubstr("Connection: close")) << framing;
  }
  EXPECT_EQ(started_, 0) << "no refused request reaches a handler";
}

TEST_F(ConnectionLoopTest, RequestDeadlineIsTotalNotPerByte) {
  ConnectionLoopOptions options;
  options.request_timeout = std::chrono::milliseconds(300);
  Start(options);
  Client c(loop_->port());
  const std::string request = Get("/slow");
  size_t sent = 0;
  // One byte every 50 ms: no single read ever waits long, but the request would take about 2 s.
  for (; sent < request.size(); ++sent) {
    if (!c.Send(request.substr(sent, 1))) break;
    if (!c.ReadUntil([](const std::string& s) { return !s.empty(); }, std::chrono::milliseconds(50)).empty())
      break;
  }
  const std::string& got = c.ReadToEnd();
  EXPECT_THAT(got, HasSubstr("408")) << got;
  EXPECT_LT(sent, request.size()) << "answered before the client finished";
  EXPECT_EQ(loop_->stats().timed_out_total.load(), 1);
}

TEST_F(ConnectionLoopTest, SlowClientsHoldNoWorker) {
  ConnectionLoopOptions options;
  options.threads = 1;
  options.max_queued = 0;
  Start(options);
  std::vector<std::unique_ptr<Client>> slow;
  for (int i = 0; i < 50; ++i) {
    slow.push_back(std::make_unique<Client>(loop_->port()));
    ASSERT_TRUE(slow.back()->Send("GET /slow HTTP/1.1\r\nHo"));  // and never more
  }
  Client c(loop_->port());
  ASSERT_TRUE(c.Send(Get("/healthz")));
  EXPECT_THAT(c.ReadUntil(Answers(1)), HasSubstr("GET /healthz")) << "the only worker is free";
}

TEST_F(ConnectionLoopTest, ShedsWith503WhenWorkersAndQueueAreFull) {
  ConnectionLoopOptions options;
  options.threads = 1;
  options.max_queued = 1;
  Start(options);
  Hold();
  Client running(loop_->port()), queued(loop_->port()), shed(loop_->port());
  ASSERT_TRUE(running.Send(Get("/running")));
  ASSERT_TRUE(WaitStarted(1));
  ASSERT_TRUE(queued.Send(Get("/queued")));
  for (int i = 0; i < 100 && loop_->requests_queued() < 1; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_EQ(loop_->requests_queued(), 1);
  ASSERT_TRUE(shed.Send(Get("/shed")));
  EXPECT_THAT(shed.ReadToEnd(), HasSubstr("503 X")) << "answered while the worker is still busy";
  EXPECT_TRUE(shed.eof());
  Release();
  EXPECT_THAT(running.ReadUntil(Answers(1)), HasSubstr("GET /running"));
  EXPECT_THAT(queued.ReadUntil(Answers(1)), HasSubstr("GET /queued"));
  EXPECT_EQ(loop_->stats().shed_total.load(), 1);
}

TEST_F(ConnectionLoopTest, LongestWaitingConnectionMakesRoomAtTheLimit) {
  ConnectionLoopOptions options;
  options.max_connections = 3;
  Start(options);
  std::vector<std::unique_ptr<Client>> idle;
  for (int i = 0; i < 3; ++i) {
    idle.push_back(std::make_unique<Client>(loop_->port()));
    for (int t = 0; t < 100 && loop_->stats().open.load() < i + 1; ++t) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  ASSERT_EQ(loop_->stats().open.load(), 3);
  Client fresh(loop_->port());
  ASSERT_TRUE(fresh.Send(Get("/fresh")));
  EXPECT_THAT(fresh.ReadUntil(Answers(1)), HasSubstr("GET /fresh"));
  EXPECT_EQ(loop_->stats().evicted_total.load(), 1);
  idle[0]->ReadToEnd(std::chrono::seconds(2));
  EXPECT_TRUE(idle[0]->eof()) << "the oldest idle connection was the one closed";
  EXPECT_LE(loop_->stats().open.load(), 3);
}

TEST_F(ConnectionLoopTest, ExpectContinueGetsAnInterimAnswer) {
  Start({});
  Client c(loop_->port());
  ASSERT_TRUE(c.Send("POST /e HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n"));
  EXPECT_EQ(c.ReadUntil([](const std::string& s) { return s.size() >= 25; }),
            "HTTP/1.1 100 Continue\r\n\r\n");
  ASSERT_TRUE(c.Send("abc"));
  EXPECT_THAT(c.ReadUntil(Answers(2)), HasSubstr("POST /e abc"));
}

TEST_F(ConnectionLoopTest, IdleConnectionsAreClosedAndCloseIsHonoured) {
  ConnectionLoopOptions options;
  options.idle_timeout = std::chrono::milliseconds(200);
  Start(options);
  Client idle(loop_->port());
  idle.ReadToEnd(std::chrono::seconds(3));
  EXPECT_TRUE(idle.eof());
  Client closing(loop_->port());
  ASSERT_TRUE(closing.Send("GET /bye HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
  EXPECT_THAT(closing.ReadToEnd(), HasSubstr("GET /bye"));
  EXPECT_TRUE(closing.eof());
}

TEST_F(ConnectionLoopTest, StopReturnsWithClientsConnected) {
  Start({});
  Client idle(loop_->port()), partial(loop_->port());
  ASSERT_TRUE(partial.Send("GET / HT"));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const auto start = Clock::now();
  loop_->Stop();
  thread_.join();
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(2));
  idle.ReadToEnd(std::chrono::seconds(2));
  EXPECT_TRUE(idle.eof());
}

// A client that sends its next request as soon as it has the answer is served by the worker that
// answered it (keep-alive continuation: one wake-up per request, not three).
TEST_F(ConnectionLoopTest, KeepAliveBurstStaysOnItsWorker) {
  ConnectionLoopOptions options;
  options.threads = 4;
  options.continuation_wait = std::chrono::milliseconds(100);
  Start(options);
  Client c(loop_->port());
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(c.Send(Get(absl::StrCat("/burst", i))));
    EXPECT_THAT(c.ReadUntil(Answers(i + 1)), HasSubstr(absl::StrCat("GET /burst", i, " ")));
  }
  std::lock_guard<std::mutex> lock(mu_);
  ASSERT_EQ(served_on_.size(), 5u);
  for (const std::thread::id& id : served_on_) EXPECT_EQ(id, served_on_[0]);
  EXPECT_FALSE(c.eof());
}

// What the worker cannot finish goes back to the loop with its bytes: a request completed after
// the continuation window is answered, one never completed still meets the total deadline, a
// framing error is refused without reaching a handler, and a client that hangs up is closed.
TEST_F(ConnectionLoopTest, ContinuationHandsBackWhatItCannotServe) {
  ConnectionLoopOptions options;
  options.continuation_wait = std::chrono::milliseconds(20);
  options.request_timeout = std::chrono::milliseconds(400);
  Start(options);
  {
    Client late(loop_->port());
    ASSERT_TRUE(late.Send(Get("/first")));
    ASSERT_THAT(late.ReadUntil(Answers(1)), HasSubstr("GET /first"));
    ASSERT_TRUE(late.Send("GET /sec"));  // arrives inside the window, incomplete
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
    ASSERT_TRUE(late.Send("ond HTTP/1.1\r\nHost: x\r\n\r\n"));
    EXPECT_THAT(late.ReadUntil(Answers(2)), HasSubstr("GET /second "));
  }
  {
    Client stalled(loop_->port());
    ASSERT_TRUE(stalled.Send(Get("/first")));
    ASSERT_THAT(stalled.ReadUntil(Answers(1)), HasSubstr("GET /first"));
    ASSERT_TRUE(stalled.Send("GET /never"));
    EXPECT_THAT(stalled.ReadToEnd(), HasSubstr("408"));
    EXPECT_TRUE(stalled.eof());
  }
  const int served_before = started_;
  {
    Client smuggler(loop_->port());
    ASSERT_TRUE(smuggler.Send(Get("/first")));
    ASSERT_THAT(smuggler.ReadUntil(Answers(1)), HasSubstr("GET /first"));
    ASSERT_TRUE(
        smuggler.Send("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: +5\r\n\r\nhello" + Get("/smuggled")));
    const std::string& got = smuggler.ReadToEnd();
    EXPECT_EQ(Count(got, "HTTP/1.1 4"), 1u) << got;
    EXPECT_THAT(got, Not(HasSubstr("smuggled")));
    EXPECT_TRUE(smuggler.eof());
  }
  EXPECT_EQ(started_, served_before + 1) << "only /first reached a handler";
  {
    Client quitter(loop_->port());
    ASSERT_TRUE(quitter.Send(Get("/first")));
    ASSERT_THAT(quitter.ReadUntil(Answers(1)), HasSubstr("GET /first"));
  }  // closes inside the window
  for (int i = 0; i < 200 && loop_->stats().open.load() > 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(loop_->stats().open.load(), 0) << "every connection was closed";
}

TEST(ConnectionLoopOptionsTest, RefusesOutOfRangeOptions) {
  ConnectionLoopCallbacks callbacks{[](FramedRequest&) { return WireAnswer{}; },
                                    [](const Refusal&) { return std::string(); }};
  ConnectionLoopOptions options;
  options.max_connections = 0;
  EXPECT_EQ(ConnectionLoop::Create(options, callbacks).status().code(), absl::StatusCode::kInvalidArgument);
  options = {};
  options.request_timeout = std::chrono::milliseconds(0);
  EXPECT_EQ(ConnectionLoop::Create(options, callbacks).status().code(), absl::StatusCode::kInvalidArgument);
  options = {};
  options.continuation_wait = std::chrono::milliseconds(101);
  EXPECT_EQ(ConnectionLoop::Create(options, callbacks).status().code(), absl::StatusCode::kInvalidArgument);
  options = {};
  EXPECT_EQ(ConnectionLoop::Create(options, {}).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace bulwark::server
