// Tests of HttpEmbedder against a real httplib::Server on 127.0.0.1 (an ephemeral port) that
// speaks the OpenAI embeddings protocol, with a programmable handler per test: batching, index
// order, authentication, retries, timeouts and every kind of malformed response.
#include "embed/http_embedder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <thread>

#include "testing/status_matchers.h"

namespace bulwark {
namespace {

using ::bulwark::testing::IsOk;

using ::testing::HasSubstr;
using json = nlohmann::json;

constexpr int kDimension = 4;

// The fake model: a deterministic, deliberately unnormalized vector per text.
std::vector<double> FakeVector(const std::string& text) {
  return {static_cast<double>(text.size()), 3.0, text.empty() ? 0.0 : double(text[0] % 7), -2.0};
}

std::vector<float> Normalized(std::vector<double> v) {
  double norm = 0;
  for (double x : v) norm += x * x;
  std::vector<float> out;
  for (double x : v) out.push_back(static_cast<float>(x / std::sqrt(norm)));
  return out;
}

// A well-formed response for `request_body`, items listed in reverse order (the client must
// place them by "index", not by position).
json GoodResponse(const std::string& request_body, int dimension = kDimension) {
  const json request = json::parse(request_body);
  json data = json::array();
  const auto& input = request.at("input");
  for (size_t i = input.size(); i-- > 0;) {
    std::vector<double> v = FakeVector(input[i].get<std::string>());
    v.resize(dimension, 1.0);
    data.push_back({{"object", "embedding"}, {"index", i}, {"embedding", v}});
  }
  return {{"object", "list"}, {"data", data}, {"model", request.at("model")}};
}

class HttpEmbedderTest : public ::testing::Test {
 protected:
  using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;

