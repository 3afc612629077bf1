// Tests of the keyring file: mode 0600 whatever the umask, refusal to overwrite, strict validation
// of every field on Load (each malformed file is DataLoss, a group/other-accessible file is
// PermissionDenied, an oversized file is refused before reading), and rotation that keeps old keys.
#include "provenance/keyring.h"

#include <absl/strings/str_cat.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <span>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bulwark/env.h"
#include "core/hex.h"
#include "testing/counting_env.h"
#include "testing/status_matchers.h"

namespace bulwark {
namespace {

using ::bulwark::testing::IsOk;

namespace fs = std::filesystem;
using ::testing::HasSubstr;

using FakeEnv = testing::CountingEnv;

mode_t FileMode(const fs::path& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteFile(const fs::path& path, const std::string& content, mode_t mode = 0600) {
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << content;
  }
  ASSERT_EQ(::chmod(path.c_str(), mode), 0);
}

// A well-formed keyring text with keys 1..n; key i is 64 copies of hex digit (i % 10).
std::string ValidKeyringText(int n) {
  nlohmann::json keys = nlohmann::json::array();
  for (int i = 1; i <= n; ++i) {
    keys.push_back({{"id", i},
                    {"created_at_us", 1700000000000000 + i},
                    {"key", std::string(64, static_cast<char>('0' + i % 10))}});
  }
  return nlohmann::json{{"format", "bulwark.keyring"}, {"version", 1}, {"keys", keys}}.dump();
}

class KeyringTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::path(::testing::TempDir()) / "keyring_test.XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    path_ = dir_ / "keyring.json";
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  fs::path dir_;
  fs::path path_;
};

TEST_F(KeyringTest, CreateWritesMode0600EvenWithUmask000) {
  const mode_t old_umask = ::umask(0);
  FakeEnv env;
  absl::StatusOr<Keyring> keyring = Keyring::Create(path_, &env);
  ::umask(old_umask);
  ASSERT_TRUE(keyring.ok()) << keyring.status();
  EXPECT_EQ(FileMode(path_), 0600u);
}

TEST_F(KeyringTest, CreateAndRotateWriteMode0600WhateverTheUmask) {
  // 0277 would leave a plain open(..., 0600) at 0400: the fchmod puts owner-write back.
  for (mode_t mask : {0000, 0022, 0077, 0277, 0777}) {
    const fs::path path = dir_ / ("umask" + std::to_string(mask) + ".json");
    const mode_t old_umask = ::umask(mask);
    FakeEnv env;
    absl::StatusOr<Keyring> keyring = Keyring::Create(path, &env);
    ASSERT_TRUE(keyring.ok()) << keyring.status();
    EXPECT_EQ(FileMode(path), 0600u) << "umask " << std::oct << mask;
    absl::StatusOr<uint32_t> rotated = keyring->Rotate(&env);
    ::umask(old_umask);
    ASSERT_TRUE(rotated.ok()) << rotated.status();
    EXPECT_EQ(FileMode(path), 0600u) << "after Rotate, umask " << std::oct << mask;
  }
}

TEST_F(KeyringTest, CreateRefusesToOverwrite) {
  WriteFile(path_, "precious");
  FakeEnv env;
  absl::StatusOr<Keyring> keyring = Keyring::Create(path_, &env);
  EXPECT_EQ(keyring.status().code(), absl::StatusCode::kAlreadyExists) << keyring.status();
  EXPECT_EQ(ReadFile(path_), "precious");
}

TEST_F(KeyringTest, CreateRefusesToOverwriteAnExistingKeyring) {
  FakeEnv env;
  ASSERT_THAT(Keyring::Create(path_, &env), IsOk());
  const std::string before = ReadFile(path_);
  EXPECT_EQ(Keyring::Create(path_, &env).status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(ReadFile(path_), before);
}

TEST_F(KeyringTest, CreateInMissingDirectoryIsNotFound) {
  FakeEnv env;
  EXPECT_EQ(Keyring::Create(dir_ / "missing" / "keyring.json", &env).status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(KeyringTest, CreateHoldsKeyOneFromEnvAndWritesTheDocumentedFormat) {
  FakeEnv env;
  absl::StatusOr<Keyring> keyring = Keyring::Create(path_, &env);
  ASSERT_TRUE(keyring.ok()) << keyring.status();
  EXPECT_EQ(keyring->newest_key_id(), 1u);
  EXPECT_EQ(keyring->path(), path_);
  ASSERT_NE(keyring->Find(1), nullptr);
  EXPECT_EQ(keyring->Find(0), nullptr);
  EXPECT_EQ(keyring->Find(2), nullptr);

  nlohmann::json doc = nlohmann::json::parse(ReadFile(path_));
  EXPECT_EQ(doc["format"], "bulwark.keyring");
  EXPECT_EQ(doc["version"], 1);
  ASSERT_EQ(doc["keys"].size(), 1u);
  EXPECT_EQ(doc["keys"][0]["id"], 1);
  EXPECT_EQ(doc["keys"][0]["created_at_us"], 1700000000000000);
  EXPECT_EQ(doc["keys"][0]["key"], HexEncode(std::span<const uint8_t>(*keyring->Find(1))));

  std::vector<KeyInfo> list = keyring->List();
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].id, 1u);
  EXPECT_EQ(list[0].created_at_us, 1700000000000000);
}

TEST_F(KeyringTest, FakeEnvGivesReproducibleKeys) {
  FakeEnv env_a(7), env_b(7), env_c(8);
  absl::StatusOr<Keyring> a = Keyring::Create(dir_ / "a.json", &env_a);
  absl::StatusOr<Keyring> b = Keyring::Create(dir_ / "b.json", &env_b);
  absl::StatusOr<Keyring> c = Keyring::Create(dir_ / "c.json", &env_c);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  HmacKey expected;
  for (size_t i = 0; i < expected.size(); ++i) expected[i] = static_cast<uint8_t>(7 + i);
  EXPECT_EQ(*a->Find(1), expected);
  EXPECT_EQ(*b->Find(1), expected);
  EXPECT_NE(*c->Find(1), expected);
  EXPECT_EQ(ReadFile(dir_ / "a.json"), ReadFile(dir_ / "b.json"));
}

TEST_F(KeyringTest, LoadReturnsTheCreatedKeys) {
  FakeEnv env;
  absl::StatusOr<Keyring> created = Keyring::Create(path_, &env);
  ASSERT_THAT(created, IsOk());
  absl::StatusOr<Keyring> loaded = Keyring::Load(path_);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->newest_key_id(), 1u);
  EXPECT_EQ(*loaded->Find(1), *created->Find(1));
  EXPECT_EQ(loaded->List()[0].created_at_us, created->List()[0].created_at_us);
}

TEST_F(KeyringTest, LoadAcceptsOwnerReadOnlyAndUppercaseHex) {
  std::string text = ValidKeyringText(1);
  text.replace(text.find("1111"), 64, std::string(32, 'A') + std::string(32, 'f'));
  WriteFile(path_, text, 0400);
  absl::StatusOr<Keyring> loaded = Keyring::Load(path_);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ((*loaded->Find(1))[0], 0xaa);
  EXPECT_EQ((*loaded->Find(1))[31], 0xff);
}

TEST_F(KeyringTest, LoadMissingFileIsNotFound) {
  EXPECT_EQ(Keyring::Load(path_).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(KeyringTest, LoadDirectoryIsInvalidArgument) {
  fs::create_directory(dir_ / "sub");
  fs::permissions(dir_ / "sub", fs::perms::owner_all, fs::perm_options::replace);
  EXPECT_EQ(Keyring::Load(dir_ / "sub").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(KeyringTest, LoadRejectsFilesAccessibleToGroupOrOthers) {
  for (mode_t mode : {0640, 0620, 0604, 0602, 0660, 0644, 0610, 0601}) {
    WriteFile(path_, ValidKeyringText(1), mode);
    absl::StatusOr<Keyring> loaded = Keyring::Load(path_);
    EXPECT_EQ(loaded.status().code(), absl::StatusCode::kPermissionDenied)
        << "mode " << std::oct << mode << ": " << loaded.status();
  }
  WriteFile(path_, ValidKeyringText(1), 0600);
  EXPECT_THAT(Keyring::Load(path_), IsOk());
}

TEST_F(KeyringTest, LoadRefusesOversizedFileBeforeParsing) {
  // Valid JSON padded with white space: only the size check can reject it.
  std::string text = ValidKeyringText(1);
  text.append(kMaxKeyringFileBytes - text.size(), ' ');
  WriteFile(path_, text);
  EXPECT_TRUE(Keyring::Load(path_).ok()) << "a file of exactly the limit is accepted";

  text.push_back(' ');
  WriteFile(path_, text);
  absl::StatusOr<Keyring> loaded = Keyring::Load(path_);
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(loaded.status().message()), HasSubstr("limit"));
}

struct MalformedCase {
  std::string name;
  std::string text;
};
void PrintTo(const MalformedCase& c, std::ostream* os) { *os << c.name; }

class KeyringMalformedTest : public KeyringTest, public ::testing::WithParamInterface<MalformedCase> {};

TEST_P(KeyringMalformedTest, LoadIsDataLoss) {
  WriteFile(path_, GetParam().text);
  absl::StatusOr<Keyring> loaded = Keyring::Load(path_);
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kDataLoss) << loaded.status();
  // The message never echoes key material.
  EXPECT_THAT(std::string(loaded.status().message()), ::testing::Not(HasSubstr(std::string(64, '1'))));
}

std::string KeysText(const std::string& keys_json, const std::string& version = "1",
                     const std::string& format = "\"bulwark.keyring\"") {
  return absl::StrCat("{\"format\":", format, ",\"version\":", version, ",\"keys\":", keys_json, "}");
}

std::string Key(const std::string& id, const std::string& hex = std::string(64, '1'),
                const std::string& created = "1700000000000000") {
  return absl::StrCat("{\"id\":", id, ",\"created_at_us\":", created, ",\"key\":\"", hex, "\"}");
}

INSTANTIATE_TEST_SUITE_P(
    Files, KeyringMalformedTest,
    ::testing::Values(
        MalformedCase{"Empty", ""}, MalformedCase{"NotJson", "this is not json"},
        MalformedCase{"TruncatedJson", ValidKeyringText(2).substr(0, 60)},
        MalformedCase{"TopLevelArray", "[" + ValidKeyringText(1) + "]"},
        MalformedCase{"WrongFormat", KeysText("[" + Key("1") + "]", "1", "\"bulwark.other\"")},
        MalformedCase{"MissingFormat", "{\"version\":1,\"keys\":[" + Key("1") + "]}"},
        MalformedCase{"WrongVersion", KeysText("[" + Key("1") + "]", "2")},
        MalformedCase{"VersionZero", KeysText("[" + Key("1") + "]", "0")},
        MalformedCase{"VersionAsString", KeysText("[" + Key("1") + "]", "\"1\"")},
        MalformedCase{"VersionAsFloat", KeysText("[" + Key("1") + "]", "1.0")},
        MalformedCase{"MissingKeys", "{\"format\":\"bulwark.keyring\",\"version\":1}"},
        MalformedCase{"KeysNotArray", KeysText(Key("1"))}, MalformedCase{"NoKeys", KeysText("[]")},
        MalformedCase{"KeyNotObject", KeysText("[\"" + std::string(64, '1') + "\"]")},
        MalformedCase{"FirstIdNotOne", KeysText("[" + Key("2") + "]")},
        MalformedCase{"IdZero", KeysText("[" + Key("0") + "]")},
        MalformedCase{"DuplicateIds", KeysText("[" + Key("1") + "," + Key("1") + "]")},
        MalformedCase{"GapInIds", KeysText("[" + Key("1") + "," + Key("3") + "]")},
        MalformedCase{"IdsOutOfOrder", KeysText("[" + Key("2") + "," + Key("1") + "]")},
        MalformedCase{"IdAsString", KeysText("[" + Key("\"1\"") + "]")},
        MalformedCase{"NegativeId", KeysText("[" + Key("-1") + "]")},
        MalformedCase{"IdPastUint32", KeysText("[" + Key("4294967297") + "]")},
        MalformedCase{"NonHexKey", KeysText("[" + Key("1", std::string(63, '1') + "g") + "]")},
        MalformedCase{"ShortKey", KeysText("[" + Key("1", std::string(62, '1')) + "]")},
        MalformedCase{"LongKey", KeysText("[" + Key("1", std::string(66, '1')) + "]")},
        MalformedCase{"EmptyKey", KeysText("[" + Key("1", "") + "]")},
        MalformedCase{"KeyAsNumber", KeysText("[{\"id\":1,\"created_at_us\":0,\"key\":7}]")},
        MalformedCase{"MissingCreatedAt", KeysText("[{\"id\":1,\"key\":\"" + std::string(64, '1') + "\"}]")},
        MalformedCase{"CreatedAtFloat", KeysText("[" + Key("1", std::string(64, '1'), "1.5") + "]")},
        MalformedCase{"CreatedAtPastInt64",
                      KeysText("[" + Key("1", std::string(64, '1'), "9223372036854775808") + "]")},
        MalformedCase{
            "UnknownTopLevelMember",
            "{\"format\":\"bulwark.keyring\",\"version\":1,\"extra\":0,\"keys\":[" + Key("1") + "]}"},
        MalformedCase{"UnknownKeyMember", KeysText("[{\"id\":1,\"created_at_us\":0,\"key\":\"" +
                                                   std::string(64, '1') + "\",\"note\":\"x\"}]")},
        MalformedCase{"DeepNesting", std::string(100000, '[') + std::string(100000, ']')}),
    [](const ::testing::TestParamInfo<MalformedCase>& info) { return info.param.name; });

TEST_F(KeyringTest, LoadAcceptsTheLimitOfKeysAndRejectsOneMore) {
  // Only checks the key count: kMaxKeyringKeys keys in compact JSON stay under the size limit.
  nlohmann::json keys = nlohmann::json::array();
  for (uint32_t i = 1; i <= kMaxKeyringKeys + 1; ++i) {
    keys.push_back({{"id", i}, {"created_at_us", 0}, {"key", std::string(64, 'a')}});
  }
  nlohmann::json doc = {{"format", "bulwark.keyring"}, {"version", 1}, {"keys", keys}};
  WriteFile(path_, doc.dump());
  EXPECT_EQ(Keyring::Load(path_).status().code(), absl::StatusCode::kDataLoss);
  doc["keys"].erase(doc["keys"].size() - 1);
  WriteFile(path_, doc.dump());
  absl::StatusOr<Keyring> loaded = Keyring::Load(path_);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->newest_key_id(), kMaxKeyringKeys);
}

TEST_F(KeyringTest, RotateAddsANewestKeyAndKeepsTheOldOnes) {
  const mode_t old_umask = ::umask(0);
  FakeEnv env;
  absl::StatusOr<Keyring> keyring = Keyring::Create(path_, &env);
  ASSERT_THAT(keyring, IsOk());
  const HmacKey key1 = *keyring->Find(1);

  absl::StatusOr<uint32_t> id = keyring->Rotate(&env);
  ::umask(old_umask);
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(*id, 2u);
  EXPECT_EQ(keyring->newest_key_id(), 2u);
  ASSERT_NE(keyring->Find(2), nullptr);
  EXPECT_EQ(*keyring->Find(1), key1);
  EXPECT_NE(*keyring->Find(2), key1);
  ASSERT_EQ(keyring->List().size(), 2u);
  EXPECT_EQ(keyring->List()[1].id, 2u);
  EXPECT_EQ(FileMode(path_), 0600u);

  absl::StatusOr<Keyring> loaded = Keyring::Load(path_);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->newest_key_id(), 2u);
  EXPECT_EQ(*loaded->Find(1), key1);
  EXPECT_EQ(*loaded->Find(2), *keyring->Find(2));

  // No temp file is left behind: only the keyring and its lock file.
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename().string());
  EXPECT_THAT(names, ::testing::UnorderedElementsAre("keyring.json", "keyring.json.lock"));
}

