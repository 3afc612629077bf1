// HttpExtractionTarget (http_extraction_target.h) against the real HTTP service, in process on
// 127.0.0.1 with a reader key: the attacks run over HTTP and see exactly the hits the in-process
// target sees, and RunExtractionAttacks writes the same log. Against a scripted loopback server:
// the key and the session header are sent, 403 becomes a refused round, 429 is retried after
// Retry-After, and answers that are not search answers are refused.
#include "attack/extraction/http_extraction_target.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <sstream>
#include <thread>

#include "attack/extraction/extraction_fixture.h"
#include "attack/extraction/mextra.h"
#include "attack/extraction/run_extraction.h"
#include "auth/principal_registry.h"
#include "server/http_server.h"
#include "testing/status_matchers.h"

namespace bulwark::extraction {
namespace {

using ::bulwark::testing::IsOk;

TEST(HttpExtractionTargetTest, AttacksOverHttpSeeWhatTheyWouldSeeInProcess) {
  testing::FixtureStore fixture(120);
  auto registry = PrincipalRegistry::Open(fixture.store_dir() / "bulwark.db", Env::Default());
  ASSERT_TRUE(registry.ok()) << registry.status();
  ASSERT_TRUE(
      (*registry)
          ->AddPrincipal({.name = "attacker", .role = Role::kReader, .namespaces = {testing::kNamespace}})
          .ok());
  auto key = (*registry)->CreateKey("attacker");
  ASSERT_TRUE(key.ok()) << key.status();
  server::ServerOptions options;
  options.port = 0;
  options.threads = 2;
  options.rate_per_second = 0;
  auto server = server::HttpServer::Create(options, {.store = fixture.store(), .registry = registry->get()});
  ASSERT_TRUE(server.ok()) << server.status();
  auto port = (*server)->Bind();
  ASSERT_TRUE(port.ok()) << port.status();
  std::thread serving([&] { (void)(*server)->Serve(); });

  auto http = HttpExtractionTarget::Create({.url = "http://127.0.0.1:" + std::to_string(*port),
                                            .api_key = *key,
                                            .name_space = testing::kNamespace});
  ASSERT_TRUE(http.ok()) << http.status();
  ExtractionAttackOptions run{
      .attacks = {"mextra_general", "rag_thief"}, .budget = {.queries = 6, .k = 3}, .seed = 4};
  run.embedder_config = {{"kind", "lexical"}, {"synonyms", false}};
  std::ostringstream over_http, in_process;
  auto remote = RunExtractionAttacks(run, **http, over_http);
  StoreExtractionTarget local = fixture.Target();
  auto direct = RunExtractionAttacks(run, local, in_process);
  (*server)->Stop();
  serving.join();
  ASSERT_TRUE(remote.ok()) << remote.status();
  ASSERT_TRUE(direct.ok()) << direct.status();
  ASSERT_EQ(remote->size(), 2u);
  EXPECT_GT((*remote)[0].unique_hits, 3u);
  EXPECT_EQ(over_http.str(), in_process.str()) << "same queries, same hits, same log";

  auto wrong_key = HttpExtractionTarget::Create({.url = "http://127.0.0.1:1",
                                                 .api_key = "bwk_x",
                                                 .name_space = testing::kNamespace,
                                                 .timeout_ms = 200});
  ASSERT_THAT(wrong_key, IsOk());
  EXPECT_EQ((*wrong_key)->Query("s", "q", 3).status().code(), absl::StatusCode::kUnavailable);
}

class ScriptedServer {
 public:
  explicit ScriptedServer(httplib::Server::Handler handler) {
    server_.Post("/v1/memories/search", std::move(handler));
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    for (int i = 0; i < 1000 && !server_.is_running(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ~ScriptedServer() {
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
};

TEST(HttpExtractionTargetTest, HeadersRefusalsRetriesAndBadAnswers) {
  std::mutex mu;
  std::vector<std::string> sessions, keys;
  int calls = 0;
  ScriptedServer server([&](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(mu);
    sessions.push_back(req.get_header_value("X-Bulwark-Session"));
    keys.push_back(req.get_header_value("Authorization"));
    const nlohmann::json body = nlohmann::json::parse(req.body);
    const std::string q = body["query"];
    if (q == "blocked") {
      res.status = 403;
      res.set_content(R"({"error":{"code":"session_blocked","message":"no"}})", "application/json");
    } else if (q == "busy" && calls++ == 0) {
      res.status = 429;
      res.set_header("Retry-After", "0");
      res.set_content(R"({"error":{"code":"rate_limited","message":"slow down"}})", "application/json");
    } else if (q == "garbage") {
      res.set_content(R"({"hits": [{"id": 1}]})", "application/json");
    } else {
      res.set_content(nlohmann::json{{"hits", {{{"id", "A"}, {"text", q}, {"score", 0.5}}}}}.dump(),
                      "application/json");
    }
  });
  auto target = HttpExtractionTarget::Create({.url = server.url(), .api_key = "bwk_k", .name_space = "ns"});
  ASSERT_TRUE(target.ok()) << target.status();
  auto hits = (*target)->Query("sess-1", "hello", 4);
  ASSERT_TRUE(hits.ok()) << hits.status();
  ASSERT_EQ(hits->size(), 1u);
  EXPECT_EQ((*hits)[0].text, "hello");
  EXPECT_FLOAT_EQ((*hits)[0].score, 0.5f);
  auto blocked = (*target)->Query("sess-1", "blocked", 4);
  EXPECT_EQ(blocked.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_NE(blocked.status().message().find("session_blocked"), std::string_view::npos);
  EXPECT_TRUE((*target)->Query("sess-1", "busy", 4).ok()) << "retried after Retry-After";
  EXPECT_EQ((*target)->Query("sess-1", "garbage", 4).status().code(), absl::StatusCode::kDataLoss);
  {
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_EQ(sessions.front(), "sess-1");
    EXPECT_EQ(keys.front(), "Bearer bwk_k");
  }
  // A refused round is recorded and the attack goes on.
  SessionRecorder recorder(target->get(), "x", "sess-2", 4);
  auto step = recorder.Send("blocked");
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_TRUE((*step)->refused);
  EXPECT_TRUE((*step)->hits.empty());
  EXPECT_EQ(
      HttpExtractionTarget::Create({.url = "ftp://x", .api_key = "k", .name_space = "n"}).status().code(),
      absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace bulwark::extraction
