// The access-control rows are signed (issue #18 point 6): an edit of bulwark.db that would grant
// access — a role or grant changed, a key row inserted, a revoked key switched back on, a
// principal's key moved to another principal — is refused at authentication and reported by
// Verify; a store made before rows were signed is upgraded once; a key rotated by another process
// still verifies.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "auth/principal_registry.h"
#include "core/hex.h"
#include "provenance/keyring.h"
#include "testing/exec_sql.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"

namespace bulwark {
namespace {

using ::bulwark::testing::ExecSql;
using ::bulwark::testing::IsOk;
using ::testing::HasSubstr;

Principal NewPrincipal(std::string name, Role role, std::vector<std::string> namespaces) {
  Principal p;
  p.name = std::move(name);
  p.role = role;
  p.namespaces = std::move(namespaces);
  return p;
}

class AccessSigningTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ExecSql(db_path_, "PRAGMA journal_mode=WAL");
    ASSERT_THAT(Keyring::Create(dir_ / "keyring.json", Env::Default()), IsOk());
  }
  std::unique_ptr<PrincipalRegistry> Open() {
    auto registry = PrincipalRegistry::Open(db_path_, Env::Default());
    EXPECT_THAT(registry.status(), IsOk());
    return registry.ok() ? *std::move(registry) : nullptr;
  }
  std::string AddWithKey(PrincipalRegistry& registry, const std::string& name, Role role,
                         std::vector<std::string> grants) {
    EXPECT_THAT(registry.AddPrincipal(NewPrincipal(name, role, std::move(grants))), IsOk());
    auto key = registry.CreateKey(name);
    EXPECT_THAT(key.status(), IsOk());
    return key.ok() ? *key : std::string();
  }
  static std::string KeyId(const std::string& key) { return key.substr(4, 16); }
  static void ExpectRefused(PrincipalRegistry& registry, const std::string& key, const std::string& why) {
    auto who = registry.Authenticate(key);
    ASSERT_FALSE(who.ok()) << why;
    EXPECT_EQ(who.status().code(), absl::StatusCode::kUnauthenticated) << why;
    EXPECT_EQ(who.status().message(), "invalid API key") << why;
  }
  static std::vector<std::string> Problems(PrincipalRegistry& registry) {
    auto report = registry.Verify();
    EXPECT_THAT(report.status(), IsOk());
    return report.ok() ? report->problems : std::vector<std::string>{"verify failed"};
  }

  testing::TempDir dir_;
  std::filesystem::path db_path_ = dir_ / "bulwark.db";
};

TEST_F(AccessSigningTest, EditsThatGrantAccessAreRefusedAndReported) {
  auto registry = Open();
  ASSERT_NE(registry, nullptr);
  const std::string admin = AddWithKey(*registry, "root", Role::kAdmin, {"*"});
  const std::string reader = AddWithKey(*registry, "eve", Role::kReader, {"notes"});
  const std::string writer = AddWithKey(*registry, "sam", Role::kWriter, {"todo"});
  ASSERT_THAT(registry->Authenticate(reader).status(), IsOk());
  EXPECT_TRUE(Problems(*registry).empty());

  // A reader made admin with one SQL statement.
  ExecSql(db_path_, "UPDATE principals SET role = 'admin' WHERE name = 'eve'");
  ExpectRefused(*registry, reader, "role edited");
  EXPECT_THAT(Problems(*registry), ::testing::ElementsAre(HasSubstr("principal eve")));
  // A grant widened.
  ExecSql(db_path_, "UPDATE principals SET namespaces = '[\"*\"]' WHERE name = 'sam'");
  ExpectRefused(*registry, writer, "grant edited");
  // A key row inserted for the admin with a secret the attacker knows (copying a valid tag from
  // another row does not help: the tag covers the key id and the hash).
  const std::string secret(64, 'a');
  ExecSql(db_path_,
          "INSERT INTO api_keys(key_id, principal, secret_sha256, created_at_us, revoked, sign_key_id, tag) "
          "SELECT '00000000000000aa', 'root', '" +
              Sha256Hex(secret) +
              "', created_at_us, 0, sign_key_id, tag FROM api_keys WHERE principal = 'root'");
  ExpectRefused(*registry, "bwk_00000000000000aa_" + secret, "inserted key");
  // A revoked key switched back on.
  ASSERT_THAT(registry->RevokeKey(KeyId(admin)), IsOk());
  ExpectRefused(*registry, admin, "revoked");
  ExecSql(db_path_, "UPDATE api_keys SET revoked = 0 WHERE key_id = '" + KeyId(admin) + "'");
  ExpectRefused(*registry, admin, "un-revoked by SQL");
  EXPECT_EQ(Problems(*registry).size(), 4u) << "eve, sam, the inserted key, the un-revoked key";
  EXPECT_EQ(registry->GetPrincipal("eve").status().code(), absl::StatusCode::kDataLoss);
  EXPECT_FALSE(*registry->HasActiveAdmin()) << "the only admin key left is forged or revoked";

  // Revocation still works on a tampered row (it only turns access off) and re-signs it.
  ASSERT_THAT(registry->RevokePrincipal("eve"), IsOk());
  EXPECT_THAT(registry->GetPrincipal("eve").status(), IsOk());
}