  void SetUp() override {
    server_.Post("/v1/embeddings", [this](const httplib::Request& req, httplib::Response& res) {
      ++requests_;
      {
        std::lock_guard<std::mutex> lock(mu_);
        last_authorization_ = req.get_header_value("Authorization");
        request_bodies_.push_back(req.body);
      }
      Handler handler;
      {
        std::lock_guard<std::mutex> lock(mu_);
        handler = handler_;
      }
      if (handler) {
        handler(req, res);
      } else {
        res.set_content(GoodResponse(req.body).dump(), "application/json");
      }
    });
    server_.Post("/prefix/v1/embeddings", [](const httplib::Request& req, httplib::Response& res) {
      res.set_content(GoodResponse(req.body).dump(), "application/json");
    });
    server_.set_tcp_nodelay(true);
    port_ = server_.bind_to_any_port("127.0.0.1");
    ASSERT_GT(port_, 0);
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    for (int i = 0; i < 500 && !server_.is_running(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    ASSERT_TRUE(server_.is_running());
  }

  void TearDown() override {
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }

  void SetHandler(Handler handler) {
    std::lock_guard<std::mutex> lock(mu_);
    handler_ = std::move(handler);
  }

  HttpEmbedderOptions Options() const {
    HttpEmbedderOptions options;
    options.url = "http://127.0.0.1:" + std::to_string(port_);
    options.model = "test-model";
    options.dimension = kDimension;
    options.initial_backoff_ms = 1;
    options.timeout_ms = 2000;
    return options;
  }

  std::unique_ptr<HttpEmbedder> Make(HttpEmbedderOptions options) {
    auto embedder = HttpEmbedder::Create(std::move(options));
    EXPECT_TRUE(embedder.ok()) << embedder.status();
    return embedder.ok() ? *std::move(embedder) : nullptr;
  }
  std::unique_ptr<HttpEmbedder> Make() { return Make(Options()); }

  // Makes every request answer with `status` and `body`.
  void AlwaysRespond(int status, std::string body) {
    SetHandler([status, body](const httplib::Request&, httplib::Response& res) {
      res.status = status;
      res.set_content(body, "application/json");
    });
  }

  absl::StatusCode EmbedCode(std::string_view text = "hello") {
    auto embedder = Make();
    return embedder ? embedder->Embed(text).status().code() : absl::StatusCode::kInternal;
  }

  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<int> requests_{0};
  std::mutex mu_;
  Handler handler_;                          // guarded by mu_
  std::string last_authorization_;           // guarded by mu_
  std::vector<std::string> request_bodies_;  // guarded by mu_
};

TEST_F(HttpEmbedderTest, EmbedsInBatchesInInputOrder) {
  HttpEmbedderOptions options = Options();
  options.batch_size = 2;
  auto embedder = Make(options);
  ASSERT_NE(embedder, nullptr);
  const std::vector<std::string> texts = {"a", "bb", "ccc", "dddd", "eeeee"};
  auto vectors = embedder->EmbedBatch(texts);
  ASSERT_TRUE(vectors.ok()) << vectors.status();
  EXPECT_EQ(requests_.load(), 3);  // 2 + 2 + 1
  ASSERT_EQ(vectors->size(), texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    const std::vector<float> expected = Normalized(FakeVector(texts[i]));
    ASSERT_EQ((*vectors)[i].size(), static_cast<size_t>(kDimension));
    for (int k = 0; k < kDimension; ++k) EXPECT_NEAR((*vectors)[i][k], expected[k], 1e-6);
  }
  std::lock_guard<std::mutex> lock(mu_);
  ASSERT_EQ(request_bodies_.size(), 3u);
  const json first = json::parse(request_bodies_[0]);
  EXPECT_EQ(first["model"], "test-model");
  EXPECT_EQ(first["input"], json({"a", "bb"}));
  EXPECT_EQ(json::parse(request_bodies_[2])["input"], json({"eeeee"}));
  EXPECT_EQ(last_authorization_, "");  // no key configured, no header
}

TEST_F(HttpEmbedderTest, DefaultBatchSizeIs64) {
  auto embedder = Make();
  ASSERT_NE(embedder, nullptr);
  const std::vector<std::string> texts(130, "x");
  auto vectors = embedder->EmbedBatch(texts);
  ASSERT_TRUE(vectors.ok()) << vectors.status();
  EXPECT_EQ(vectors->size(), 130u);
  EXPECT_EQ(requests_.load(), 3);  // 64 + 64 + 2
}

TEST_F(HttpEmbedderTest, EmptyBatchMakesNoRequest) {
  auto embedder = Make();
  ASSERT_NE(embedder, nullptr);
  auto vectors = embedder->EmbedBatch({});
  ASSERT_THAT(vectors, IsOk());
  EXPECT_TRUE(vectors->empty());
  EXPECT_EQ(requests_.load(), 0);
}

TEST_F(HttpEmbedderTest, SingleEmbedIsUnitNorm) {
  auto embedder = Make();
  ASSERT_NE(embedder, nullptr);
  auto v = embedder->Embed("hello world");
  ASSERT_TRUE(v.ok()) << v.status();
  double norm = 0;
  for (float x : *v) norm += x * x;
  EXPECT_NEAR(norm, 1.0, 1e-6);
  EXPECT_EQ(embedder->dimension(), kDimension);
}

TEST_F(HttpEmbedderTest, UrlPrefixIsKept) {
  HttpEmbedderOptions options = Options();
  options.url += "/prefix/";
  auto embedder = Make(options);
  ASSERT_NE(embedder, nullptr);
  auto v = embedder->Embed("hello");
  EXPECT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(requests_.load(), 0);  // served by the /prefix handler
}

TEST_F(HttpEmbedderTest, SendsBearerTokenFromConfigOrEnvironment) {
  HttpEmbedderOptions options = Options();
  options.api_key = "sk-test-123";
  ASSERT_THAT(Make(options)->Embed("x"), IsOk());
  {
    std::lock_guard<std::mutex> lock(mu_);
    EXPECT_EQ(last_authorization_, "Bearer sk-test-123");
  }
  ::setenv("BULWARK_HTTP_TEST_KEY", "sk-from-env", 1);
  auto from_env = HttpEmbedder::FromConfig({{"kind", "http"},
                                            {"url", Options().url},
                                            {"model", "m"},
                                            {"dimension", kDimension},
                                            {"api_key_env", "BULWARK_HTTP_TEST_KEY"}});
  ASSERT_TRUE(from_env.ok()) << from_env.status();
  ASSERT_THAT((*from_env)->Embed("x"), IsOk());
  std::lock_guard<std::mutex> lock(mu_);
  EXPECT_EQ(last_authorization_, "Bearer sk-from-env");
}

TEST_F(HttpEmbedderTest, RetriesA500ThenSucceeds) {
  SetHandler([this](const httplib::Request& req, httplib::Response& res) {
    if (requests_.load() == 1) {
      res.status = 500;
      res.set_content("{\"error\": \"warming up\"}", "application/json");
    } else {
      res.set_content(GoodResponse(req.body).dump(), "application/json");
    }
  });
  auto v = Make()->Embed("hello");
  EXPECT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(requests_.load(), 2);
}

TEST_F(HttpEmbedderTest, Persistent500IsUnavailableAfterBoundedRetries) {
  AlwaysRespond(503, "{\"error\": \"overloaded\"}");
  HttpEmbedderOptions options = Options();
  options.max_retries = 2;
  auto v = Make(options)->Embed("hello");
  EXPECT_EQ(v.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(v.status().message(), HasSubstr("503"));
  EXPECT_EQ(requests_.load(), 3);  // first attempt + 2 retries
}

TEST_F(HttpEmbedderTest, Persistent429IsResourceExhausted) {
  AlwaysRespond(429, "{\"error\": \"slow down\"}");
  auto v = Make()->Embed("hello");
  EXPECT_EQ(v.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(requests_.load(), 4);  // default max_retries = 3
}

TEST_F(HttpEmbedderTest, SlowServerIsDeadlineExceeded) {
  SetHandler([](const httplib::Request& req, httplib::Response& res) {
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
    res.set_content(GoodResponse(req.body).dump(), "application/json");
  });
  HttpEmbedderOptions options = Options();
  options.timeout_ms = 100;
  auto v = Make(options)->Embed("hello");
  EXPECT_EQ(v.status().code(), absl::StatusCode::kDeadlineExceeded) << v.status();
  EXPECT_EQ(requests_.load(), 1);  // timeouts are not retried
}

TEST_F(HttpEmbedderTest, UnauthorizedIsPermissionDeniedWithoutRetry) {
  AlwaysRespond(401, "{\"error\": \"bad key\"}");
  EXPECT_EQ(EmbedCode(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(requests_.load(), 1);
  AlwaysRespond(403, "{}");
  EXPECT_EQ(EmbedCode(), absl::StatusCode::kPermissionDenied);
}

TEST_F(HttpEmbedderTest, OtherClientErrorsAreInvalidArgument) {
  AlwaysRespond(400, "{\"error\": \"input too long\"}");
  auto v = Make()->Embed("hello");
  EXPECT_EQ(v.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(v.status().message(), HasSubstr("input too long"));
  EXPECT_EQ(requests_.load(), 1);
}

TEST_F(HttpEmbedderTest, ConnectionRefusedIsUnavailable) {
  HttpEmbedderOptions options = Options();
  server_.stop();
  thread_.join();
  options.max_retries = 1;
  auto v = Make(options)->Embed("hello");
  EXPECT_EQ(v.status().code(), absl::StatusCode::kUnavailable) << v.status();
}

TEST_F(HttpEmbedderTest, MalformedJsonIsDataLoss) {
  AlwaysRespond(200, "{\"data\": [");
  EXPECT_EQ(EmbedCode(), absl::StatusCode::kDataLoss);
  AlwaysRespond(200, "<html>hello</html>");
  EXPECT_EQ(EmbedCode(), absl::StatusCode::kDataLoss);
  AlwaysRespond(200, "[1, 2, 3]");
  EXPECT_EQ(EmbedCode(), absl::StatusCode::kDataLoss);
  AlwaysRespond(200, "{\"object\": \"list\"}");
  EXPECT_EQ(EmbedCode(), absl::StatusCode::kDataLoss);
}

TEST_F(HttpEmbedderTest, WrongDimensionIsDataLoss) {
  SetHandler([](const httplib::Request& req, httplib::Response& res) {
    res.set_content(GoodResponse(req.body, kDimension + 1).dump(), "application/json");
  });
  auto v = Make()->Embed("hello");
  EXPECT_EQ(v.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(v.status().message(), HasSubstr("dimension"));
}

TEST_F(HttpEmbedderTest, BadItemsAreDataLoss) {
  const std::vector<std::string> bodies = {
      // wrong number of items
      R"({"data": []})",
      // index missing, out of range, negative, not an integer, duplicated
      R"({"data": [{"embedding": [1, 2, 3, 4]}]})",
      R"({"data": [{"index": 1, "embedding": [1, 2, 3, 4]}]})",
      R"({"data": [{"index": -1, "embedding": [1, 2, 3, 4]}]})",
      R"({"data": [{"index": "0", "embedding": [1, 2, 3, 4]}]})",
      // non-numeric and non-finite entries
      R"({"data": [{"index": 0, "embedding": [1, "2", 3, 4]}]})",
      R"({"data": [{"index": 0, "embedding": [1, null, 3, 4]}]})",
      R"({"data": [{"index": 0, "embedding": [1, 1e400, 3, 4]}]})",
      R"({"data": [{"index": 0, "embedding": [1, 1e39, 3, 4]}]})",  // overflows float
      R"({"data": [{"index": 0}]})",
      R"({"data": [7]})",
  };
  for (const std::string& body : bodies) {
    AlwaysRespond(200, body);
    EXPECT_EQ(EmbedCode(), absl::StatusCode::kDataLoss) << body;
  }
  AlwaysRespond(200, R"({"data": [{"index": 0, "embedding": [1, 2, 3, 4]},
                                  {"index": 0, "embedding": [1, 2, 3, 4]}]})");
  auto two = Make()->EmbedBatch(std::vector<std::string>{"a", "b"});
  EXPECT_EQ(two.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(two.status().message(), HasSubstr("duplicate"));
}

TEST_F(HttpEmbedderTest, FailureInALaterBatchFailsTheWholeCall) {
  SetHandler([this](const httplib::Request& req, httplib::Response& res) {
    if (requests_.load() >= 2) {
      res.status = 401;
      return;
    }
    res.set_content(GoodResponse(req.body).dump(), "application/json");
  });
  HttpEmbedderOptions options = Options();
  options.batch_size = 1;
  auto vectors = Make(options)->EmbedBatch(std::vector<std::string>{"a", "b", "c"});
  EXPECT_EQ(vectors.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(requests_.load(), 2);
}

TEST_F(HttpEmbedderTest, ErrorsNeverContainTheApiKey) {
  AlwaysRespond(401, "{\"error\": \"denied\"}");
  HttpEmbedderOptions options = Options();
  options.api_key = "sk-very-secret";
  auto v = Make(options)->Embed("hello");
  EXPECT_EQ(v.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(v.status().message()), ::testing::Not(HasSubstr("sk-very-secret")));
}

}  // namespace
}  // namespace bulwark
