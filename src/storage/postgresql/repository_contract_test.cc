// The contracts of AccessRepository, GateRepository and HoneypotRepository (access_repository.h,
// gate_repository.h, honeypot_repository.h): one test body per behaviour, run against the SQLite
// and the PostgreSQL implementation (StoreUnderTest). Rows round-trip byte for byte (tags, NUL
// bytes in block keys), taken names are AlreadyExists, updates are all-or-nothing, sizes are
// bounded on the way in and out, and a tampered row is handed back as stored (the signers above
// storage catch it) or refused as DataLoss where the contract says so.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "storage/postgresql/pg_connection.h"
#include "storage/postgresql/postgres_store.h"
#include "storage/postgresql/testing/pg_test_environment.h"
#include "storage/postgresql/testing/store_under_test.h"
#include "testing/status_matchers.h"

namespace bulwark {
namespace {

using ::bulwark::testing::IsOk;
using ::bulwark::testing::StatusIs;
using ::bulwark::testing::StoreKind;
using ::bulwark::testing::StoreUnderTest;

class RepositoryContract : public ::testing::TestWithParam<StoreKind> {
 protected:
  void SetUp() override {
    auto store = StoreUnderTest::Create(GetParam());
    ASSERT_THAT(store, IsOk());
    store_ = *std::move(store);
    ASSERT_THAT(store_->OpenBackend(/*create=*/true), IsOk());  // makes the store
  }
  std::unique_ptr<HoneypotRepository> Honeypots() {
    auto repo = store_->OpenHoneypot();
    EXPECT_THAT(repo, IsOk());
    return repo.ok() ? *std::move(repo) : nullptr;
  }
  std::vector<HoneypotRun> Runs(HoneypotRepository& repo, std::string_view ns) {
    std::vector<HoneypotRun> runs;
    EXPECT_THAT(repo.ScanRuns(ns,
                              [&](const HoneypotRun& r) {
                                runs.push_back(r);
                                return absl::OkStatus();
                              }),
                IsOk());
    return runs;
  }

  std::unique_ptr<StoreUnderTest> store_;
};

PrincipalRow Principal(std::string name) {
  return {std::move(name), "writer", R"(["a","b"])", false, 100, 1, std::string(32, '\xa5')};
}

ApiKeyRow Key(std::string key_id, std::string principal, int64_t at) {
  return {std::move(key_id),      std::move(principal), std::string(64, 'f'), at, false, 1,
          std::string(32, '\x00')};
}

TEST_P(RepositoryContract, PrincipalsAndKeysRoundTripAndNamesAreNeverReused) {
  auto repo = store_->OpenAccess();
  ASSERT_THAT(repo, IsOk());
  AccessRepository& access = **repo;
  EXPECT_FALSE(access.upgraded_from_unsigned());
  ASSERT_THAT(access.InsertPrincipal(Principal("bob")), IsOk());
  ASSERT_THAT(access.InsertPrincipal(Principal("alice")), IsOk());
  EXPECT_THAT(access.InsertPrincipal(Principal("bob")), StatusIs(absl::StatusCode::kAlreadyExists));
  auto bob = access.FindPrincipal("bob");
  ASSERT_THAT(bob, IsOk());
  ASSERT_TRUE(bob->has_value());
  EXPECT_EQ((*bob)->grants, R"(["a","b"])");
  EXPECT_EQ((*bob)->tag, std::string(32, '\xa5'));
  EXPECT_EQ((*bob)->sign_key_id, 1u);
  EXPECT_EQ((*access.FindPrincipal("carol")), std::nullopt);
  auto all = access.ListPrincipals();
  ASSERT_THAT(all, IsOk());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].name, "alice");

