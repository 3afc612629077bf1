// Tests for PrincipalRegistry: principal bookkeeping, key format and storage, the uniform refusal
// of every bad key, grants, and the admin check. Keys come from a scripted Env where a test needs
// to control them and from the real CSPRNG otherwise.
#include "auth/principal_registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cctype>
#include <fstream>
#include <iterator>

#include "core/hex.h"
#include "provenance/keyring.h"
#include "testing/exec_sql.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"

namespace bulwark {
namespace {

using ::bulwark::testing::IsOk;

using ::testing::ElementsAre;

// A clock that advances one second per reading and a "random" source that repeats a counter, so
// that a test can replay the same bytes (to force a key id collision).
class FakeEnv final : public Env {
 public:
  int64_t NowMicros() override { return now_us_ += 1'000'000; }
  void RandomBytes(std::span<uint8_t> out) override {
    ++counter_;
    for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<uint8_t>(counter_ * 31 + i);
  }
  void set_counter(uint64_t counter) { counter_ = counter; }

 private:
  int64_t now_us_ = 1'700'000'000'000'000;
  uint64_t counter_ = 0;
};

Principal MakePrincipal(std::string name, Role role, std::vector<std::string> namespaces) {
  Principal p;
  p.name = std::move(name);
  p.role = role;
  p.namespaces = std::move(namespaces);
  return p;
}

// bwk_[0-9a-f]{16}_[0-9a-f]{64}, spelled out (std::regex trips a GCC 12 warning under ASan).
bool MatchesKeyPattern(std::string_view key) {
  auto lower_hex = [](std::string_view s) {
    return s.find_first_not_of("0123456789abcdef") == std::string_view::npos;
  };
  return key.size() == 85 && key.substr(0, 4) == "bwk_" && lower_hex(key.substr(4, 16)) && key[20] == '_' &&
         lower_hex(key.substr(21));
}

std::string ReadFileBytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

class PrincipalRegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The store creates the file in WAL mode before the registry opens it; do the same here.
    testing::ExecSql(db_path_, "PRAGMA journal_mode=WAL");
    ASSERT_TRUE(Keyring::Create(dir_ / "keyring.json", Env::Default()).ok());  // the store's keyring
    registry_ = OpenRegistry(Env::Default());
    ASSERT_NE(registry_, nullptr);
  }

  std::unique_ptr<PrincipalRegistry> OpenRegistry(Env* env) {
    auto registry = PrincipalRegistry::Open(db_path_, env);
    EXPECT_TRUE(registry.ok()) << registry.status();
    return registry.ok() ? *std::move(registry) : nullptr;
  }

  // Adds `name` and returns a fresh key for it.
  std::string AddWithKey(const std::string& name, Role role, std::vector<std::string> namespaces) {
    EXPECT_THAT(registry_->AddPrincipal(MakePrincipal(name, role, std::move(namespaces))), IsOk());
    auto key = registry_->CreateKey(name);
    EXPECT_TRUE(key.ok()) << key.status();
    return key.ok() ? *key : std::string();
  }

  void ExpectInvalidKey(std::string_view key) {
    auto result = registry_->Authenticate(key);
    ASSERT_FALSE(result.ok()) << "accepted " << key;
    EXPECT_EQ(result.status().code(), absl::StatusCode::kUnauthenticated) << key;
    EXPECT_EQ(result.status().message(), "invalid API key") << key;
  }

  testing::TempDir dir_;
  std::filesystem::path db_path_ = dir_ / "bulwark.db";
  std::unique_ptr<PrincipalRegistry> registry_;
};

TEST(RoleTest, RoundTripsThroughItsName) {
  for (Role role : {Role::kReader, Role::kWriter, Role::kAdmin}) {
    EXPECT_EQ(ParseRole(ToString(role)), role);
  }
  EXPECT_EQ(ParseRole("Admin"), std::nullopt);
  EXPECT_EQ(ParseRole(""), std::nullopt);
}

