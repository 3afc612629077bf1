// The service-administration subcommands driven in-process: `principals` (offline management of
// API principals and keys) and `audit` (reading the audit log with filters; --verify checks its
// signed chain).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "audit/audit_log.h"
#include "auth/principal_registry.h"
#include "cli/cli.h"
#include "cli/cli_test_util.h"
#include "testing/exec_sql.h"
#include "testing/temp_dir.h"

namespace bulwark::cli {
namespace {

using ::testing::HasSubstr;

using Result = CliResult;

class AdminCliTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(Cli({"init", "--no-synonyms"}).code, 0); }
  Result Cli(const std::vector<std::string>& args) { return RunCli(dir_ / "store", args); }
  std::filesystem::path Db() { return dir_ / "store" / "bulwark.db"; }
  testing::TempDir dir_;
};

TEST_F(AdminCliTest, AddPrintsAWorkingKeyOnce) {
  Result added = Cli({"principals", "add", "alice", "--role", "writer", "--namespaces", "a,b", "--json"});
  ASSERT_EQ(added.code, 0) << added.err;
  const std::string key = added.json()["api_key"];
  EXPECT_THAT(key, ::testing::StartsWith("bwk_"));

  auto registry = PrincipalRegistry::Open(Db(), Env::Default());
  ASSERT_TRUE(registry.ok());
  auto principal = (*registry)->Authenticate(key);
  ASSERT_TRUE(principal.ok()) << principal.status();
  EXPECT_EQ(principal->name, "alice");
  EXPECT_EQ(principal->role, Role::kWriter);
  EXPECT_EQ(principal->namespaces, (std::vector<std::string>{"a", "b"}));

  Result listed = Cli({"principals", "list"});
  ASSERT_EQ(listed.code, 0);
  EXPECT_THAT(listed.out, HasSubstr("alice"));
  EXPECT_THAT(listed.out, HasSubstr("writer"));
  EXPECT_EQ(listed.out.find(key.substr(22)), std::string::npos) << "list must never show a secret";
}

TEST_F(AdminCliTest, KeyRevokeKeyAndRevoke) {
  ASSERT_EQ(Cli({"principals", "add", "bob", "--role", "reader", "--namespaces", "x", "--no-key"}).code, 0);
  Result key1 = Cli({"principals", "key", "bob", "--json"});
  Result key2 = Cli({"principals", "key", "bob", "--json"});
  ASSERT_EQ(key1.code, 0);
  ASSERT_EQ(key2.code, 0);
  Result keys = Cli({"principals", "keys", "bob", "--json"});
  ASSERT_EQ(keys.code, 0) << keys.err;
  ASSERT_EQ(keys.json()["keys"].size(), 2u);

  auto registry = PrincipalRegistry::Open(Db(), Env::Default());
  ASSERT_TRUE(registry.ok());
  const std::string first_id = keys.json()["keys"][0]["key_id"];
  ASSERT_EQ(Cli({"principals", "revoke-key", first_id}).code, 0);
  const std::string k1 = key1.json()["api_key"], k2 = key2.json()["api_key"];
  const bool k1_first = k1.find(first_id) != std::string::npos;
  EXPECT_FALSE((*registry)->Authenticate(k1_first ? k1 : k2).ok());
  EXPECT_TRUE((*registry)->Authenticate(k1_first ? k2 : k1).ok());

  ASSERT_EQ(Cli({"principals", "revoke", "bob"}).code, 0);
  EXPECT_FALSE((*registry)->Authenticate(k1).ok());
  EXPECT_FALSE((*registry)->Authenticate(k2).ok());
  EXPECT_THAT(Cli({"principals", "list"}).out, HasSubstr("REVOKED"));
}