  ASSERT_THAT(access.InsertKey(Key("00000000000000bb", "bob", 20)), IsOk());
  ASSERT_THAT(access.InsertKey(Key("00000000000000aa", "bob", 20)), IsOk());
  ASSERT_THAT(access.InsertKey(Key("0000000000000001", "alice", 10)), IsOk());
  EXPECT_THAT(access.InsertKey(Key("0000000000000001", "bob", 30)),
              StatusIs(absl::StatusCode::kAlreadyExists));
  auto key = access.FindKey("0000000000000001");
  ASSERT_THAT(key, IsOk());
  ASSERT_TRUE(key->has_value());
  EXPECT_EQ((*key)->tag, std::string(32, '\x00')) << "NUL bytes survive";
  auto bobs = access.ListKeys("bob");
  ASSERT_THAT(bobs, IsOk());
  ASSERT_EQ(bobs->size(), 2u);
  EXPECT_EQ((*bobs)[0].key_id, "00000000000000aa") << "oldest first, then by key id";
  auto every = access.ListKeys("");
  ASSERT_THAT(every, IsOk());
  ASSERT_EQ(every->size(), 3u);
  EXPECT_EQ((*every)[0].key_id, "0000000000000001");
}

TEST_P(RepositoryContract, AccessUpdateIsAllOrNothing) {
  auto repo = store_->OpenAccess();
  ASSERT_THAT(repo, IsOk());
  AccessRepository& access = **repo;
  ASSERT_THAT(access.InsertPrincipal(Principal("bob")), IsOk());
  ASSERT_THAT(access.InsertKey(Key("00000000000000aa", "bob", 1)), IsOk());
  PrincipalRow revoked = Principal("bob");
  revoked.revoked = true;
  revoked.tag = std::string(32, 'R');
  ApiKeyRow missing = Key("00000000000000ff", "bob", 1);
  EXPECT_THAT(access.Update({revoked}, {missing}), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_FALSE((*access.FindPrincipal("bob"))->revoked) << "the failed update changed nothing";
  ApiKeyRow key = Key("00000000000000aa", "bob", 1);
  key.revoked = true;
  ASSERT_THAT(access.Update({revoked}, {key}), IsOk());
  // Another connection (another process) sees the committed rows.
  auto other = store_->OpenAccess();
  ASSERT_THAT(other, IsOk());
  auto bob = (*other)->FindPrincipal("bob");
  ASSERT_THAT(bob, IsOk());
  EXPECT_TRUE((*bob)->revoked);
  EXPECT_EQ((*bob)->tag, std::string(32, 'R'));
  EXPECT_TRUE((*(*other)->FindKey("00000000000000aa"))->revoked);
}

TEST_P(RepositoryContract, GatesAreOneRowPerNamespace) {
  auto repo = store_->OpenGate();
  ASSERT_THAT(repo, IsOk());
  GateRepository& gates = **repo;
  EXPECT_FALSE(gates.upgraded_from_unsigned());
  const std::string model("\x00\x01model\xff", 8);
  ASSERT_THAT(gates.Save({"b", "threshold", "emb-1", 10, R"({"n":3})", model, 2, std::string(32, 't')}),
              IsOk());
  ASSERT_THAT(gates.Save({"a", "off", "emb-1", 11, "{}", "", 2, ""}), IsOk());
  ASSERT_THAT(gates.Save({"b", "threshold", "emb-2", 12, R"({"n":4})", model, 3, std::string(32, 'u')}),
              IsOk());
  auto b = gates.Find("b");
  ASSERT_THAT(b, IsOk());
  ASSERT_TRUE(b->has_value());
  EXPECT_EQ((*b)->embedder, "emb-2") << "Save replaces";
  EXPECT_EQ((*b)->model, model);
  EXPECT_EQ((*b)->sign_key_id, 3u);
  EXPECT_EQ((*b)->fitted_at_us, 12);
  auto all = gates.List();
  ASSERT_THAT(all, IsOk());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].name_space, "a");
  ASSERT_THAT(gates.Remove("a"), IsOk());
  EXPECT_THAT(gates.Remove("a"), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_EQ(*gates.Find("a"), std::nullopt);
}

