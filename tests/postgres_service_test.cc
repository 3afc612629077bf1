// `bulwark serve --backend postgresql://...` end to end (issue #17 point 1): the real binary on
// 127.0.0.1 port 0 over a database of a throwaway PostgreSQL cluster. Memories are added,
// searched, quarantined, released and deleted over HTTP and the audit log answers; after a restart
// the state (entries, principals, the audit chain) is still there; a row edited directly in
// PostgreSQL is withheld from search and named by `bulwark verify`; without --keyring the CLI
// refuses a PostgreSQL store with a clear error.
#include <absl/strings/str_cat.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "service_harness.h"
#include "storage/postgresql/testing/pg_test_environment.h"
#include "testing/temp_dir.h"

namespace bulwark {
namespace {

using ::bulwark::testing::Answer;
using ::bulwark::testing::ServerProcess;
using ::testing::HasSubstr;
using json = nlohmann::json;

class PostgresServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cluster = ::bulwark::testing::SharedPgCluster();
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *cluster;
    ASSERT_TRUE(cluster_->CreateDatabase("served").ok());
    url_ = absl::StrCat("postgresql://postgres@127.0.0.1:", cluster_->port(), "/served");
    keyring_ = (dir_.path() / "keyring.json").string();
  }
  void Start() {
    server_ = ServerProcess::StartAt(url_, (dir_.path() / "serve.stderr").string(), {"--keyring", keyring_});
    ASSERT_NE(server_, nullptr) << "the server did not start";
    client_ = server_->Client();
  }
  Answer Call(const std::string& method, const std::string& path, const json& body = nullptr) {
    if (body.is_null()) return ::bulwark::testing::Send(*client_, method, path, admin_);
    return ::bulwark::testing::SendJson(*client_, method, path, admin_, body);
  }
  std::string Add(const std::string& text) {
    Answer a = Call("POST", "/v1/memories", {{"namespace", "a"}, {"text", text}});
    EXPECT_EQ(a.status, 201) << a.body;
    return a.json()["entry"].value("id", "");
  }
  std::vector<std::string> SearchIds(const std::string& query) {
    Answer a = Call("POST", "/v1/memories/search", {{"namespace", "a"}, {"query", query}, {"k", 10}});
    EXPECT_EQ(a.status, 200) << a.body;
    std::vector<std::string> ids;
    const json j = a.json();
    for (const auto& h : j["hits"]) ids.push_back(h["id"]);
    return ids;
  }
  // `bulwark --store URL --keyring K ARGS...`: exit code and stdout.
  std::pair<int, std::string> Cli(std::vector<std::string> args) {
    args.insert(args.begin(), {"--keyring", keyring_});
    return ::bulwark::testing::RunCli(url_, std::move(args));
  }

  ::bulwark::testing::TempDir dir_;
  ::bulwark::testing::PgTestCluster* cluster_ = nullptr;
  std::string url_;
  std::string keyring_;
  std::string admin_;
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(PostgresServiceTest, ServesAStoreInPostgresAcrossRestarts) {
  // Without --keyring a PostgreSQL store is refused before anything is made.
  EXPECT_EQ(::bulwark::testing::RunCli(url_, {"stats"}).first, 2);
  int code = 0;
  EXPECT_EQ(ServerProcess::StartAt(url_, (dir_.path() / "nokey.stderr").string(), {}, &code), nullptr);
  EXPECT_EQ(code, 2);

  Start();
  ASSERT_TRUE(server_->admin_key().has_value()) << "a fresh database gets a store and an admin";
  admin_ = *server_->admin_key();
  EXPECT_EQ(server_->events().front()["event"], "store_created");
  const std::string wifi = Add("The office wifi password is hunter2");
  const std::string garage = Add("The garage door code is 1357");
  const std::string lunch = Add("Lunch with Maria is on Thursday");
  EXPECT_EQ(SearchIds("garage door code").front(), garage);

  ASSERT_EQ(Call("POST", "/v1/memories/" + lunch + "/quarantine?namespace=a").status, 200);
  EXPECT_THAT(SearchIds("lunch with Maria"), ::testing::Not(::testing::Contains(lunch)));
  Answer listed = Call("GET", "/v1/quarantine?namespace=a");
  ASSERT_EQ(listed.status, 200) << listed.body;
  ASSERT_EQ(listed.json()["entries"].size(), 1u);
  ASSERT_EQ(Call("POST", "/v1/quarantine/" + lunch + "/release?namespace=a").status, 200);
  EXPECT_THAT(SearchIds("lunch with Maria"), ::testing::Contains(lunch));
  ASSERT_EQ(Call("DELETE", "/v1/memories/" + wifi + "?namespace=a").status, 200);
  EXPECT_THAT(SearchIds("office wifi password"), ::testing::Not(::testing::Contains(wifi)));

  ASSERT_EQ(Call("POST", "/v1/admin/verify").status, 200);  // flushes the audit log
  Answer audit = Call("GET", "/v1/audit?entry_id=" + garage);
  ASSERT_EQ(audit.status, 200) << audit.body;
  ASSERT_FALSE(audit.json()["records"].empty()) << audit.body;
  EXPECT_EQ(audit.json()["records"][0]["operation"], "search");

  // Restart: the admin key, the entries and the signed audit chain are still there.
  server_->Signal(SIGTERM);
  EXPECT_EQ(server_->Wait(std::chrono::seconds(10)), 0);
  Start();
  EXPECT_FALSE(server_->admin_key().has_value());
  EXPECT_EQ(SearchIds("garage door code").front(), garage);
  EXPECT_EQ(Call("GET", "/v1/memories/" + wifi + "?namespace=a").json()["entry"]["state"], "deleted");
  Answer verified = Call("POST", "/v1/admin/verify");
  ASSERT_EQ(verified.status, 200) << verified.body;
  EXPECT_EQ(verified.json()["ok"], true) << verified.body;
  EXPECT_GT(verified.json()["audit"].value("records", 0), 0) << verified.body;
  EXPECT_EQ(verified.json()["audit"].value("unsigned_records", -1), 0) << "the chain is signed";

  // The CLI reaches the same store.
  auto [stats_code, stats] = Cli({"--json", "stats"});
  ASSERT_EQ(stats_code, 0) << stats;
  EXPECT_THAT(stats, HasSubstr("\"active\":2"));

  // Someone with database access edits a row: withheld from search, named by verify.
  ASSERT_TRUE(
      cluster_
          ->ExecSql("served",
                    "UPDATE entries SET text = 'The garage door code is 0000' WHERE id = '" + garage + "'")
          .ok());
  Answer s = Call("POST", "/v1/memories/search", {{"namespace", "a"}, {"query", "garage door code"}});
  ASSERT_EQ(s.status, 200) << s.body;
  EXPECT_THAT(s.body, ::testing::Not(HasSubstr("0000")));
  EXPECT_EQ(s.json()["withheld_candidates"], 1) << s.body;
  auto [verify_code, report] = Cli({"verify"});
  EXPECT_EQ(verify_code, 1) << report;
  EXPECT_THAT(report, HasSubstr(garage));
}

}  // namespace
}  // namespace bulwark
