// `bulwark migrate` end to end (issue #17 point 1): a store made by the real binaries (a server
// for the audited traffic, the CLI for the rest) with entries active, quarantined, deleted and
// purged, principals and keys, a fitted query gate and signed audit records is migrated into
// PostgreSQL, where `verify` and `audit --verify` are clean and searches return the same hits;
// migrated back into a new directory it is clean again with the same hits. A row tampered in the
// source stops the migration with the row named, and nothing is written to the target.
#include <absl/strings/str_cat.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <fstream>

#include "service_harness.h"
#include "storage/postgresql/testing/pg_test_environment.h"
#include "testing/temp_dir.h"

namespace bulwark {
namespace {

using ::bulwark::testing::Answer;
using ::bulwark::testing::ServerProcess;
using ::testing::HasSubstr;
using json = nlohmann::json;

// Runs `bulwark ARGS...` (arguments single-quoted; none contains a quote): exit code, and stdout
// followed by stderr.
std::pair<int, std::string> Bulwark(const std::vector<std::string>& args) {
  std::string command = ::bulwark::testing::BulwarkBinary();
  for (const auto& a : args) command += " '" + a + "'";
  command += " 2>&1";
  std::string out;
  FILE* p = popen(command.c_str(), "r");
  if (!p) return {-1, ""};
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

class MigrateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cluster = ::bulwark::testing::SharedPgCluster();
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *cluster;
    source_ = (dir_.path() / "source").string();
    keyring_ = (dir_.path() / "source" / "keyring.json").string();
  }
  std::string Url(const std::string& db) {
    EXPECT_TRUE(cluster_->CreateDatabase(db).ok());
    return absl::StrCat("postgresql://postgres@127.0.0.1:", cluster_->port(), "/", db);
  }
  // The ids `search` finds in namespace a of the store at `location`.
  std::vector<std::string> Hits(const std::string& location, const std::string& query) {
    auto [code, out] =
        Bulwark({"--store", location, "--keyring", keyring_, "-n", "a", "--json", "search", query});
    EXPECT_EQ(code, 0) << out;
    std::vector<std::string> ids;
    const json j = json::parse(out, nullptr, false);
    if (!j.is_object()) return ids;
    for (const auto& h : j["hits"]) ids.push_back(h["id"]);
    return ids;
  }
  void ExpectVerifies(const std::string& location) {
    auto [code, out] = Bulwark({"--store", location, "--keyring", keyring_, "verify"});
    EXPECT_EQ(code, 0) << location << ": " << out;
    auto [audit_code, audit_out] = Bulwark({"--store", location, "--keyring", keyring_, "audit", "--verify"});
    EXPECT_EQ(audit_code, 0) << location << ": " << audit_out;
  }
  // The source: traffic through a server (audited), then the CLI.
  void MakeSource() {
    auto server = ServerProcess::Start(source_, {});
    ASSERT_NE(server, nullptr);
    ASSERT_TRUE(server->admin_key().has_value());
    const std::string admin = *server->admin_key();
    auto client = server->Client();
    auto add = [&](const std::string& text) {
      Answer a = ::bulwark::testing::SendJson(*client, "POST", "/v1/memories", admin,
                                              {{"namespace", "a"}, {"text", text}});
      EXPECT_EQ(a.status, 201) << a.body;
      return a.json()["entry"].value("id", "");
    };
    garage_ = add("The garage door code is 1357");
    const std::string lunch = add("Lunch with Maria is on Thursday at noon");
    const std::string wifi = add("The office wifi password is hunter2");
    purged_ = add("The old alarm code was 2468");
    add("The garage is painted blue and holds two bicycles");
    EXPECT_EQ(
        ::bulwark::testing::Send(*client, "POST", "/v1/memories/" + lunch + "/quarantine?namespace=a", admin)
            .status,
        200);
    EXPECT_EQ(
        ::bulwark::testing::Send(*client, "DELETE", "/v1/memories/" + wifi + "?namespace=a", admin).status,
        200);
    for (const char* q : {"garage door code", "lunch with Maria", "garage colour"}) {
      EXPECT_EQ(::bulwark::testing::SendJson(*client, "POST", "/v1/memories/search", admin,
                                             {{"namespace", "a"}, {"query", q}})
                    .status,
                200);
    }
    server->Signal(SIGTERM);
    EXPECT_EQ(server->Wait(std::chrono::seconds(10)), 0);
    EXPECT_EQ(Bulwark({"--store", source_, "-n", "a", "purge", purged_}).first, 0);
    EXPECT_EQ(
        Bulwark({"--store", source_, "principals", "add", "bob", "--role", "reader", "--namespaces", "a"})
            .first,
        0);
    const std::string benign = (dir_.path() / "benign.txt").string();
    std::ofstream(benign) << "where is the garage\nwhat is the door code\nwhen is lunch\nwho is Maria\n"
                             "what colour is the garage\nhow many bicycles\nwhat is on Thursday\n"
                             "where do we eat\nwhat is the alarm\nwhich door opens\nwhat time is lunch\n"
                             "is the garage blue\n";
    auto [fit_code, fit_out] =
        Bulwark({"--store", source_, "-n", "a", "gate", "fit", "--benign", benign, "--mode", "flag"});
    EXPECT_EQ(fit_code, 0) << fit_out;
  }