TEST_P(RepositoryContract, HoneypotRunsRoundTripPerNamespaceAndRetire) {
  auto repo = Honeypots();
  ASSERT_NE(repo, nullptr);
  auto first = repo->AddRun({0, "a", 10, 1, R"({"seed":1})", R"(["m1"])", R"(["p1"])", 0});
  auto second = repo->AddRun({0, "a", 20, 2, R"({"seed":2})", R"(["m2"])", R"(["p2"])", 0});
  auto other = repo->AddRun({0, "b", 30, 1, "{}", "[]", "[]", 0});
  ASSERT_TRUE(first.ok() && second.ok() && other.ok());
  EXPECT_LT(*first, *second);
  std::vector<HoneypotRun> a = Runs(*repo, "a");
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].run_id, *first);
  EXPECT_EQ(a[0].at_us, 10);
  EXPECT_EQ(a[0].metrics, R"({"seed":1})");
  EXPECT_EQ(a[0].covered_ids, R"(["m1"])");
  EXPECT_EQ(a[0].pot_ids, R"(["p1"])");
  EXPECT_EQ(a[1].batch, 2);
  ASSERT_EQ(Runs(*repo, "b").size(), 1u);
  EXPECT_TRUE(Runs(*repo, "c").empty());
  auto removed = repo->RemoveRuns("a", 99);
  ASSERT_THAT(removed, IsOk());
  EXPECT_EQ(*removed, 2);
  EXPECT_EQ(*repo->RemoveRuns("a", 100), 0);  // already retired: the first time stays
  for (const HoneypotRun& r : Runs(*repo, "a")) EXPECT_EQ(r.removed_at_us, 99);
  EXPECT_EQ(Runs(*repo, "b")[0].removed_at_us, 0);
}

TEST_P(RepositoryContract, HoneypotBlocksRoundTripAsBytesAndSurviveReopen) {
  {
    auto repo = Honeypots();
    ASSERT_NE(repo, nullptr);
    ASSERT_THAT(repo->PutBlock({"a", std::string("\x01k1\0x", 5), "state-1"}), IsOk());
    ASSERT_THAT(repo->PutBlock({"b", "k2", "state-2"}), IsOk());
    ASSERT_THAT(repo->PutBlock({"b", "k2", "state-3"}), IsOk());  // replaces
  }
  auto repo = Honeypots();
  ASSERT_NE(repo, nullptr);
  std::vector<HoneypotBlock> blocks;
  ASSERT_THAT(repo->ScanBlocks([&](const HoneypotBlock& b) {
    blocks.push_back(b);
    return absl::OkStatus();
  }),
              IsOk());
  ASSERT_EQ(blocks.size(), 2u);
  EXPECT_EQ(blocks[0].key, std::string("\x01k1\0x", 5));  // bytes, not text: the NUL survives
  EXPECT_EQ(blocks[0].name_space, "a");
  EXPECT_EQ(blocks[1].state, "state-3");
  EXPECT_THAT(repo->DeleteBlock("k2"), IsOk());
  EXPECT_THAT(repo->DeleteBlock("k2"), StatusIs(absl::StatusCode::kNotFound));
}