TEST_F(AccessSigningTest, AStoreMadeBeforeSigningIsUpgradedOnce) {
  // The tables as main made them before rows were signed, with one admin and one key.
  const std::string secret(64, 'b');
  ExecSql(db_path_, R"sql(
    CREATE TABLE principals(name TEXT PRIMARY KEY, role TEXT NOT NULL, namespaces TEXT NOT NULL,
                            revoked INTEGER NOT NULL DEFAULT 0, created_at_us INTEGER NOT NULL);
    CREATE TABLE api_keys(key_id TEXT PRIMARY KEY, principal TEXT NOT NULL, secret_sha256 TEXT NOT NULL,
                          created_at_us INTEGER NOT NULL, revoked INTEGER NOT NULL DEFAULT 0);
    INSERT INTO principals VALUES('root', 'admin', '["*"]', 0, 1);
  )sql");
  ExecSql(db_path_,
          "INSERT INTO api_keys VALUES('00000000000000bb', 'root', '" + Sha256Hex(secret) + "', 2, 0)");
  const std::string key = "bwk_00000000000000bb_" + secret;
  {
    auto registry = Open();
    ASSERT_NE(registry, nullptr);
    auto who = registry->Authenticate(key);
    ASSERT_THAT(who.status(), IsOk());
    EXPECT_TRUE(who->IsAdmin());
    EXPECT_TRUE(Problems(*registry).empty());
  }
  // After the upgrade an unsigned row is a forged one: it is not adopted by the next open.
  ExecSql(db_path_,
          "INSERT INTO principals(name, role, namespaces, revoked, created_at_us) "
          "VALUES('mallory', 'admin', '[\"*\"]', 0, 3)");
  auto registry = Open();
  ASSERT_NE(registry, nullptr);
  EXPECT_THAT(Problems(*registry), ::testing::ElementsAre(HasSubstr("principal mallory")));
  EXPECT_THAT(registry->Authenticate(key).status(), IsOk());
}

TEST_F(AccessSigningTest, RowsSignedAfterARotationElsewhereStillVerify) {
  auto first = Open();
  ASSERT_NE(first, nullptr);
  auto keyring = Keyring::Load(dir_ / "keyring.json");
  ASSERT_THAT(keyring.status(), IsOk());
  ASSERT_THAT(keyring->Rotate(Env::Default()).status(), IsOk());  // another process rotates
  auto second = Open();
  ASSERT_NE(second, nullptr);
  const std::string key = AddWithKey(*second, "ana", Role::kWriter, {"notes"});  // signed with key 2
  EXPECT_THAT(first->Authenticate(key).status(), IsOk()) << "the first registry re-reads the keyring";
  EXPECT_TRUE(Problems(*first).empty());
}

TEST_F(AccessSigningTest, OpenNeedsTheKeyring) {
  std::filesystem::remove(dir_ / "keyring.json");
  EXPECT_EQ(PrincipalRegistry::Open(db_path_, Env::Default()).status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace bulwark
