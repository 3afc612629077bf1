// GateStore on real SQLite files in a temporary store directory: round trips,
// survival across reopen, damage detection; GateRegistry's cache.
#include "gate/gate_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "gate/gate_registry.h"
#include "store/memory_store.h"
#include "testing/exec_sql.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"

namespace bulwark {
namespace {

using ::bulwark::testing::IsOk;

using ::testing::HasSubstr;

std::vector<std::vector<float>> Random(int n, int d, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0, 1);
  std::vector<std::vector<float>> out(n, std::vector<float>(d));
  for (auto& v : out) {
    for (float& x : v) x = g(rng);
  }
  return out;
}

class FakeClock : public Env {
 public:
  int64_t NowMicros() override { return now; }
  void RandomBytes(std::span<uint8_t> out) override { Env::Default()->RandomBytes(out); }
  int64_t now = 1'000'000;
};

class GateStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = MemoryStore::Create(dir_.path(), {});
    ASSERT_TRUE(store.ok()) << store.status();
  }
  std::filesystem::path db() const { return dir_ / "bulwark.db"; }
  StoredGate MakeGate(const std::string& ns) {
    auto model = GateModel::Fit(Random(40, 8, 1), {}, {});
    EXPECT_THAT(model, IsOk());
    StoredGate gate;
    gate.name_space = ns;
    gate.mode = GateMode::kReject;
    gate.embedder = "lexical/384/abc";
    gate.fitted_at_us = 42;
    gate.source = {{"benign", "file q.txt"}};
    gate.model = std::make_shared<const GateModel>(*std::move(model));
    return gate;
  }
  testing::TempDir dir_;
};

TEST_F(GateStoreTest, SavesLoadsAndSurvivesReopen) {
  const StoredGate gate = MakeGate("alice");
  {
    auto gates = GateStore::Open(db());
    ASSERT_TRUE(gates.ok()) << gates.status();
    ASSERT_THAT((*gates)->Save(gate), IsOk());
    auto none = (*gates)->Load("bob");
    ASSERT_THAT(none, IsOk());
    EXPECT_FALSE(none->has_value());
  }
  auto gates = GateStore::Open(db());
  ASSERT_THAT(gates, IsOk());
  auto loaded = (*gates)->Load("alice");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_TRUE(loaded->has_value());
  const StoredGate& back = **loaded;
  EXPECT_EQ(back.mode, GateMode::kReject);
  EXPECT_EQ(back.embedder, "lexical/384/abc");
  EXPECT_EQ(back.fitted_at_us, 42);
  EXPECT_EQ(back.source["benign"], "file q.txt");
  EXPECT_EQ(back.model->Summary(), gate.model->Summary());
  const auto z = Random(1, 8, 9)[0];
  EXPECT_EQ(back.model->ScoreOf(GateScore::kMahalanobis, z), gate.model->ScoreOf(GateScore::kMahalanobis, z));

  EXPECT_THAT((*gates)->Remove("alice"), IsOk());
  EXPECT_EQ((*gates)->Remove("alice").code(), absl::StatusCode::kNotFound);
}

TEST_F(GateStoreTest, DamagedRowIsDataLoss) {
  auto gates = GateStore::Open(db());
  ASSERT_THAT(gates, IsOk());
  ASSERT_THAT((*gates)->Save(MakeGate("alice")), IsOk());
  // Flip one byte inside the serialized statistics.
  testing::ExecSql(db(),
                   "UPDATE query_gates SET model = substr(model, 1, 99) || X'FF' || substr(model, 101)");
  auto loaded = (*gates)->Load("alice");
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(loaded.status().message(), HasSubstr("query gate of alice"));
}

