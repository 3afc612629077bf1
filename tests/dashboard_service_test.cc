// Issue #16, the server side of the dashboard, against a real `bulwark serve` on 127.0.0.1: the
// embedded page and its security headers, GET /v1/whoami, GET /v1/admin/stats (who may read it,
// what it counts), a reason on release and reject, and the headers every API answer carries.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "service_harness.h"
#include "testing/temp_dir.h"

namespace bulwark {
namespace {

using nlohmann::json;
using testing::Answer;
using ::testing::HasSubstr;
using testing::Send;
using testing::SendJson;
using testing::ServerProcess;

constexpr char kUiPolicy[] =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

class DashboardServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = ServerProcess::Start(dir_.path() / "store", {});
    ASSERT_NE(server_, nullptr) << "server did not start";
    ASSERT_TRUE(server_->admin_key().has_value());
    admin_ = *server_->admin_key();
    client_ = server_->Client();
  }
  Answer Call(const std::string& method, const std::string& path, const std::string& key,
              const json& body = nullptr) {
    return body.is_null() ? Send(*client_, method, path, key) : SendJson(*client_, method, path, key, body);
  }
  std::string NewPrincipal(const std::string& name, const std::string& role, std::vector<std::string> ns) {
    Answer a = Call("POST", "/v1/admin/principals", admin_,
                    {{"name", name}, {"role", role}, {"namespaces", ns}, {"create_key", true}});
    EXPECT_EQ(a.status, 201) << a.body;
    return a.json().value("api_key", "");
  }

  bulwark::testing::TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<httplib::Client> client_;
  std::string admin_;
};

TEST_F(DashboardServiceTest, ServesThePageWithoutKeyUnderAStrictPolicy) {
  Answer index = Send(*client_, "GET", "/ui/", "");
  ASSERT_EQ(index.status, 200) << index.body;
  EXPECT_THAT(index.header("Content-Type"), HasSubstr("text/html"));
  EXPECT_THAT(index.body, HasSubstr("<div id=\"app\"></div>"));
  EXPECT_THAT(index.body, HasSubstr("src=\"/ui/assets/app.js\""));
  EXPECT_EQ(index.header("Content-Security-Policy"), kUiPolicy);
  EXPECT_EQ(index.header("X-Content-Type-Options"), "nosniff");
  EXPECT_EQ(index.header("Referrer-Policy"), "no-referrer");
  EXPECT_EQ(index.headers.count("Set-Cookie"), 0u);
  EXPECT_EQ(index.headers.count("Content-Security-Policy"), 1u);

  Answer script = Send(*client_, "GET", "/ui/assets/app.js", "");
  ASSERT_EQ(script.status, 200);
  EXPECT_THAT(script.header("Content-Type"), HasSubstr("text/javascript"));
  EXPECT_GT(script.body.size(), 1000u);
  EXPECT_EQ(script.header("Content-Security-Policy"), kUiPolicy);
  Answer style = Send(*client_, "GET", "/ui/assets/index.css", "");
  ASSERT_EQ(style.status, 200);
  EXPECT_THAT(style.header("Content-Type"), HasSubstr("text/css"));

  Answer redirect = Send(*client_, "GET", "/ui", "");
  EXPECT_EQ(redirect.status, 308);
  EXPECT_EQ(redirect.header("Location"), "/ui/");

  for (const char* missing : {"/ui/assets/nope.js", "/ui/assets/..%2Findex.html", "/ui/index.html"}) {
    Answer a = Send(*client_, "GET", missing, "");
    EXPECT_EQ(a.status, 404) << missing;
    EXPECT_EQ(a.header("X-Content-Type-Options"), "nosniff") << missing;
  }
}

TEST_F(DashboardServiceTest, ApiAnswersCannotBeFramedOrSniffed) {
  for (const std::string& key : {admin_, std::string()}) {
    Answer a = Send(*client_, "GET", "/v1/namespaces", key);
    EXPECT_EQ(a.header("X-Content-Type-Options"), "nosniff");
    EXPECT_EQ(a.header("Content-Security-Policy"), "default-src 'none'; frame-ancestors 'none'");
    EXPECT_EQ(a.headers.count("Set-Cookie"), 0u);
  }
}

TEST_F(DashboardServiceTest, WhoAmINamesTheCallersRoleAndGrants) {
  Answer me = Call("GET", "/v1/whoami", admin_);
  ASSERT_EQ(me.status, 200) << me.body;
  EXPECT_EQ(me.json()["role"], "admin");
  EXPECT_EQ(me.json()["service_admin"], true);
  EXPECT_EQ(me.json()["key_id"].get<std::string>().size(), 16u);

  const std::string reader = NewPrincipal("reader-1", "reader", {"alice"});
  me = Call("GET", "/v1/whoami", reader);
  ASSERT_EQ(me.status, 200) << me.body;
  EXPECT_EQ(me.json()["principal"], "reader-1");
  EXPECT_EQ(me.json()["role"], "reader");
  EXPECT_EQ(me.json()["namespaces"], json::array({"alice"}));
  EXPECT_EQ(me.json()["service_admin"], false);
  EXPECT_EQ(Call("GET", "/v1/whoami", "").status, 401);
  EXPECT_EQ(Call("GET", "/v1/whoami?x=1", reader).status, 400);
}

