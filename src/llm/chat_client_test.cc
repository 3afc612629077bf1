// ChatClient against a real OpenAI-compatible server on loopback (testing/chat_server.h): request
// shape, JSON mode, refusals, bad JSON, HTTP errors with bounded retries, and timeouts.
#include "llm/chat_client.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "testing/chat_server.h"
#include "testing/status_matchers.h"

namespace bulwark {
namespace {

using ::bulwark::testing::IsOk;

using ::testing::HasSubstr;
using json = nlohmann::json;

class ChatClientTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(server_.running()); }

  ChatClientOptions Options() const {
    ChatClientOptions options;
    options.endpoint.url = server_.url();
    options.endpoint.initial_backoff_ms = 1;
    options.endpoint.timeout_ms = 2000;
    options.model = "test-model";
    return options;
  }
  std::unique_ptr<ChatClient> Make(ChatClientOptions options) {
    auto client = ChatClient::Create(std::move(options));
    EXPECT_TRUE(client.ok()) << client.status();
    return client.ok() ? *std::move(client) : nullptr;
  }
  std::unique_ptr<ChatClient> Make() { return Make(Options()); }
  static std::vector<ChatMessage> Ask(const std::string& text) {
    return {{"system", "You answer briefly."}, {"user", text}};
  }

  testing::LoopbackChatServer server_;
};

TEST_F(ChatClientTest, SendsTheChatRequestAndReadsTheReply) {
  server_.SetContent(
      [](const json& request) { return "echo: " + testing::LoopbackChatServer::LastUserContent(request); });
  ChatClientOptions options = Options();
  options.endpoint.api_key = "sk-chat";
  auto reply = Make(options)->Complete(Ask("hello"));
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(reply->content, "echo: hello");
  EXPECT_EQ(reply->finish_reason, "stop");
  EXPECT_EQ(reply->prompt_tokens, 11);
  const json sent = server_.bodies().at(0);
  EXPECT_EQ(sent["model"], "test-model");
  EXPECT_EQ(sent["messages"][0]["role"], "system");
  EXPECT_EQ(sent["messages"][1]["content"], "hello");
  EXPECT_EQ(sent["temperature"], 0.0);
  EXPECT_FALSE(sent.contains("response_format"));
  EXPECT_EQ(server_.last_authorization(), "Bearer sk-chat");
}

TEST_F(ChatClientTest, JsonModeRequestsAndParsesAnObject) {
  server_.SetContent([](const json&) { return R"({"answer": "Lisbon", "confidence": 0.9})"; });
  auto reply = Make()->CompleteJson(Ask("capital?"));
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ((*reply)["answer"], "Lisbon");
  EXPECT_EQ(server_.bodies().at(0)["response_format"]["type"], "json_object");
}

TEST_F(ChatClientTest, BadJsonContentIsDataLoss) {
  for (const std::string content : {"Lisbon", "{\"answer\": ", "[1, 2]", ""}) {
    server_.SetContent([content](const json&) { return content; });
    auto reply = Make()->CompleteJson(Ask("capital?"));
    EXPECT_EQ(reply.status().code(), absl::StatusCode::kDataLoss) << content;
    EXPECT_THAT(reply.status().message(), HasSubstr("not a JSON object"));
  }
}

