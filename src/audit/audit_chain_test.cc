// The signed audit chain: the record encoding is pinned by a test vector anyone can recompute
// (Python's hmac module), a signed log verifies, and each kind of tampering an operator should
// see is reported at the right record -- an edited field, a record removed from the middle, a
// record inserted without a tag, a forged tag -- while records written before signing are counted,
// not failed; key rotation keeps the chain verifying.
#include "audit/audit_chain.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "core/hex.h"
#include "testing/exec_sql.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"

namespace bulwark {
namespace {

using ::bulwark::testing::IsOk;

using ::testing::HasSubstr;

// A keyring file whose key 1 is the bytes 0x00..0x1f (for the test vector).
std::filesystem::path WriteFixedKeyring(const std::filesystem::path& dir) {
  const std::filesystem::path path = dir / "keyring.json";
  std::string hex;
  for (int i = 0; i < 32; ++i) hex += HexEncode(std::string(1, static_cast<char>(i)));
  std::ofstream(path) << nlohmann::json{{"format", "bulwark.keyring"},
                                        {"version", 1},
                                        {"keys", {{{"id", 1}, {"created_at_us", 1}, {"key", hex}}}}}
                             .dump();
  chmod(path.c_str(), 0600);
  return path;
}

TEST(AuditChainTest, TagMatchesAnIndependentHmacOfTheEncoding) {
  testing::TempDir dir;
  auto keyring = Keyring::Load(WriteFixedKeyring(dir.path()));
  ASSERT_TRUE(keyring.ok()) << keyring.status();
  AuditRecord r;
  r.at_us = 1700000000000000;
  r.principal = "agent-1";
  r.session = "chat-42";
  r.name_space = "alice";
  r.operation = "search";
  r.query_hash = "9f86d081884c7d65";
  const StoredAuditRecord row{7, r, R"(["01A","01B"])", R"({"gate":{"decision":"pass"}})"};
  // python3: hmac.new(bytes(range(32)), b"bulwark.audit.v1" + f("1") + f("7") + ... + f(prev),
  // hashlib.sha256).hexdigest(), f(b) = struct.pack("<Q", len(b)) + b.
  auto first = AuditRecordTag(*keyring, row, 1, "");
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(HexEncode(*first), "4a07e4a953df38964a42d35404ab21fdd51a40e875e181de9d5a2f82ce67e9a8");
  auto chained = AuditRecordTag(*keyring, row, 1, std::string(32, '\x11'));
  ASSERT_TRUE(chained.ok()) << chained.status();
  EXPECT_EQ(HexEncode(*chained), "518e3617aaae5d215a9806618f619b2fb1b5592a1d4055ebd5c2e5876481b7a4");
  EXPECT_EQ(AuditRecordTag(*keyring, row, 2, "").status().code(), absl::StatusCode::kFailedPrecondition);
}

class SignedAuditLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto keyring = Keyring::Create(keyring_path_, Env::Default());
    ASSERT_TRUE(keyring.ok()) << keyring.status();
    testing::ExecSql(db_path_, "PRAGMA journal_mode=WAL");
  }
  // Opens the log (signed unless `sign` is false), appends `n` records and closes it.
  void Write(int n, bool sign = true) {
    auto log = AuditLog::Open(db_path_, 20, AuditLog::kDefaultQueueCapacity,
                              sign ? keyring_path_ : std::filesystem::path());
    ASSERT_TRUE(log.ok()) << log.status();
    for (int i = 0; i < n; ++i) {
      AuditRecord r;
      r.at_us = 1000 + written_;
      r.principal = "agent";
      r.session = "s" + std::to_string(written_++);
      r.name_space = "alice";
      r.operation = "search";
      r.query_hash = Sha256Hex(r.session);
      r.returned_ids = {"01A", "01B"};
      r.detail = {{"gate", {{"decision", "pass"}, {"score", 0.25}}}};
      (*log)->Append(std::move(r));
    }
    ASSERT_THAT((*log)->Flush(), IsOk());
  }
  AuditVerification Verify() {
    auto log = AuditLog::Open(db_path_, 20, AuditLog::kDefaultQueueCapacity, keyring_path_);
    EXPECT_TRUE(log.ok()) << log.status();
    if (!log.ok()) return {};
    auto verification = (*log)->Verify();
    EXPECT_TRUE(verification.ok()) << verification.status();
    return verification.ok() ? *verification : AuditVerification{};
  }
  std::vector<int64_t> BadSeqs(const AuditVerification& v) {
    std::vector<int64_t> out;
    for (const auto& b : v.bad) out.push_back(b.seq);
    return out;
  }

  testing::TempDir dir_;
  std::filesystem::path db_path_ = dir_ / "audit.db";
  std::filesystem::path keyring_path_ = dir_ / "keyring.json";
  int written_ = 0;
};