TEST_F(PrincipalRegistryTest, AddGetListAndRevokePrincipals) {
  ASSERT_THAT(registry_->AddPrincipal(MakePrincipal("bob", Role::kWriter, {"notes", "alpha", "notes"})),
              IsOk());
  ASSERT_THAT(registry_->AddPrincipal(MakePrincipal("alice@example.com", Role::kAdmin, {"*"})), IsOk());

  auto bob = registry_->GetPrincipal("bob");
  ASSERT_TRUE(bob.ok()) << bob.status();
  EXPECT_EQ(bob->name, "bob");
  EXPECT_EQ(bob->role, Role::kWriter);
  EXPECT_THAT(bob->namespaces, ElementsAre("alpha", "notes"));  // sorted, duplicates dropped
  EXPECT_FALSE(bob->revoked);
  EXPECT_GT(bob->created_at_us, 0);

  auto all = registry_->ListPrincipals();
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].name, "alice@example.com");
  EXPECT_EQ((*all)[1].name, "bob");

  ASSERT_THAT(registry_->RevokePrincipal("bob"), IsOk());
  bob = registry_->GetPrincipal("bob");
  ASSERT_THAT(bob, IsOk());
  EXPECT_TRUE(bob->revoked);
  EXPECT_TRUE(registry_->RevokePrincipal("bob").ok()) << "revoking twice is fine";

  EXPECT_EQ(registry_->GetPrincipal("carol").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(registry_->RevokePrincipal("carol").code(), absl::StatusCode::kNotFound);
}

