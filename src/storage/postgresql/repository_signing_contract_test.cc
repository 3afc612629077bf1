// The contracts of the signing bookkeeping of GateRepository and AccessRepository
// (gate_repository.h, "The manifest"; FinishSigningUpgrade of both): one test body per behaviour,
// run against the SQLite and the PostgreSQL implementation (StoreUnderTest). The manifest's signer
// here is a fake that tags the namespaces it is given, so a test can tell which rows a manifest
// was signed over; the HMAC is gate/gate_store.h's and is tested there.
#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "core/hex.h"
#include "storage/postgresql/testing/store_under_test.h"
#include "storage/sqlite/sqlite_schema.h"
#include "testing/status_matchers.h"

namespace bulwark {
namespace {

using ::bulwark::testing::IsOk;
using ::bulwark::testing::StatusIs;
using ::bulwark::testing::StoreKind;
using ::bulwark::testing::StoreUnderTest;
using ::testing::ElementsAre;

void FakeSign(GateManifest* manifest) {
  manifest->sign_key_id = 3;
  manifest->tag = absl::StrCat("signed:", absl::StrJoin(manifest->namespaces, ","));
}

GateRow Gate(std::string name_space) {
  return {std::move(name_space), "reject", "emb", 5, "{}", std::string("\x00\x01", 2), 1,
          std::string(32, 'g')};
}

class RepositorySigningContract : public ::testing::TestWithParam<StoreKind> {
 protected:
  void SetUp() override {
    auto store = StoreUnderTest::Create(GetParam());
    ASSERT_THAT(store, IsOk());
    store_ = *std::move(store);
    auto backend = store_->OpenBackend(/*create=*/true);  // makes the store
    ASSERT_THAT(backend, IsOk());
    backend_ = *std::move(backend);
  }
  std::unique_ptr<GateRepository> Gates() {
    auto repo = store_->OpenGate();
    EXPECT_THAT(repo, IsOk());
    return repo.ok() ? *std::move(repo) : nullptr;
  }
  std::vector<std::string> ManifestNamespaces(GateRepository& gates) {
    auto manifest = gates.Manifest();
    EXPECT_THAT(manifest, IsOk());
    if (!manifest.ok() || !manifest->has_value()) return {"(no manifest)"};
    EXPECT_EQ((*manifest)->sign_key_id, 3u);
    EXPECT_EQ((*manifest)->tag, absl::StrCat("signed:", absl::StrJoin((*manifest)->namespaces, ",")));
    return (*manifest)->namespaces;
  }