TEST_F(SignedAuditLogTest, AnUntouchedLogVerifies) {
  Write(5);
  Write(3);  // a second writer continues the chain from the file
  const AuditVerification v = Verify();
  EXPECT_EQ(v.records, 8);
  EXPECT_EQ(v.unsigned_records, 0);
  EXPECT_TRUE(v.ok()) << ToJson(v).dump();
}

TEST_F(SignedAuditLogTest, AnEditedRecordIsReportedAtItsSeq) {
  Write(5);
  testing::ExecSql(db_path_, "UPDATE audit SET returned_ids = '[\"01A\"]' WHERE seq = 3");
  EXPECT_THAT(BadSeqs(Verify()), ::testing::ElementsAre(3));
}

TEST_F(SignedAuditLogTest, ARemovedRecordBreaksTheNextOne) {
  Write(5);
  testing::ExecSql(db_path_, "DELETE FROM audit WHERE seq = 3");
  const AuditVerification v = Verify();
  EXPECT_THAT(BadSeqs(v), ::testing::ElementsAre(4));
  EXPECT_THAT(v.bad[0].reason, HasSubstr("a record before it was removed"));
}

TEST_F(SignedAuditLogTest, AnUnsignedOrForgedRecordAfterSignedOnesIsReported) {
  Write(2);
  testing::ExecSql(
      db_path_,
      "INSERT INTO audit(at_us, principal, session, namespace, operation, query_hash, returned_ids, "
      "detail) VALUES(5, 'mallory', '', 'alice', 'search', '', '[]', '{}')");
  testing::ExecSql(
      db_path_,
      "INSERT INTO audit(at_us, principal, session, namespace, operation, query_hash, returned_ids, "
      "detail, key_id, tag) VALUES(6, 'mallory', '', 'alice', 'search', '', '[]', '{}', 1, "
      "zeroblob(32))");
  testing::ExecSql(
      db_path_,
      "INSERT INTO audit(at_us, principal, session, namespace, operation, query_hash, returned_ids, "
      "detail, key_id, tag) VALUES(7, 'mallory', '', 'alice', 'search', '', '[]', '{}', 99, "
      "zeroblob(32))");
  const AuditVerification v = Verify();
  EXPECT_EQ(v.records, 5);
  ASSERT_THAT(BadSeqs(v), ::testing::ElementsAre(3, 4, 5));
  EXPECT_THAT(v.bad[0].reason, HasSubstr("not signed"));
  EXPECT_THAT(v.bad[1].reason, HasSubstr("tag does not match"));
  EXPECT_THAT(v.bad[2].reason, HasSubstr("no signing key 99"));
}

TEST_F(SignedAuditLogTest, RecordsFromBeforeSigningAreCountedAndTheChainStartsAfterThem) {
  Write(2, /*sign=*/false);
  Write(3);
  const AuditVerification v = Verify();
  EXPECT_EQ(v.records, 5);
  EXPECT_EQ(v.unsigned_records, 2);
  EXPECT_TRUE(v.ok()) << ToJson(v).dump();
}

TEST_F(SignedAuditLogTest, RotatingTheKeyKeepsTheChainVerifying) {
  Write(2);
  auto keyring = Keyring::Load(keyring_path_);
  ASSERT_THAT(keyring, IsOk());
  ASSERT_THAT(keyring->Rotate(Env::Default()), IsOk());
  Write(2);  // signed with key 2, chained to a record signed with key 1
  const AuditVerification v = Verify();
  EXPECT_EQ(v.records, 4);
  EXPECT_TRUE(v.ok()) << ToJson(v).dump();
  testing::ExecSql(db_path_, "UPDATE audit SET principal = 'mallory' WHERE seq = 4");
  EXPECT_THAT(BadSeqs(Verify()), ::testing::ElementsAre(4));
}

TEST_F(SignedAuditLogTest, ALogOfTheEarlierLayoutGainsTheSigningColumns) {
  // audit.db as the previous version wrote it: no key_id, no tag.
  testing::ExecSql(
      db_path_,
      "CREATE TABLE audit(seq INTEGER PRIMARY KEY AUTOINCREMENT, at_us INTEGER NOT NULL, principal TEXT "
      "NOT NULL, session TEXT NOT NULL, namespace TEXT NOT NULL, operation TEXT NOT NULL, query_hash "
      "TEXT NOT NULL, returned_ids TEXT NOT NULL, detail TEXT NOT NULL); "
      "INSERT INTO audit(at_us, principal, session, namespace, operation, query_hash, returned_ids, "
      "detail) VALUES(1, 'old', '', 'alice', 'search', '', '[]', '{}')");
  Write(2);
  const AuditVerification v = Verify();
  EXPECT_EQ(v.records, 3);
  EXPECT_EQ(v.unsigned_records, 1);
  EXPECT_TRUE(v.ok()) << ToJson(v).dump();
}

TEST_F(SignedAuditLogTest, AnUnsignedLogCannotBeVerified) {
  auto log = AuditLog::Open(db_path_);
  ASSERT_THAT(log, IsOk());
  EXPECT_EQ((*log)->Verify().status().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace bulwark