  ::bulwark::testing::TempDir dir_;
  ::bulwark::testing::PgTestCluster* cluster_ = nullptr;
  std::string source_;
  std::string keyring_;
  std::string garage_;
  std::string purged_;
};

// One test (one source store, made once: the slow part) for the round trip and the refusal.
TEST_F(MigrateTest, SqliteToPostgresAndBackVerifiesEverythingAndRefusesATamperedRow) {
  MakeSource();
  ExpectVerifies(source_);
  const std::vector<std::string> garage_hits = Hits(source_, "garage");
  ASSERT_FALSE(garage_hits.empty());
  EXPECT_EQ(garage_hits.front(), garage_);

  const std::string url = Url("migrated");
  auto [code, out] = Bulwark({"--json", "migrate", "--from", source_, "--to", url});
  ASSERT_EQ(code, 0) << out;
  const json report = json::parse(out, nullptr, false);
  ASSERT_TRUE(report.is_object()) << out;
  EXPECT_EQ(report["tables"]["entries"], 5);
  EXPECT_GT(report["tables"]["audit"].get<int>(), 0);
  EXPECT_EQ(report["tables"]["principals"], 2);  // the admin and bob
  EXPECT_EQ(report["tables"]["query_gates"], 1);
  ExpectVerifies(url);
  EXPECT_EQ(Hits(url, "garage"), garage_hits);
  EXPECT_EQ(Hits(url, "lunch with Maria"), Hits(source_, "lunch with Maria"));
  auto [gate_code, gate_out] = Bulwark({"--store", url, "--keyring", keyring_, "-n", "a", "gate", "show"});
  EXPECT_EQ(gate_code, 0) << gate_out;

  // Migrating into a store that exists is refused.
  auto [again, again_out] = Bulwark({"migrate", "--from", source_, "--to", url});
  EXPECT_EQ(again, 1);
  EXPECT_THAT(again_out, HasSubstr("already holds a store"));

  const std::string back = (dir_.path() / "back").string();
  auto [back_code, back_out] = Bulwark({"--keyring", keyring_, "migrate", "--from", url, "--to", back});
  ASSERT_EQ(back_code, 0) << back_out;
  ExpectVerifies(back);
  EXPECT_EQ(Hits(back, "garage"), garage_hits);
  // The store written back serves new writes after the copied ones.
  auto [added, added_out] =
      Bulwark({"--store", back, "--keyring", keyring_, "-n", "a", "add", "A new memory"});
  EXPECT_EQ(added, 0) << added_out;
  ExpectVerifies(back);

  // A row tampered in the source stops the next migration, naming it, before anything is written.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir_.path() / "source" / "bulwark.db").c_str(), &db), SQLITE_OK);
  const std::string sql =
      "UPDATE entries SET text = 'The garage door code is 0000' WHERE id = '" + garage_ + "'";
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  const std::string refused = Url("refused");
  auto [bad, bad_out] = Bulwark({"migrate", "--from", source_, "--to", refused});
  EXPECT_EQ(bad, 1) << bad_out;
  EXPECT_THAT(bad_out, HasSubstr(garage_));
  EXPECT_THAT(bad_out, HasSubstr("nothing was migrated"));
  auto [stats, stats_out] = Bulwark({"--store", refused, "--keyring", keyring_, "stats"});
  EXPECT_NE(stats, 0) << "no store was made in the target: " << stats_out;
}

}  // namespace
}  // namespace bulwark