TEST_F(KeyringTest, RotateRefusesWhenAnotherProcessRotatedFirst) {
  FakeEnv env;
  ASSERT_THAT(Keyring::Create(path_, &env), IsOk());
  absl::StatusOr<Keyring> first = Keyring::Load(path_);
  absl::StatusOr<Keyring> second = Keyring::Load(path_);
  ASSERT_TRUE(first.ok() && second.ok());

  ASSERT_THAT(first->Rotate(&env), IsOk());
  absl::StatusOr<uint32_t> stale = second->Rotate(&env);
  EXPECT_EQ(stale.status().code(), absl::StatusCode::kFailedPrecondition) << stale.status();
  EXPECT_EQ(second->newest_key_id(), 1u);

  // Key 2 written by `first` survives; a fresh load rotates to 3.
  absl::StatusOr<Keyring> reloaded = Keyring::Load(path_);
  ASSERT_THAT(reloaded, IsOk());
  absl::StatusOr<uint32_t> id = reloaded->Rotate(&env);
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(*id, 3u);
  EXPECT_EQ(*reloaded->Find(2), *first->Find(2));
}

TEST_F(KeyringTest, FailedRotateChangesNothing) {
  FakeEnv env;
  absl::StatusOr<Keyring> keyring = Keyring::Create(path_, &env);
  ASSERT_THAT(keyring, IsOk());
  const HmacKey key1 = *keyring->Find(1);
  ASSERT_TRUE(fs::remove(path_));
  EXPECT_EQ(keyring->Rotate(&env).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(keyring->newest_key_id(), 1u);
  EXPECT_EQ(*keyring->Find(1), key1);
  EXPECT_FALSE(fs::exists(path_));
}

TEST_F(KeyringTest, RotateRefusesAGroupReadableFile) {
  FakeEnv env;
  absl::StatusOr<Keyring> keyring = Keyring::Create(path_, &env);
  ASSERT_THAT(keyring, IsOk());
  ASSERT_EQ(::chmod(path_.c_str(), 0640), 0);
  EXPECT_EQ(keyring->Rotate(&env).status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(keyring->newest_key_id(), 1u);
}

// The owner re-reads the file in place (move assignment) when another process rotated it, while
// readers keep signing and verifying with the same object: they see the old keys or the new ones,
// and a key they hold stays valid (and unchanged) after the replacement.
TEST_F(KeyringTest, ReadersRunWhileTheKeyringIsReplacedInPlace) {
  FakeEnv env;
  absl::StatusOr<Keyring> shared = Keyring::Create(path_, &env);
  ASSERT_TRUE(shared.ok()) << shared.status();
  const std::shared_ptr<const HmacKey> held = shared->Find(1);
  ASSERT_NE(held, nullptr);
  const HmacKey key1 = *held;

  constexpr int kRotations = 20;
  std::atomic<bool> done{false};
  std::atomic<int> wrong{0};
  auto reader = [&] {
    for (int round = 0; round < 20000 && !done.load(); ++round) {
      const uint32_t newest = shared->newest_key_id();
      const std::shared_ptr<const HmacKey> key = shared->Find(newest);
      const std::shared_ptr<const HmacKey> first = shared->Find(1);
      if (newest == 0 || key == nullptr || first == nullptr || *first != key1) wrong.fetch_add(1);
      if (shared->List().size() < newest) wrong.fetch_add(1);
    }
  };
  std::thread a(reader), b(reader);
  for (int i = 0; i < kRotations; ++i) {
    absl::StatusOr<Keyring> other = Keyring::Load(path_);  // "another process"
    ASSERT_TRUE(other.ok()) << other.status();
    ASSERT_THAT(other->Rotate(&env), IsOk());
    absl::StatusOr<Keyring> reread = Keyring::Load(path_);
    ASSERT_TRUE(reread.ok()) << reread.status();
    *shared = *std::move(reread);
  }
  done.store(true);
  a.join();
  b.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(shared->newest_key_id(), static_cast<uint32_t>(kRotations + 1));
  EXPECT_EQ(*held, key1) << "a key handed out before the re-reads is still the same key";
  // Rotating the replaced object itself works and sees the re-read keys.
  absl::StatusOr<uint32_t> id = shared->Rotate(&env);
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(*id, static_cast<uint32_t>(kRotations + 2));
}

TEST(EmptyKeyringTest, HasNoKeysAndCannotRotate) {
  Keyring keyring;
  FakeEnv env;
  EXPECT_EQ(keyring.newest_key_id(), 0u);
  EXPECT_EQ(keyring.Find(0), nullptr);
  EXPECT_EQ(keyring.Find(1), nullptr);
  EXPECT_TRUE(keyring.List().empty());
  EXPECT_EQ(keyring.Rotate(&env).status().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace bulwark