TEST_F(DashboardServiceTest, StatsAreForServiceAdminsAndCountWhatHappened) {
  const std::string scoped = NewPrincipal("ns-admin", "admin", {"alice"});
  EXPECT_EQ(Call("GET", "/v1/admin/stats", scoped).status, 403);
  EXPECT_EQ(Call("GET", "/v1/admin/stats", "").status, 401);
  EXPECT_EQ(Call("GET", "/v1/admin/stats", "bwk_0123456789abcdef_nope").status, 401);

  Answer added = Call("POST", "/v1/memories", admin_, {{"namespace", "alice"}, {"text", "Alice likes tea"}});
  ASSERT_EQ(added.status, 201) << added.body;
  const std::string id = added.json()["entry"]["id"];
  ASSERT_EQ(Call("POST", "/v1/memories/" + id + "/quarantine", admin_, {{"namespace", "alice"}}).status, 200);
  // Release and reject take a reason, recorded in the audit log.
  Answer released = Call("POST", "/v1/quarantine/" + id + "/release", admin_,
                         {{"namespace", "alice"}, {"reason", "benign"}});
  ASSERT_EQ(released.status, 200) << released.body;
  Answer audit = Call("GET", "/v1/audit?namespace=alice&entry_id=" + id, admin_);
  ASSERT_EQ(audit.status, 200) << audit.body;
  bool found = false;
  const json records = audit.json()["records"];
  for (const json& r : records) {
    if (r["operation"] == "release") found = r["detail"].value("reason", std::string()) == "benign";
  }
  EXPECT_TRUE(found) << audit.body;

  Answer stats = Call("GET", "/v1/admin/stats", admin_);
  ASSERT_EQ(stats.status, 200) << stats.body;
  const json s = stats.json();
  EXPECT_EQ(s["interval_s"], 10.0);
  EXPECT_EQ(s["capacity"], 360);
  EXPECT_TRUE(s["windows"].is_array());
  EXPECT_GE(s["totals"]["requests"].get<int64_t>(), 8);
  EXPECT_GE(s["totals"]["rejects"]["unauthenticated"].get<int64_t>(), 2);
  EXPECT_GE(s["totals"]["rejects"]["forbidden"].get<int64_t>(), 1);
  EXPECT_EQ(s["totals"]["quarantined"], 1);
  EXPECT_EQ(s["totals"]["released"], 1);
  EXPECT_EQ(s["totals"]["entries_added"], 1);
  EXPECT_EQ(s["totals"]["signature_failures"], 0);
  EXPECT_TRUE(s["totals"]["gate_decisions"].contains("reject"));
  EXPECT_GT(s["now_us"].get<int64_t>(), 0);
  EXPECT_EQ(Call("GET", "/v1/admin/stats?window=1", admin_).status, 400);
}

// Under --insecure-dev the page's own calls (same origin, loopback, no key) are answered, as
// request_guards.h allows; a cross-site page still is not.
TEST(DashboardInsecureDevTest, SameOriginCallsOfThePagePass) {
  bulwark::testing::TempDir dir;
  const auto store = dir.path() / "dev";
  ASSERT_EQ(bulwark::testing::RunCli(store, {"init", "--no-synonyms"}).first, 0);
  auto dev = ServerProcess::Start(store, {"--insecure-dev"});
  ASSERT_NE(dev, nullptr);
  auto client = dev->Client();
  const std::string origin = "http://127.0.0.1:" + std::to_string(dev->port());
  EXPECT_EQ(Send(*client, "GET", "/ui/", "", "", {{"Sec-Fetch-Site", "none"}}).status, 200);
  Answer me = Send(*client, "GET", "/v1/whoami", "", "", {{"Sec-Fetch-Site", "same-origin"}});
  ASSERT_EQ(me.status, 200) << me.body;
  EXPECT_EQ(me.json()["role"], "admin");
  Answer added =
      SendJson(*client, "POST", "/v1/memories", "", {{"namespace", "dev"}, {"text", "from the page"}},
               {{"Origin", origin}, {"Sec-Fetch-Site", "same-origin"}});
  EXPECT_EQ(added.status, 201) << added.body;
  Answer foreign = Send(*client, "GET", "/v1/admin/stats", "", "",
                        {{"Origin", "https://evil.example"}, {"Sec-Fetch-Site", "cross-site"}});
  EXPECT_EQ(foreign.status, 403) << foreign.body;
}

}  // namespace
}  // namespace bulwark
