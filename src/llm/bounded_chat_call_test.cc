// BoundedJsonCompletion against a real chat server on loopback (testing/chat_server.h): it parses a
// JSON answer, ends at its wall-clock deadline even when the server drips its answer byte by byte,
// refuses answers over its size cap (announced or not), and maps refusals, malformed answers and
// HTTP errors to their status codes without retrying.
#include "llm/bounded_chat_call.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "testing/chat_server.h"
#include "testing/status_matchers.h"

namespace bulwark {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;
using testing::IsOk;
using testing::StatusIs;
using Clock = std::chrono::steady_clock;

class BoundedChatCallTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(server_.running()); }

  ChatClientOptions Options() const {
    ChatClientOptions options;
    options.endpoint.url = server_.url();
    options.model = "judge-model";
    return options;
  }
  absl::StatusOr<json> Call(ChatCallBounds bounds = {.deadline_ms = 2000, .max_answer_bytes = 4096}) {
    return BoundedJsonCompletion(Options(), {{"system", "judge"}, {"user", "data"}}, bounds);
  }
  static double Seconds(Clock::time_point since) {
    return std::chrono::duration<double>(Clock::now() - since).count();
  }

  testing::LoopbackChatServer server_;
};

TEST_F(BoundedChatCallTest, ParsesAJsonAnswerAndSendsJsonMode) {
  server_.SetContent(
      [](const json&) { return R"({"injection": false, "contradiction": true, "reason": "x"})"; });
  ChatClientOptions options = Options();
  options.endpoint.api_key = "sk-judge";
  auto answer = BoundedJsonCompletion(options, {{"system", "s"}, {"user", "u"}}, {});
  ASSERT_THAT(answer, IsOk());
  EXPECT_EQ((*answer)["contradiction"], true);
  const json sent = server_.bodies().at(0);
  EXPECT_EQ(sent["response_format"]["type"], "json_object");
  EXPECT_EQ(sent["model"], "judge-model");
  EXPECT_EQ(sent["messages"][1]["content"], "u");
  EXPECT_EQ(server_.last_authorization(), "Bearer sk-judge");
}

TEST_F(BoundedChatCallTest, ASlowServerEndsAtTheDeadline) {
  server_.SetHandler([](const json&, httplib::Response& res) {
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    res.set_content(testing::LoopbackChatServer::Completion("{}").dump(), "application/json");
  });
  const auto start = Clock::now();
  auto answer = Call({.deadline_ms = 100, .max_answer_bytes = 4096});
  EXPECT_THAT(answer, StatusIs(absl::StatusCode::kDeadlineExceeded));
  EXPECT_LT(Seconds(start), 0.6);
  EXPECT_EQ(server_.requests(), 1);  // never retried
}

TEST_F(BoundedChatCallTest, AServerDrippingItsAnswerEndsAtTheDeadline) {
  // One byte every 20 ms: each read finishes well within any socket timeout, the whole never does.
  server_.SetHandler([](const json&, httplib::Response& res) {
    res.set_chunked_content_provider("application/json", [](size_t offset, httplib::DataSink& sink) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      if (offset >= 100 || !sink.write(" ", 1)) return false;  // at most 2 s; stops once the client left
      return true;
    });
  });
  const auto start = Clock::now();
  auto answer = Call({.deadline_ms = 250, .max_answer_bytes = 4096});
  EXPECT_THAT(answer, StatusIs(absl::StatusCode::kDeadlineExceeded));
  EXPECT_LT(Seconds(start), 1.0);
}

TEST_F(BoundedChatCallTest, AnAnswerOverTheCapIsRefused) {
  const std::string big(100'000, 'x');
  server_.SetContent([&big](const json&) { return big; });  // Content-Length announces it
  EXPECT_THAT(Call(), StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("larger than 4096")));
  server_.SetHandler([](const json&, httplib::Response& res) {  // chunked: nothing announced
    res.set_chunked_content_provider("application/json", [](size_t offset, httplib::DataSink& sink) {
      const std::string chunk(1000, 'y');
      if (offset >= 200'000 || !sink.write(chunk.data(), chunk.size())) return false;
      return true;
    });
  });
  EXPECT_THAT(Call(), StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("larger than 4096")));
}

TEST_F(BoundedChatCallTest, RefusalsAndMalformedAnswers) {
  server_.SetHandler([](const json&, httplib::Response& res) {
    json body = testing::LoopbackChatServer::Completion("");
    body["choices"][0]["message"]["refusal"] = "I can't help with that.";
    res.set_content(body.dump(), "application/json");
  });
  EXPECT_THAT(Call(), StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("refused")));
  for (const std::string content : {"safe", "[true]", "{\"injection\": ", ""}) {
    server_.SetContent([content](const json&) { return content; });
    EXPECT_THAT(Call(), StatusIs(absl::StatusCode::kDataLoss)) << content;
  }
  server_.AlwaysRespond(200, "not json");
  EXPECT_THAT(Call(), StatusIs(absl::StatusCode::kDataLoss));
  server_.SetHandler([](const json&, httplib::Response& res) {
    res.set_content(testing::LoopbackChatServer::Completion("{\"a\": 1", "length").dump(),
                    "application/json");
  });
  EXPECT_THAT(Call(), StatusIs(absl::StatusCode::kDataLoss, HasSubstr("cut off")));
}

TEST_F(BoundedChatCallTest, HttpErrorsAreNotRetried) {
  server_.AlwaysRespond(500, "{\"error\": \"down\"}");
  EXPECT_THAT(Call(), StatusIs(absl::StatusCode::kUnavailable));
  server_.AlwaysRespond(401, "{}");
  EXPECT_THAT(Call(), StatusIs(absl::StatusCode::kPermissionDenied));
  server_.AlwaysRespond(429, "{}");
  EXPECT_THAT(Call(), StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("429")));
  server_.AlwaysRespond(400, "{}");
  EXPECT_THAT(Call(), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(server_.requests(), 4);
  server_.Stop();
  EXPECT_THAT(Call(), StatusIs(absl::StatusCode::kUnavailable));
}

TEST_F(BoundedChatCallTest, BoundsAreChecked) {
  EXPECT_THAT(Call({.deadline_ms = 0, .max_answer_bytes = 4096}),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(Call({.deadline_ms = 100, .max_answer_bytes = 10}),
              StatusIs(absl::StatusCode::kInvalidArgument));
  ChatClientOptions options = Options();
  options.endpoint.url = "ftp://x";
  EXPECT_THAT(BoundedJsonCompletion(options, {{"user", "u"}}, {}),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(BoundedJsonCompletion(Options(), {}, {}), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(server_.requests(), 0);
}

}  // namespace
}  // namespace bulwark