  std::unique_ptr<StoreUnderTest> store_;
  std::unique_ptr<StorageBackend> backend_;
};

TEST_P(RepositorySigningContract, ANewStoreWaitsForItsFirstManifestWhichIsWrittenOnce) {
  auto gates = Gates();
  ASSERT_NE(gates, nullptr);
  EXPECT_TRUE(gates->manifest_pending()) << "a new store is marked, as an upgraded one is";
  auto none = gates->Manifest();
  ASSERT_THAT(none, IsOk());
  EXPECT_FALSE(none->has_value());
  EXPECT_THAT(gates->WriteManifest(), StatusIs(absl::StatusCode::kFailedPrecondition));
  ASSERT_THAT(gates->Save(Gate("early")), IsOk()) << "without a signer a save writes no manifest";
  none = gates->Manifest();
  ASSERT_THAT(none, IsOk());
  EXPECT_FALSE(none->has_value());
  gates->SetManifestSigner(FakeSign);
  ASSERT_THAT(gates->WriteManifest(), IsOk());
  EXPECT_FALSE(gates->manifest_pending());
  EXPECT_THAT(ManifestNamespaces(*gates), ElementsAre("early"));
  auto reopened = Gates();
  ASSERT_NE(reopened, nullptr);
  EXPECT_FALSE(reopened->manifest_pending()) << "in every process";
}

TEST_P(RepositorySigningContract, SaveAndRemoveReplaceTheManifestWithTheSameStoredBytes) {
  auto gates = Gates();
  ASSERT_NE(gates, nullptr);
  gates->SetManifestSigner(FakeSign);
  ASSERT_THAT(gates->WriteManifest(), IsOk());
  EXPECT_THAT(ManifestNamespaces(*gates), ::testing::IsEmpty());
  ASSERT_THAT(gates->Save(Gate("b")), IsOk());
  ASSERT_THAT(gates->Save(Gate("a")), IsOk());
  ASSERT_THAT(gates->Save(Gate("a")), IsOk());  // replaced, still one row
  EXPECT_THAT(ManifestNamespaces(*gates), ElementsAre("a", "b"));
  ASSERT_THAT(gates->Remove("a"), IsOk());
  EXPECT_THAT(ManifestNamespaces(*gates), ElementsAre("b"));
  EXPECT_THAT(gates->Remove("a"), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(ManifestNamespaces(*gates), ElementsAre("b")) << "a failed remove changes nothing";
  // The stored row is the same JSON in both backends (doc/gate_format.md, "Manifest").
  auto stored = backend_->GetMeta(kGateManifestKey);
  ASSERT_THAT(stored, IsOk());
  const nlohmann::json json = {{"namespaces", {"b"}}, {"key_id", 3}, {"tag", HexEncode("signed:b")}};
  EXPECT_EQ(*stored, json.dump());
  ASSERT_THAT(backend_->PutMeta(kGateManifestKey, R"({"namespaces":[1],"key_id":3,"tag":""})"), IsOk());
  EXPECT_THAT(gates->Manifest(), StatusIs(absl::StatusCode::kDataLoss));
}

TEST_P(RepositorySigningContract, WritersOnSeveralConnectionsNeverLeaveAManifestMissingARow) {
  constexpr int kWriters = 2;
  std::vector<std::unique_ptr<GateRepository>> conns;
  for (int w = 0; w < kWriters; ++w) {
    conns.push_back(Gates());
    ASSERT_NE(conns.back(), nullptr);
    conns.back()->SetManifestSigner(FakeSign);
  }
  // Rounds of saves that start together: without the writers' lock both read the rows before
  // either commits, and the later commit's manifest misses the other's row.
  for (int round = 0; round < 15; ++round) {
    std::atomic<int> ready{0};
    std::vector<std::thread> threads;
    for (int w = 0; w < kWriters; ++w) {
      threads.emplace_back([&, w] {
        ready.fetch_add(1);
        while (ready.load() < kWriters) std::this_thread::yield();
        EXPECT_THAT(conns[w]->Save(Gate(absl::StrCat("r", 100 + round, "-w", w))), IsOk());
      });
    }
    for (auto& t : threads) t.join();
    auto rows = conns[0]->List();
    ASSERT_THAT(rows, IsOk());
    std::vector<std::string> names;
    for (const GateRow& row : *rows) names.push_back(row.name_space);
    ASSERT_EQ(ManifestNamespaces(*conns[0]), names) << "round " << round;
  }
}

TEST_P(RepositorySigningContract, FinishSigningUpgradeClearsTheMarkDurablyAndIsIdempotent) {
  {
    auto gates = Gates();
    ASSERT_NE(gates, nullptr);
    EXPECT_FALSE(gates->upgraded_from_unsigned()) << "a new store has nothing unsigned";
    EXPECT_THAT(gates->FinishSigningUpgrade(), IsOk());
    auto access = store_->OpenAccess();
    ASSERT_THAT(access, IsOk());
    EXPECT_FALSE((*access)->upgraded_from_unsigned());
    EXPECT_THAT((*access)->FinishSigningUpgrade(), IsOk());
  }
  // What an upgraded store's migration leaves (sqlite_schema.cc, version 3).
  ASSERT_THAT(backend_->PutMeta(kUnsignedGateMarker, "1"), IsOk());
  ASSERT_THAT(backend_->PutMeta(kUnsignedAccessMarker, "1"), IsOk());
  auto gates = Gates();
  ASSERT_NE(gates, nullptr);
  auto access = store_->OpenAccess();
  ASSERT_THAT(access, IsOk());
  EXPECT_TRUE(gates->upgraded_from_unsigned());
  EXPECT_TRUE((*access)->upgraded_from_unsigned());
  ASSERT_THAT(gates->FinishSigningUpgrade(), IsOk());
  ASSERT_THAT((*access)->FinishSigningUpgrade(), IsOk());
  EXPECT_FALSE(gates->upgraded_from_unsigned());
  EXPECT_FALSE((*access)->upgraded_from_unsigned());
  EXPECT_THAT(gates->FinishSigningUpgrade(), IsOk()) << "idempotent";
  EXPECT_EQ(*backend_->GetMeta(kUnsignedGateMarker), std::nullopt);
  EXPECT_EQ(*backend_->GetMeta(kUnsignedAccessMarker), std::nullopt);
  auto gates_again = Gates();
  ASSERT_NE(gates_again, nullptr);
  auto access_again = store_->OpenAccess();
  ASSERT_THAT(access_again, IsOk());
  EXPECT_FALSE(gates_again->upgraded_from_unsigned()) << "in every process";
  EXPECT_FALSE((*access_again)->upgraded_from_unsigned());
}

INSTANTIATE_TEST_SUITE_P(Backends, RepositorySigningContract,
                         ::testing::Values(StoreKind::kSqlite, StoreKind::kPostgres),
                         [](const auto& info) { return ::bulwark::testing::StoreKindName(info.param); });

}  // namespace
}  // namespace bulwark