TEST_F(AdminCliTest, BadInputFails) {
  EXPECT_NE(Cli({"principals", "add", "carol", "--role", "root", "--namespaces", "a"}).code, 0);
  EXPECT_NE(Cli({"principals", "add", "carol", "--role", "reader"}).code, 0);  // no grants
  EXPECT_NE(Cli({"principals", "add", "bad name", "--namespaces", "a"}).code, 0);
  EXPECT_NE(Cli({"principals", "revoke", "nobody"}).code, 0);
  ASSERT_EQ(Cli({"principals", "add", "dave", "--namespaces", "a"}).code, 0);
  EXPECT_NE(Cli({"principals", "add", "dave", "--namespaces", "a"}).code, 0);  // name taken
  std::vector<std::string> args = {"bulwark", "--store", (dir_ / "nostore").string(), "principals", "list"};
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  EXPECT_EQ(bulwark::cli::Run(static_cast<int>(argv.size()), argv.data(), out, err), 1);
  EXPECT_THAT(err.str(), HasSubstr("no store"));
}

TEST_F(AdminCliTest, AuditFiltersRecords) {
  {
    auto log = AuditLog::OpenForStore(Db());
    ASSERT_TRUE(log.ok()) << log.status();
    const int64_t now = Env::Default()->NowMicros();
    (*log)->Append(
        {0, now - 3'600'000'000LL, "alice", "s1", "a", "search", "h1", {"01AAAAAAAAAAAAAAAAAAAAAAAA"}, {}});
    (*log)->Append({0, now, "bob", "s2", "b", "search", "h2", {"01BBBBBBBBBBBBBBBBBBBBBBBB"}, {}});
    (*log)->Append({0, now, "alice", "s3", "b", "search", "h3", {}, {}});
    ASSERT_TRUE((*log)->Flush().ok());
  }
  Result all = Cli({"audit", "--json"});
  ASSERT_EQ(all.code, 0) << all.err;
  EXPECT_EQ(all.json()["records"].size(), 3u);
  Result by_principal = Cli({"audit", "--principal", "alice", "--json"});
  EXPECT_EQ(by_principal.json()["records"].size(), 2u);
  Result by_namespace = Cli({"-n", "b", "audit", "--json"});
  EXPECT_EQ(by_namespace.json()["records"].size(), 2u);
  Result by_entry = Cli({"audit", "--entry", "01AAAAAAAAAAAAAAAAAAAAAAAA", "--json"});
  ASSERT_EQ(by_entry.json()["records"].size(), 1u);
  EXPECT_EQ(by_entry.json()["records"][0]["session"], "s1");
  Result recent = Cli({"audit", "--since", "10m", "--json"});
  EXPECT_EQ(recent.json()["records"].size(), 2u);
  Result text = Cli({"audit", "--session", "s2"});
  EXPECT_THAT(text.out, HasSubstr("bob"));
  EXPECT_THAT(text.out, HasSubstr("01BBBBBBBBBBBBBBBBBBBBBBBB"));
  EXPECT_NE(Cli({"audit", "--since", "yesterday"}).code, 0);
}

TEST_F(AdminCliTest, AuditVerifyChecksTheSignedChain) {
  {
    auto log = AuditLog::OpenForStore(Db());  // signs with the store's keyring by default
    ASSERT_TRUE(log.ok()) << log.status();
    for (const char* session : {"s1", "s2", "s3"}) {
      (*log)->Append({0, Env::Default()->NowMicros(), "alice", session, "a", "search", "h", {"01A"}, {}});
    }
    ASSERT_TRUE((*log)->Flush().ok());
  }
  Result clean = Cli({"audit", "--verify", "--json"});
  ASSERT_EQ(clean.code, 0) << clean.err;
  EXPECT_EQ(clean.json()["records"], 3);
  EXPECT_EQ(clean.json()["ok"], true);
  Result text = Cli({"audit", "--verify"});
  EXPECT_EQ(text.code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("3 records; every signed record verifies"));

  // Someone with the file hides that alice's session s2 was served entry 01A.
  testing::ExecSql(dir_ / "store" / "audit.db", "UPDATE audit SET returned_ids = '[]' WHERE session = 's2'");
  Result tampered = Cli({"audit", "--verify"});
  EXPECT_EQ(tampered.code, 1);
  EXPECT_THAT(tampered.out, HasSubstr("BAD seq 2: tag does not match"));
  EXPECT_THAT(tampered.err, HasSubstr("1 audit record(s) fail verification"));
}

}  // namespace
}  // namespace bulwark::cli
