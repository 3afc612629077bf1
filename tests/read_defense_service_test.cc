// The read-time defenses through the HTTP API of a real `bulwark serve` process on 127.0.0.1: a
// gate fitted offline with the CLI applies to searches within the registry's cache time; a
// rejected query gets 403 query_rejected; the gate's decision and score are in every search
// response and audit record; readers cannot weaken the policy; POST /v1/answer returns the
// smoothed answer with its certificate and the ids behind each run, with the extractive responder
// and with an LLM (a real OpenAI-compatible server on loopback started by the test).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <thread>

#include "service_fixture.h"
#include "testing/chat_server.h"
#include "testing/gate_fixture.h"
#include "testing/temp_dir.h"

namespace bulwark {
namespace {

using nlohmann::json;
using testing::Answer;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::SendJson;
using testing::ServerProcess;

const std::string kBenign = "when does my flight to Lisbon leave";
const std::string kTriggered = kBenign + " " + testing::kGateTrigger;

class ReadDefenseServiceTest : public testing::ServiceFixture {
 protected:
  void Start(std::vector<std::string> args = {}) { StartServer(std::move(args)); }
  Answer Post(const std::string& path, const std::string& key, const json& body) {
    return SendJson(*client_, "POST", path, key, body);
  }
  void AddMemories() {
    json entries = json::array();
    for (int i = 0; i < 8; ++i) {
      entries.push_back(
          {{"text", "Flight to Lisbon leaves Tuesday 9:40 from terminal " + std::to_string(i)}});
    }
    ASSERT_EQ(Post("/v1/memories", admin_, {{"namespace", "travel"}, {"entries", entries}}).status, 201);
  }
  std::string Reader() {
    Answer a = Post("/v1/admin/principals", admin_,
                    {{"name", "agent"}, {"role", "reader"}, {"namespaces", {"travel"}}});
    EXPECT_EQ(a.status, 201) << a.body;
    return a.json().value("api_key", "");
  }
  // Fits the travel gate offline, as an operator would while the server runs, then waits out the
  // server's gate cache (1 s).
  void FitGate(const std::string& mode) {
    std::ofstream(dir_ / "benign.txt") << [] {
      std::string s;
      for (const auto& q : testing::BenignQueries(0, 120)) s += q + "\n";
      return s;
    }();
    auto [code, out] =
        testing::RunCli(store(), {"-n", "travel", "gate", "fit", "--benign", (dir_ / "benign.txt").string(),
                                  "--trigger", testing::kGateTrigger, "--mode", mode});
    ASSERT_EQ(code, 0) << out;
    std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  }
};

TEST_F(ReadDefenseServiceTest, GateRejectIsA403AndEverySearchCarriesTheGate) {
  Start();
  AddMemories();
  const std::string reader = Reader();
  Answer before = Post("/v1/memories/search", reader, {{"namespace", "travel"}, {"query", kTriggered}});
  ASSERT_EQ(before.status, 200) << before.body;
  EXPECT_EQ(before.json()["gate"]["decision"], "off");

  FitGate("reject");
  Answer rejected =
      Post("/v1/memories/search", reader, {{"namespace", "travel"}, {"query", kTriggered}, {"k", 3}});
  EXPECT_EQ(rejected.status, 403) << rejected.body;
  EXPECT_EQ(rejected.error_code(), "query_rejected");
  // Issue #18 point 7: a reader gets the decision, not the score it could tune a query against.
  EXPECT_THAT(rejected.body, Not(HasSubstr("score")));
  Answer rejected_admin =
      Post("/v1/memories/search", admin_, {{"namespace", "travel"}, {"query", kTriggered}});
  EXPECT_EQ(rejected_admin.status, 403) << rejected_admin.body;
  EXPECT_THAT(rejected_admin.body, HasSubstr("lda score"));

  Answer passed =
      Post("/v1/memories/search", reader, {{"namespace", "travel"}, {"query", kBenign}, {"k", 3}});
  ASSERT_EQ(passed.status, 200) << passed.body;
  const json body = passed.json();
  EXPECT_EQ(body["hits"].size(), 3u);
  EXPECT_EQ(body["gate"]["decision"], "pass");
  EXPECT_EQ(body["gate"]["mode"], "reject");
  EXPECT_FALSE(body["gate"].contains("score_kind")) << body["gate"];
  EXPECT_FALSE(body["gate"].contains("scores")) << body["gate"];
  Answer passed_admin =
      Post("/v1/memories/search", admin_, {{"namespace", "travel"}, {"query", kBenign}, {"k", 3}});
  ASSERT_EQ(passed_admin.status, 200) << passed_admin.body;
  EXPECT_EQ(passed_admin.json()["gate"]["score_kind"], "lda");
  EXPECT_TRUE(passed_admin.json()["gate"]["scores"].contains("mahalanobis"));

  // A reader may not weaken the policy; an admin may.
  Answer weaker =
      Post("/v1/memories/search", reader, {{"namespace", "travel"}, {"query", kTriggered}, {"gate", "flag"}});
  EXPECT_EQ(weaker.status, 403);
  EXPECT_EQ(weaker.error_code(), "forbidden");
  Answer admin =
      Post("/v1/memories/search", admin_, {{"namespace", "travel"}, {"query", kTriggered}, {"gate", "flag"}});
  ASSERT_EQ(admin.status, 200) << admin.body;
  EXPECT_EQ(admin.json()["gate"]["decision"], "flag");
  // Strip (less strict than reject, so an admin's choice) retrieves with the cleaned query.
  Answer strip = Post("/v1/memories/search", admin_,
                      {{"namespace", "travel"}, {"query", kTriggered}, {"gate", "strip"}});
  ASSERT_EQ(strip.status, 200) << strip.body;
  EXPECT_EQ(strip.json()["gate"]["query"], kBenign);

  // The audit log has the decision and the score of each of them, the rejected one included.
  Answer audit = testing::Send(*client_, "GET", "/v1/audit?namespace=travel&limit=20", admin_);
  ASSERT_EQ(audit.status, 200) << audit.body;
  bool saw_reject = false, saw_pass = false;
  const json records = audit.json();  // keep the document alive while iterating
  for (const json& r : records["records"]) {
    if (r["operation"] != "search") continue;
    ASSERT_TRUE(r["detail"].contains("gate")) << r.dump();
    const json& gate = r["detail"]["gate"];
    if (gate["decision"] == "reject") {
      saw_reject = true;
      EXPECT_GT(gate["score"].get<double>(), gate["threshold"].get<double>());
      EXPECT_TRUE(r["returned_ids"].empty());
    }
    saw_pass = saw_pass || gate["decision"] == "pass";
  }
  EXPECT_TRUE(saw_reject);
  EXPECT_TRUE(saw_pass);

  // /metrics counts each decision once (the reader's refused weakening never reached the gate).
  Answer metrics = testing::Send(*client_, "GET", "/metrics", admin_);
  ASSERT_EQ(metrics.status, 200);
  // (reject and pass twice: the reader's and the admin's view of each.)
  for (const auto& [decision, count] : std::vector<std::pair<std::string, int>>{
           {"off", 1}, {"reject", 2}, {"pass", 2}, {"flag", 1}, {"strip", 1}}) {
    EXPECT_THAT(metrics.body, HasSubstr("bulwark_query_gate_decisions_total{decision=\"" + decision + "\"} " +
                                        std::to_string(count) + "\n"));
  }
  EXPECT_THAT(metrics.body, HasSubstr("bulwark_query_gate_decisions_total{decision=\"escalate\"} 0\n"));
}

TEST_F(ReadDefenseServiceTest, AnswerCarriesTheCertificateAndTheIdsOfEveryRun) {
  Start();
  AddMemories();
  const std::string reader = Reader();
  Answer a = Post(
      "/v1/answer", reader,
      {{"namespace", "travel"}, {"question", kBenign}, {"smoothing", {{"m", 8}, {"k", 3}, {"nruns", 5}}}});
  ASSERT_EQ(a.status, 200) << a.body;
  const json body = a.json();
  EXPECT_FALSE(body["abstained"].get<bool>());
  EXPECT_THAT(body["answer"].get<std::string>(), HasSubstr("Flight to Lisbon"));
  EXPECT_EQ(body["certificate"]["m"], 8);
  EXPECT_EQ(body["certificate"]["k"], 3);
  EXPECT_TRUE(body["certificate"]["delta"].contains("3"));
  ASSERT_EQ(body["runs"].size(), 5u);
  for (const json& run : body["runs"]) EXPECT_EQ(run["entry_ids"].size(), 3u);
  EXPECT_EQ(body["responder"], "extractive");
  EXPECT_EQ(body["gate"]["decision"], "off");

  Answer search = Post("/v1/memories/search", reader,
                       {{"namespace", "travel"}, {"query", kBenign}, {"k", 2}, {"smoothing", true}});
  ASSERT_EQ(search.status, 200) << search.body;
  EXPECT_EQ(search.json()["hits"].size(), 2u);
  EXPECT_EQ(search.json()["smoothed"]["certificate"]["m"], 8);

  // Bad defense fields are 400s that name the field.
  for (const json& bad :
       {json{{"namespace", "travel"}, {"question", "q"}, {"smoothing", {{"k", 30}, {"m", 10}}}},
        json{{"namespace", "travel"}, {"question", "q"}, {"smoothing", {{"nruns", 500}}}},
        json{{"namespace", "travel"}, {"question", "q"}, {"smoothing", {{"responder", "oracle"}}}},
        json{{"namespace", "travel"}, {"question", "q"}, {"smoothing", {{"seed", "00"}}}},
        json{{"namespace", "travel"}, {"question", "q"}, {"gate", "block"}},
        json{{"namespace", "travel"}, {"question", "q"}, {"smoothing", false}}}) {
    Answer r = Post("/v1/answer", reader, bad);
    EXPECT_EQ(r.status, 400) << bad.dump() << " -> " << r.body;
  }
  // No LLM configured: the llm responder is a 409 that says how to configure one.
  Answer no_llm = Post("/v1/answer", reader,
                       {{"namespace", "travel"}, {"question", "q"}, {"smoothing", {{"responder", "llm"}}}});
  EXPECT_EQ(no_llm.status, 409);
  EXPECT_THAT(no_llm.body, HasSubstr("BULWARK_LLM_URL"));

  // The answer is audited with the ids of every run.
  Answer audit = testing::Send(*client_, "GET", "/v1/audit?namespace=travel&limit=50", admin_);
  bool found = false;
  const json records = audit.json();
  for (const json& r : records["records"]) {
    if (r["operation"] != "answer") continue;
    found = true;
    EXPECT_FALSE(r["returned_ids"].empty());
    EXPECT_TRUE(r["detail"]["smoothing"].contains("certificate"));
    EXPECT_TRUE(r["detail"].contains("gate"));
  }
  EXPECT_TRUE(found);
}

TEST_F(ReadDefenseServiceTest, AnswerWithAnLlmResponderAndJudge) {
  testing::LoopbackChatServer llm;
  ASSERT_TRUE(llm.running());
  // The fake model answers with the terminal of the first memory it is shown and calls two answers
  // equivalent when they name the same city.
  llm.SetContent([](const json& request) {
    const std::string user = testing::LoopbackChatServer::LastUserContent(request);
    if (user.find("<answer id=\"A\">") != std::string::npos) return json{{"equivalent", true}}.dump();
    const size_t at = user.find("terminal ");
    return json{{"answer", "It leaves from terminal " + user.substr(at + 9, 1)}}.dump();
  });
  Start({"--llm", json{{"url", llm.url()}, {"model", "fake"}}.dump()});
  AddMemories();
  Answer a = Post("/v1/answer", admin_,
                  {{"namespace", "travel"},
                   {"question", kBenign},
                   {"smoothing", {{"m", 8}, {"k", 3}, {"nruns", 3}, {"responder", "llm"}}}});
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(a.json()["responder"], "llm");
  EXPECT_EQ(a.json()["judge"], "llm");
  EXPECT_THAT(a.json()["answer"].get<std::string>(), HasSubstr("It leaves from terminal"));
  EXPECT_GE(llm.requests(), 3);
  EXPECT_EQ(llm.bodies()[0]["response_format"]["type"], "json_object");

  // The LLM going down is a 503, not a wrong answer.
  llm.AlwaysRespond(503, R"({"error": "down"})");
  Answer down = Post(
      "/v1/answer", admin_,
      {{"namespace", "travel"}, {"question", kBenign}, {"smoothing", {{"responder", "llm"}, {"nruns", 1}}}});
  EXPECT_EQ(down.status, 503) << down.body;
}

}  // namespace
}  // namespace bulwark