TEST_F(PrincipalRegistryTest, CreatedAtComesFromTheEnv) {
  FakeEnv env;
  auto registry = OpenRegistry(&env);
  ASSERT_NE(registry, nullptr);
  Principal p = MakePrincipal("timed", Role::kReader, {"a"});
  p.created_at_us = 42;  // ignored
  ASSERT_THAT(registry->AddPrincipal(p), IsOk());
  auto got = registry->GetPrincipal("timed");
  ASSERT_THAT(got, IsOk());
  EXPECT_EQ(got->created_at_us, 1'700'000'001'000'000);
}

TEST_F(PrincipalRegistryTest, DuplicateNameIsAlreadyExistsEvenAfterRevocation) {
  ASSERT_THAT(registry_->AddPrincipal(MakePrincipal("bob", Role::kReader, {"a"})), IsOk());
  absl::Status duplicate = registry_->AddPrincipal(MakePrincipal("bob", Role::kAdmin, {"*"}));
  EXPECT_EQ(duplicate.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(duplicate.message(), "principal bob already exists");
  ASSERT_THAT(registry_->RevokePrincipal("bob"), IsOk());
  EXPECT_EQ(registry_->AddPrincipal(MakePrincipal("bob", Role::kReader, {"a"})).code(),
            absl::StatusCode::kAlreadyExists);
  auto bob = registry_->GetPrincipal("bob");
  ASSERT_THAT(bob, IsOk());
  EXPECT_EQ(bob->role, Role::kReader) << "the failed add must not overwrite";
}

TEST_F(PrincipalRegistryTest, BadNamesAndGrantsAreInvalidArgument) {
  for (std::string name :
       {std::string(), std::string(65, 'a'), std::string("bob smith"), std::string("bob/x"),
        std::string("b\xc3\xa9"), std::string("bob\0x", 5), std::string("*")}) {
    EXPECT_EQ(registry_->AddPrincipal(MakePrincipal(name, Role::kReader, {"a"})).code(),
              absl::StatusCode::kInvalidArgument)
        << name;
  }
  EXPECT_THAT(registry_->AddPrincipal(MakePrincipal(std::string(64, 'a'), Role::kReader, {"a"})), IsOk());
  EXPECT_THAT(registry_->AddPrincipal(MakePrincipal("svc:indexer-1.prod_x@corp", Role::kReader, {"a"})),
              IsOk());

  for (std::string grant : {std::string(), std::string("**"), std::string("a*"), std::string("_a"),
                            std::string("has space"), std::string(65, 'n'), std::string("x/y")}) {
    EXPECT_EQ(registry_->AddPrincipal(MakePrincipal("grantee", Role::kReader, {"ok", grant})).code(),
              absl::StatusCode::kInvalidArgument)
        << "grant '" << grant << "'";
  }
  std::vector<std::string> too_many;
  for (int i = 0; i < 1025; ++i) too_many.push_back("ns" + std::to_string(i));
  EXPECT_EQ(registry_->AddPrincipal(MakePrincipal("grantee", Role::kReader, too_many)).code(),
            absl::StatusCode::kInvalidArgument);

  Principal revoked = MakePrincipal("grantee", Role::kReader, {"a"});
  revoked.revoked = true;
  EXPECT_EQ(registry_->AddPrincipal(revoked).code(), absl::StatusCode::kInvalidArgument);

  EXPECT_EQ(registry_->GetPrincipal("grantee").status().code(), absl::StatusCode::kNotFound)
      << "nothing was written by the refused adds";
}

TEST_F(PrincipalRegistryTest, CreateKeyReturnsAWellFormedKeyThatAuthenticates) {
  std::string bob_key = AddWithKey("bob", Role::kWriter, {"notes"});
  std::string eve_key = AddWithKey("eve", Role::kReader, {"other"});
  EXPECT_TRUE(MatchesKeyPattern(bob_key)) << bob_key;
  EXPECT_NE(bob_key, eve_key);

  auto bob = registry_->Authenticate(bob_key);
  ASSERT_TRUE(bob.ok()) << bob.status();
  EXPECT_EQ(bob->name, "bob");
  EXPECT_EQ(bob->role, Role::kWriter);
  EXPECT_THAT(bob->namespaces, ElementsAre("notes"));
  auto eve = registry_->Authenticate(eve_key);
  ASSERT_TRUE(eve.ok()) << eve.status();
  EXPECT_EQ(eve->name, "eve");

  auto keys = registry_->ListKeys("bob");
  ASSERT_TRUE(keys.ok()) << keys.status();
  ASSERT_EQ(keys->size(), 1u);
  EXPECT_EQ((*keys)[0].key_id, bob_key.substr(4, 16));
  EXPECT_EQ((*keys)[0].principal, "bob");
  EXPECT_FALSE((*keys)[0].revoked);

  // A second key for the same principal works alongside the first.
  auto second = registry_->CreateKey("bob");
  ASSERT_THAT(second, IsOk());
  EXPECT_THAT(registry_->Authenticate(*second), IsOk());
  EXPECT_THAT(registry_->Authenticate(bob_key), IsOk());
  keys = registry_->ListKeys("bob");
  ASSERT_THAT(keys, IsOk());
  EXPECT_EQ(keys->size(), 2u);
}

TEST_F(PrincipalRegistryTest, KeysSurviveReopen) {
  std::string key = AddWithKey("bob", Role::kReader, {"notes"});
  registry_.reset();
  registry_ = OpenRegistry(Env::Default());
  ASSERT_NE(registry_, nullptr);
  auto bob = registry_->Authenticate(key);
  ASSERT_TRUE(bob.ok()) << bob.status();
  EXPECT_EQ(bob->name, "bob");
}

TEST_F(PrincipalRegistryTest, CreateKeyNeedsAnActivePrincipal) {
  EXPECT_EQ(registry_->CreateKey("nobody").status().code(), absl::StatusCode::kNotFound);
  ASSERT_THAT(registry_->AddPrincipal(MakePrincipal("bob", Role::kReader, {"a"})), IsOk());
  ASSERT_THAT(registry_->RevokePrincipal("bob"), IsOk());
  EXPECT_EQ(registry_->CreateKey("bob").status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(registry_->ListKeys("nobody").status().code(), absl::StatusCode::kNotFound);
}

TEST_F(PrincipalRegistryTest, SecretNeverReachesTheDatabaseFiles) {
  std::string key = AddWithKey("bob", Role::kReader, {"notes"});
  std::string secret_hex = key.substr(21);
  ASSERT_EQ(secret_hex.size(), 64u);
  std::string secret_raw = *HexDecode(secret_hex);

  std::string bytes;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    bytes += ReadFileBytes(db_path_.string() + suffix);
  }
  ASSERT_NE(bytes.find(key.substr(4, 16)), std::string::npos) << "sanity: the key id is stored";
  EXPECT_EQ(bytes.find(secret_hex), std::string::npos);
  EXPECT_EQ(bytes.find(secret_hex.substr(0, 32)), std::string::npos);
  EXPECT_EQ(bytes.find(secret_raw), std::string::npos);
  EXPECT_NE(bytes.find(Sha256Hex(secret_hex)), std::string::npos) << "only the hash is stored";
}

TEST_F(PrincipalRegistryTest, EveryBadKeyIsRefusedWithTheSameMessage) {
  std::string key = AddWithKey("bob", Role::kWriter, {"notes"});
  std::string revoked_key = AddWithKey("carol", Role::kWriter, {"notes"});
  std::string revoked_principal_key = AddWithKey("dave", Role::kAdmin, {"*"});
  ASSERT_THAT(registry_->RevokeKey(revoked_key.substr(4, 16)), IsOk());
  ASSERT_THAT(registry_->RevokePrincipal("dave"), IsOk());
  ASSERT_THAT(registry_->Authenticate(key), IsOk());

  std::string wrong_secret = key;
  wrong_secret.back() = wrong_secret.back() == '0' ? '1' : '0';
  std::string other_secret = key.substr(0, 21) + revoked_key.substr(21);  // a real secret, other key
  std::string unknown_id = key;
  unknown_id[4] = unknown_id[4] == 'a' ? 'b' : 'a';
  std::string upper = key;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::string uppercase_hex = key.substr(0, 21) + upper.substr(21);

  ExpectInvalidKey(wrong_secret);
  ExpectInvalidKey(other_secret);
  ExpectInvalidKey(key.substr(0, key.size() - 1));  // truncated
  ExpectInvalidKey(key + "0");                      // too long
  ExpectInvalidKey(key + "\n");
  ExpectInvalidKey(" " + key.substr(1));
  ExpectInvalidKey("bwx_" + key.substr(4));  // wrong prefix
  ExpectInvalidKey("BWK_" + key.substr(4));
  ExpectInvalidKey(key.substr(0, 20) + "-" + key.substr(21));  // wrong separator
  ExpectInvalidKey(uppercase_hex);
  ExpectInvalidKey(key.substr(0, 30) + "g" + key.substr(31));  // not hex
  ExpectInvalidKey(std::string(key).replace(40, 1, std::string(1, '\0')));
  ExpectInvalidKey(unknown_id);
  ExpectInvalidKey(revoked_key);
  ExpectInvalidKey(revoked_principal_key);
  ExpectInvalidKey("");
  ExpectInvalidKey("bwk_");
}

TEST_F(PrincipalRegistryTest, RevokingAPrincipalRevokesItsKeys) {
  std::string key = AddWithKey("bob", Role::kWriter, {"notes"});
  ASSERT_THAT(registry_->RevokePrincipal("bob"), IsOk());
  auto keys = registry_->ListKeys("bob");
  ASSERT_THAT(keys, IsOk());
  ASSERT_EQ(keys->size(), 1u);
  EXPECT_TRUE((*keys)[0].revoked);
  ExpectInvalidKey(key);
}

TEST_F(PrincipalRegistryTest, RevokeKeyOnlyAffectsThatKey) {
  std::string first = AddWithKey("bob", Role::kWriter, {"notes"});
  auto second = registry_->CreateKey("bob");
  ASSERT_THAT(second, IsOk());
  ASSERT_THAT(registry_->RevokeKey(first.substr(4, 16)), IsOk());
  ExpectInvalidKey(first);
  EXPECT_THAT(registry_->Authenticate(*second), IsOk());
  EXPECT_EQ(registry_->RevokeKey("0000000000000000").code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(registry_->RevokeKey(first).code(), absl::StatusCode::kNotFound)
      << "takes the key id, not the key";
}

TEST_F(PrincipalRegistryTest, KeyIdCollisionDrawsAnotherId) {
  FakeEnv env;
  auto registry = OpenRegistry(&env);
  ASSERT_NE(registry, nullptr);
  ASSERT_THAT(registry->AddPrincipal(MakePrincipal("bob", Role::kReader, {"a"})), IsOk());
  auto first = registry->CreateKey("bob");
  ASSERT_TRUE(first.ok()) << first.status();
  env.set_counter(0);  // replay: the next key id drawn equals the first one
  auto second = registry->CreateKey("bob");
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_NE(first->substr(4, 16), second->substr(4, 16));
  EXPECT_THAT(registry->Authenticate(*first), IsOk());
  EXPECT_THAT(registry->Authenticate(*second), IsOk());
}

TEST_F(PrincipalRegistryTest, StarGrantsEveryNamespaceExplicitGrantsOnlyTheirOwn) {
  ASSERT_THAT(registry_->AddPrincipal(MakePrincipal("root", Role::kAdmin, {"*"})), IsOk());
  ASSERT_THAT(registry_->AddPrincipal(MakePrincipal("w", Role::kWriter, {"alpha", "beta"})), IsOk());
  ASSERT_THAT(registry_->AddPrincipal(MakePrincipal("r", Role::kReader, {"alpha"})), IsOk());
  ASSERT_THAT(registry_->AddPrincipal(MakePrincipal("rstar", Role::kReader, {"*"})), IsOk());
  ASSERT_THAT(registry_->AddPrincipal(MakePrincipal("none", Role::kWriter, {})), IsOk());

  auto root = *registry_->GetPrincipal("root");
  auto w = *registry_->GetPrincipal("w");
  auto r = *registry_->GetPrincipal("r");
  auto rstar = *registry_->GetPrincipal("rstar");
  auto none = *registry_->GetPrincipal("none");

  EXPECT_TRUE(root.CanRead("anything"));
  EXPECT_TRUE(root.CanWrite("anything"));
  EXPECT_TRUE(root.IsAdmin());

  EXPECT_TRUE(w.CanRead("alpha"));
  EXPECT_TRUE(w.CanWrite("beta"));
  EXPECT_FALSE(w.CanRead("gamma"));
  EXPECT_FALSE(w.CanWrite("gamma"));
  EXPECT_FALSE(w.CanRead("alph"));  // no prefix matching
  EXPECT_FALSE(w.CanRead("*"));     // a namespace literally named "*" is not a wildcard grant
  EXPECT_FALSE(w.IsAdmin());

  EXPECT_TRUE(r.CanRead("alpha"));
  EXPECT_FALSE(r.CanWrite("alpha")) << "a reader cannot write";
  EXPECT_FALSE(r.CanRead("beta"));

  EXPECT_TRUE(rstar.CanRead("anything"));
  EXPECT_FALSE(rstar.CanWrite("anything"));
  EXPECT_FALSE(rstar.IsAdmin());

  EXPECT_FALSE(none.CanRead("alpha"));
  EXPECT_FALSE(none.CanWrite("alpha"));

  root.revoked = true;
  EXPECT_FALSE(root.CanRead("anything"));
  EXPECT_FALSE(root.CanWrite("anything"));
  EXPECT_FALSE(root.IsAdmin());
}

TEST_F(PrincipalRegistryTest, HasActiveAdminNeedsAnActiveAdminWithAnActiveKey) {
  auto has = [&] {
    auto result = registry_->HasActiveAdmin();
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() && *result;
  };
  EXPECT_FALSE(has());
  std::string writer_key = AddWithKey("w", Role::kWriter, {"*"});
  EXPECT_FALSE(has()) << "a writer is not an admin";
  ASSERT_THAT(registry_->AddPrincipal(MakePrincipal("root", Role::kAdmin, {"*"})), IsOk());
  EXPECT_FALSE(has()) << "an admin without a key cannot act";
  auto root_key = registry_->CreateKey("root");
  ASSERT_THAT(root_key, IsOk());
  EXPECT_TRUE(has());
  ASSERT_THAT(registry_->RevokeKey(root_key->substr(4, 16)), IsOk());
  EXPECT_FALSE(has()) << "only key revoked";
  ASSERT_THAT(registry_->CreateKey("root"), IsOk());
  EXPECT_TRUE(has());
  ASSERT_THAT(registry_->RevokePrincipal("root"), IsOk());
  EXPECT_FALSE(has()) << "principal revoked";
}

TEST_F(PrincipalRegistryTest, CorruptPrincipalRowFailsClosed) {
  std::string key = AddWithKey("bob", Role::kWriter, {"notes"});
  testing::ExecSql(db_path_, "UPDATE principals SET role = 'root' WHERE name = 'bob'");
  ExpectInvalidKey(key);
  EXPECT_EQ(registry_->GetPrincipal("bob").status().code(), absl::StatusCode::kDataLoss);
}

TEST_F(PrincipalRegistryTest, OpenRefusesANullEnvAMissingFileAndANonDatabaseFile) {
  EXPECT_EQ(PrincipalRegistry::Open(db_path_, nullptr).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(PrincipalRegistry::Open(dir_ / "missing" / "bulwark.db", Env::Default()).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "missing")) << "no stray file is created";
  std::filesystem::create_directories(dir_ / "junk");
  std::filesystem::path junk = dir_ / "junk" / "bulwark.db";
  std::ofstream(junk) << std::string(4096, 'x');
  EXPECT_EQ(PrincipalRegistry::Open(junk, Env::Default()).status().code(), absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace bulwark