TEST_P(RepositoryContract, HoneypotSettingsRoundTripAndAreBounded) {
  auto repo = Honeypots();
  ASSERT_NE(repo, nullptr);
  ASSERT_THAT(repo->PutSetting({"b", "block", 3}), IsOk());
  ASSERT_THAT(repo->PutSetting({"a", "monitor", 4}), IsOk());
  ASSERT_THAT(repo->PutSetting({"b", "off", 5}), IsOk());  // replaces
  EXPECT_THAT(repo->PutSetting({"c", "block", 0}), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(repo->PutSetting({"c", "block", 65}), StatusIs(absl::StatusCode::kInvalidArgument));
  std::vector<HoneypotSetting> settings;
  ASSERT_THAT(repo->ScanSettings([&](const HoneypotSetting& s) {
    settings.push_back(s);
    return absl::OkStatus();
  }),
              IsOk());
  ASSERT_EQ(settings.size(), 2u);
  EXPECT_EQ(settings[0].name_space, "a");
  EXPECT_EQ(settings[1].mode, "off");
  EXPECT_EQ(settings[1].k_obs, 5);
  // A setting edited out of range behind the repository's back is refused on the way out.
  ASSERT_THAT(store_->ExecSql("UPDATE honeypot_settings SET k_obs = 1000 WHERE namespace = 'a'"), IsOk());
  EXPECT_THAT(repo->ScanSettings([](const HoneypotSetting&) { return absl::OkStatus(); }),
              StatusIs(absl::StatusCode::kDataLoss));
}

TEST_P(RepositoryContract, HoneypotIntentTablesRoundTripReplaceAndAreBounded) {
  auto repo = Honeypots();
  ASSERT_NE(repo, nullptr);
  const std::string tag("\x00\xffT\x00", 4);  // bytes: NULs survive
  ASSERT_THAT(repo->PutIntentTable({"b", 7, R"({"llr":[1]})", 2, tag}), IsOk());
  ASSERT_THAT(repo->PutIntentTable({"a", 1, R"({"llr":[0]})", 1, "t"}), IsOk());
  ASSERT_THAT(repo->PutIntentTable({"b", 8, R"({"llr":[0.5]})", 3, tag}), IsOk());  // replaces
  EXPECT_THAT(repo->PutIntentTable({"", 1, "{}", 1, "t"}), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(repo->PutIntentTable({"c", 1, "{}", 1, std::string(HoneypotRepository::kMaxTagBytes + 1, 't')}),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(repo->PutIntentTable({"c", 1, "{}", -1, "t"}), StatusIs(absl::StatusCode::kInvalidArgument));
  auto scan = [&] {
    std::vector<HoneypotIntentTable> tables;
    EXPECT_THAT(repo->ScanIntentTables([&](const HoneypotIntentTable& t) {
      tables.push_back(t);
      return absl::OkStatus();
    }),
                IsOk());
    return tables;
  };
  std::vector<HoneypotIntentTable> tables = scan();
  ASSERT_EQ(tables.size(), 2u);
  EXPECT_EQ(tables[0].name_space, "a");
  EXPECT_EQ(tables[1].run_id, 8);
  EXPECT_EQ(tables[1].table, R"({"llr":[0.5]})");
  EXPECT_EQ(tables[1].sign_key_id, 3);
  EXPECT_EQ(tables[1].tag, tag);
  auto deleted = repo->DeleteIntentTable("a");
  ASSERT_THAT(deleted, IsOk());
  EXPECT_EQ(*deleted, 1);
  deleted = repo->DeleteIntentTable("a");
  ASSERT_THAT(deleted, IsOk());
  EXPECT_EQ(*deleted, 0);
  ASSERT_EQ(scan().size(), 1u);
  // A row edited out of range behind the repository's back is refused on the way out.
  ASSERT_THAT(store_->ExecSql("UPDATE honeypot_intent SET sign_key_id = -5"), IsOk());
  EXPECT_THAT(repo->ScanIntentTables([](const HoneypotIntentTable&) { return absl::OkStatus(); }),
              StatusIs(absl::StatusCode::kDataLoss));
}

TEST_P(RepositoryContract, HoneypotRefusesOversizedInputAndChangesNothing) {
  auto repo = Honeypots();
  ASSERT_NE(repo, nullptr);
  EXPECT_THAT(repo->PutBlock({"a", "", "s"}), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(repo->PutBlock({"a", "k", std::string(HoneypotRepository::kMaxStateBytes + 1, 'x')}),
              StatusIs(absl::StatusCode::kInvalidArgument));
  HoneypotRun big{0, "a", 1, 1, std::string(HoneypotRepository::kMaxRunTextBytes + 1, ' '), "[]", "[]", 0};
  EXPECT_THAT(repo->AddRun(big).status(), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_TRUE(Runs(*repo, "a").empty());
  int blocks = 0;
  ASSERT_THAT(repo->ScanBlocks([&](const HoneypotBlock&) {
    ++blocks;
    return absl::OkStatus();
  }),
              IsOk());
  EXPECT_EQ(blocks, 0);
  // A run whose batch was edited out of range is refused on the way out.
  ASSERT_THAT(repo->AddRun({0, "a", 1, 1, "{}", "[]", "[]", 0}), IsOk());
  ASSERT_THAT(store_->ExecSql("UPDATE honeypot_runs SET batch = 0"), IsOk());
  EXPECT_THAT(repo->ScanRuns("a", [](const HoneypotRun&) { return absl::OkStatus(); }),
              StatusIs(absl::StatusCode::kDataLoss));
}

TEST_P(RepositoryContract, RepositoriesNeedAStore) {
  auto empty = StoreUnderTest::Create(GetParam());
  ASSERT_THAT(empty, IsOk());
  EXPECT_THAT((*empty)->OpenAccess(), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT((*empty)->OpenGate(), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT((*empty)->OpenHoneypot(), StatusIs(absl::StatusCode::kNotFound));
}

INSTANTIATE_TEST_SUITE_P(Backends, RepositoryContract,
                         ::testing::Values(StoreKind::kSqlite, StoreKind::kPostgres),
                         [](const auto& info) { return ::bulwark::testing::StoreKindName(info.param); });

}  // namespace
}  // namespace bulwark

namespace bulwark {
namespace {

using ::bulwark::testing::IsOk;
using ::bulwark::testing::StatusIs;

TEST(OpenPostgresRepositories, OpensEveryRepositoryOfOneStoreFromAUrl) {
  auto cluster = ::bulwark::testing::SharedPgCluster();
  ASSERT_THAT(cluster, IsOk());
  auto conninfo = ::bulwark::testing::NewPgTestDatabase();
  ASSERT_THAT(conninfo, IsOk());
  const size_t at = conninfo->find("dbname=") + 7;
  const std::string dbname = conninfo->substr(at, conninfo->find(' ', at) - at);
  const std::string url =
      "postgresql://postgres@127.0.0.1:" + std::to_string((*cluster)->port()) + "/" + dbname;
  EXPECT_TRUE(IsPostgresUrl(url));
  EXPECT_FALSE(IsPostgresUrl("/var/lib/bulwark"));
  EXPECT_THAT(OpenPostgresRepositories(url, /*create=*/false), StatusIs(absl::StatusCode::kNotFound));
  auto repos = OpenPostgresRepositories(url, /*create=*/true);
  ASSERT_THAT(repos, IsOk());
  ASSERT_THAT(repos->gates->Save({"a", "off", "e", 1, "{}", "", 1, ""}), IsOk());
  ASSERT_THAT(repos->access->InsertPrincipal({"bob", "reader", "[]", false, 1, 1, ""}), IsOk());
  ASSERT_THAT(repos->honeypots->PutSetting({"a", "monitor", 4}), IsOk());
  ASSERT_THAT(repos->backend->PutCalibration("a", "{}"), IsOk());
  auto again = OpenPostgresRepositories(url, /*create=*/false);
  ASSERT_THAT(again, IsOk());
  auto gate = again->gates->Find("a");
  ASSERT_THAT(gate, IsOk());
  EXPECT_TRUE(gate->has_value());
  EXPECT_THAT(OpenPostgresRepositories("postgresql://postgres@127.0.0.1:1/x?connect_timeout=2", true),
              StatusIs(absl::StatusCode::kUnavailable));
}

// Opening a store that exists runs no DDL: CREATE INDEX IF NOT EXISTS would wait for every
// writer in flight (and hold up every writer behind it) before finding the index there.
TEST(OpenPostgresRepositories, OpeningAnExistingStoreDoesNotWaitForWriters) {
  auto conninfo = ::bulwark::testing::NewPgTestDatabase();
  ASSERT_THAT(conninfo, IsOk());
  ASSERT_THAT(OpenPostgresRepositories(*conninfo, /*create=*/true), IsOk());
  auto writer = pg::PgConnection::Open(*conninfo);
  ASSERT_THAT(writer, IsOk());
  pg::PgTransaction txn(**writer);
  ASSERT_THAT(
      (*writer)->Exec("LOCK TABLE entries, history, principals, api_keys, query_gates, honeypot_runs, "
                      "honeypot_blocks, honeypot_settings IN ROW EXCLUSIVE MODE"),
      IsOk());
  const std::string bounded = *conninfo + " options='-c lock_timeout=2000'";
  EXPECT_THAT(OpenPostgresRepositories(bounded, /*create=*/true), IsOk());
  EXPECT_THAT(OpenPostgresRepositories(bounded, /*create=*/false), IsOk());
}

}  // namespace
}  // namespace bulwark