// Issue #18 point 6: a gate policy switched off with SQL is refused (searches fail closed) and
// reported by Verify; a table made before rows were signed is signed once, at the upgrade.
TEST_F(GateStoreTest, PolicyEditsAreRefusedAndTheUpgradeSignsOnce) {
  {
    auto gates = GateStore::Open(db());
    ASSERT_TRUE(gates.ok()) << gates.status();
    StoredGate strict = MakeGate("alice");
    strict.mode = GateMode::kReject;
    ASSERT_THAT((*gates)->Save(strict), IsOk());
    ASSERT_THAT((*gates)->Save(MakeGate("bob")), IsOk());
    auto problems = (*gates)->Verify();
    ASSERT_THAT(problems, IsOk());
    EXPECT_TRUE(problems->empty());
  }
  testing::ExecSql(db(), "UPDATE query_gates SET mode = 'off' WHERE namespace = 'alice'");
  auto gates = GateStore::Open(db());
  ASSERT_TRUE(gates.ok()) << gates.status();
  EXPECT_EQ((*gates)->Load("alice").status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT((*gates)->Load("bob"), IsOk());
  auto problems = (*gates)->Verify();
  ASSERT_THAT(problems, IsOk());
  EXPECT_THAT(*problems, ::testing::ElementsAre(HasSubstr("query gate of alice")));

  // The table as main made it before rows were signed (doc/gate_format.md), holding bob's row, in
  // a store of schema version 2 (the version such stores had).
  testing::ExecSql(
      db(),
      "CREATE TABLE old(namespace TEXT PRIMARY KEY, mode TEXT NOT NULL, embedder TEXT NOT NULL, "
      "fitted_at_us INTEGER NOT NULL, source TEXT NOT NULL, model BLOB NOT NULL); "
      "INSERT INTO old SELECT namespace, mode, embedder, fitted_at_us, source, model FROM query_gates "
      "WHERE namespace = 'bob'; DROP TABLE query_gates; ALTER TABLE old RENAME TO query_gates; "
      "UPDATE meta SET value = '2' WHERE key = 'schema_version';");
  gates->reset();
  auto upgraded = GateStore::Open(db());
  ASSERT_TRUE(upgraded.ok()) << upgraded.status();
  EXPECT_TRUE((*upgraded)->Load("bob").ok())
      << "signed at the upgrade: " << (*upgraded)->Load("bob").status();
  testing::ExecSql(db(), "UPDATE query_gates SET tag = x'' WHERE namespace = 'bob'");
  auto reopened = GateStore::Open(db());
  ASSERT_THAT(reopened, IsOk());
  EXPECT_EQ((*reopened)->Load("bob").status().code(), absl::StatusCode::kDataLoss) << "signed only once";
}

TEST_F(GateStoreTest, ADeletedRowIsNamedByTheSignedManifestAndFailsClosed) {
  auto gates = GateStore::Open(db());
  ASSERT_TRUE(gates.ok()) << gates.status();
  ASSERT_THAT((*gates)->Save(MakeGate("alice")), IsOk());
  ASSERT_THAT((*gates)->Save(MakeGate("bob")), IsOk());
  ASSERT_THAT((*gates)->Save(MakeGate("carol")), IsOk());
  ASSERT_TRUE((*gates)->Remove("carol").ok()) << "a removal through the store updates the manifest";
  testing::ExecSql(db(), "DELETE FROM query_gates WHERE namespace = 'alice'");
  EXPECT_THAT((*gates)->Load("alice").status().message(), HasSubstr("deleted"));
  EXPECT_EQ((*gates)->Load("alice").status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT((*gates)->Load("bob"), IsOk());
  auto carol = (*gates)->Load("carol");
  ASSERT_TRUE(carol.ok()) << carol.status();
  EXPECT_FALSE(carol->has_value());
  auto problems = (*gates)->Verify();
  ASSERT_THAT(problems, IsOk());
  EXPECT_THAT(*problems, ::testing::ElementsAre(HasSubstr("query gate of alice: deleted")));

  // Deleting the manifest too leaves bob's row without one: every namespace without a row fails.
  testing::ExecSql(db(), "DELETE FROM meta WHERE key = 'query_gate_manifest'");
  EXPECT_EQ((*gates)->Load("alice").status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT((*gates)->Load("bob"), IsOk());
  problems = (*gates)->Verify();
  ASSERT_THAT(problems, IsOk());
  EXPECT_THAT(*problems, ::testing::ElementsAre(HasSubstr("manifest of query gates is missing")));
}

TEST_F(GateStoreTest, RegistryCachesForTtlAndInvalidates) {
  auto gates = GateStore::Open(db());
  ASSERT_THAT(gates, IsOk());
  FakeClock clock;
  GateRegistry registry(gates->get(), &clock, /*ttl_ms=*/1000);
  auto none = registry.Get("alice");
  ASSERT_THAT(none, IsOk());
  EXPECT_EQ(*none, nullptr);
  ASSERT_THAT((*gates)->Save(MakeGate("alice")), IsOk());
  EXPECT_EQ(*registry.Get("alice"), nullptr);  // remembered "no gate" within the TTL
  clock.now += 1'000'001;
  auto found = registry.Get("alice");
  ASSERT_THAT(found, IsOk());
  ASSERT_NE(*found, nullptr);
  EXPECT_EQ((*found)->mode, GateMode::kReject);
  ASSERT_THAT((*gates)->Remove("alice"), IsOk());
  registry.Invalidate("alice");
  EXPECT_EQ(*registry.Get("alice"), nullptr);
}

}  // namespace
}  // namespace bulwark