TEST_F(ChatClientTest, TruncatedJsonIsDataLoss) {
  server_.SetHandler([](const json&, httplib::Response& res) {
    res.set_content(testing::LoopbackChatServer::Completion(R"({"answer": "Lis)", "length").dump(),
                    "application/json");
  });
  auto reply = Make()->CompleteJson(Ask("capital?"));
  EXPECT_EQ(reply.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(reply.status().message(), HasSubstr("cut off"));
}

TEST_F(ChatClientTest, RefusalIsFailedPreconditionWithoutRetry) {
  server_.SetHandler([](const json&, httplib::Response& res) {
    json body = testing::LoopbackChatServer::Completion("");
    body["choices"][0]["message"]["content"] = nullptr;
    body["choices"][0]["message"]["refusal"] = "I can't help with that.";
    res.set_content(body.dump(), "application/json");
  });
  auto reply = Make()->Complete(Ask("something"));
  EXPECT_EQ(reply.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(reply.status().message(), HasSubstr("refused: I can't help with that."));
  EXPECT_EQ(server_.requests(), 1);

  server_.SetHandler([](const json&, httplib::Response& res) {
    res.set_content(testing::LoopbackChatServer::Completion("", "content_filter").dump(), "application/json");
  });
  EXPECT_EQ(Make()->Complete(Ask("x")).status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(ChatClientTest, MalformedEnvelopeIsDataLoss) {
  for (const std::string body :
       {"<html>", "[]", R"({"choices": []})", R"({"choices": [{"message": {"role": "assistant"}}]})",
        R"({"choices": [{"message": {"content": 7}}]})", R"({"choices": [7]})"}) {
    server_.AlwaysRespond(200, body);
    EXPECT_EQ(Make()->Complete(Ask("x")).status().code(), absl::StatusCode::kDataLoss) << body;
  }
}

TEST_F(ChatClientTest, ServerErrorsAreRetriedWithBackoffThenSucceed) {
  server_.SetHandler([this](const json&, httplib::Response& res) {
    if (server_.requests() <= 2) {
      res.status = 503;
      res.set_content(R"({"error": "loading model"})", "application/json");
      return;
    }
    res.set_content(testing::LoopbackChatServer::Completion("fine").dump(), "application/json");
  });
  auto reply = Make()->Complete(Ask("x"));
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(reply->content, "fine");
  EXPECT_EQ(server_.requests(), 3);
}

TEST_F(ChatClientTest, PersistentErrorsStopAfterBoundedRetries) {
  server_.AlwaysRespond(500, R"({"error": "boom"})");
  ChatClientOptions options = Options();
  options.endpoint.max_retries = 2;
  auto reply = Make(options)->Complete(Ask("x"));
  EXPECT_EQ(reply.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(reply.status().message(), HasSubstr("500 after 3 attempt(s)"));
  EXPECT_EQ(server_.requests(), 3);

  server_.AlwaysRespond(429, R"({"error": "slow down"})");
  EXPECT_EQ(Make(options)->Complete(Ask("x")).status().code(), absl::StatusCode::kResourceExhausted);
}

TEST_F(ChatClientTest, ClientErrorsAreNotRetried) {
  server_.AlwaysRespond(401, R"({"error": "bad key"})");
  ChatClientOptions options = Options();
  options.endpoint.api_key = "sk-secret-value";
  auto reply = Make(options)->Complete(Ask("x"));
  EXPECT_EQ(reply.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(reply.status().message()), ::testing::Not(HasSubstr("sk-secret-value")));
  EXPECT_EQ(server_.requests(), 1);
  server_.AlwaysRespond(400, R"({"error": "context length exceeded"})");
  reply = Make()->Complete(Ask("x"));
  EXPECT_EQ(reply.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(reply.status().message(), HasSubstr("context length exceeded"));
}

TEST_F(ChatClientTest, SlowServerIsDeadlineExceeded) {
  server_.SetHandler([](const json&, httplib::Response& res) {
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
    res.set_content(testing::LoopbackChatServer::Completion("late").dump(), "application/json");
  });
  ChatClientOptions options = Options();
  options.endpoint.timeout_ms = 100;
  auto reply = Make(options)->Complete(Ask("x"));
  EXPECT_EQ(reply.status().code(), absl::StatusCode::kDeadlineExceeded) << reply.status();
  EXPECT_THAT(reply.status().message(), HasSubstr("within 100 ms"));
  EXPECT_EQ(server_.requests(), 1);
}

TEST_F(ChatClientTest, ConnectionRefusedIsUnavailable) {
  server_.Stop();
  ChatClientOptions options = Options();
  options.endpoint.max_retries = 1;
  EXPECT_EQ(Make(options)->Complete(Ask("x")).status().code(), absl::StatusCode::kUnavailable);
}

TEST_F(ChatClientTest, ConfigFromJsonAndEnvironment) {
  ::setenv("BULWARK_LLM_MODEL", "env-model", 1);
  ::setenv("BULWARK_CHAT_TEST_KEY", "sk-env", 1);
  auto client = ChatClient::FromConfig(
      {{"url", server_.url()}, {"api_key_env", "BULWARK_CHAT_TEST_KEY"}, {"max_tokens", 64}});
  ::unsetenv("BULWARK_LLM_MODEL");
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_EQ((*client)->options().model, "env-model");
  ASSERT_THAT((*client)->Complete(Ask("x")), IsOk());
  EXPECT_EQ(server_.last_authorization(), "Bearer sk-env");
  EXPECT_EQ(server_.bodies().back()["max_tokens"], 64);

  for (const json& bad :
       {json{{"url", server_.url()}}, json{{"model", "m"}}, json{{"url", "ftp://x"}, {"model", "m"}},
        json{{"url", server_.url()}, {"model", "m"}, {"temperature", 3}},
        json{{"url", server_.url()}, {"model", "m"}, {"colour", "red"}}}) {
    EXPECT_EQ(ChatClient::FromConfig(bad).status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

}  // namespace
}  // namespace bulwark
