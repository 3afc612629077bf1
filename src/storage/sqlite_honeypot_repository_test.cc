// SqliteHoneypotRepository: runs and blocks round-trip, namespaces are partitions, rows survive a
// reopen, oversized input is refused, and a store created before the tables existed still opens
// (for the repository and for SqliteBackend, at the current schema version).
#include "storage/sqlite_honeypot_repository.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "storage/sqlite_backend.h"
#include "storage/sqlite_schema.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"

namespace bulwark {
namespace {

using ::bulwark::testing::IsOk;
using ::bulwark::testing::StatusIs;

class SqliteHoneypotRepositoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_ / "bulwark.db";
    auto backend = SqliteBackend::Open(path_, /*create=*/true);
    ASSERT_TRUE(backend.ok()) << backend.status();
  }
  std::unique_ptr<SqliteHoneypotRepository> OpenRepo() {
    auto repo = SqliteHoneypotRepository::Open(path_);
    EXPECT_TRUE(repo.ok()) << repo.status();
    return repo.ok() ? std::move(*repo) : nullptr;
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

  ::bulwark::testing::TempDir dir_;
  std::filesystem::path path_;
};

TEST_F(SqliteHoneypotRepositoryTest, RunsRoundTripPerNamespaceAndRetire) {
  auto repo = OpenRepo();
  ASSERT_NE(repo, nullptr);
  auto first = repo->AddRun({0, "a", 10, 1, R"({"seed":1})", R"(["m1"])", R"(["p1"])", 0});
  auto second = repo->AddRun({0, "a", 20, 2, R"({"seed":2})", R"(["m2"])", R"(["p2"])", 0});
  auto other = repo->AddRun({0, "b", 30, 1, "{}", "[]", "[]", 0});
  ASSERT_TRUE(first.ok() && second.ok() && other.ok());
  EXPECT_LT(*first, *second);

  std::vector<HoneypotRun> a = Runs(*repo, "a");
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].run_id, *first);
  EXPECT_EQ(a[0].name_space, "a");
  EXPECT_EQ(a[0].at_us, 10);
  EXPECT_EQ(a[0].batch, 1);
  EXPECT_EQ(a[0].metrics, R"({"seed":1})");
  EXPECT_EQ(a[0].covered_ids, R"(["m1"])");
  EXPECT_EQ(a[0].pot_ids, R"(["p1"])");
  EXPECT_EQ(a[1].batch, 2);
  ASSERT_EQ(Runs(*repo, "b").size(), 1u);
  EXPECT_TRUE(Runs(*repo, "c").empty());

  auto removed = repo->RemoveRuns("a", 99);
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_EQ(*removed, 2);
  EXPECT_EQ(*repo->RemoveRuns("a", 100), 0);  // already retired: the first time stays
  for (const HoneypotRun& r : Runs(*repo, "a")) EXPECT_EQ(r.removed_at_us, 99);
  EXPECT_EQ(Runs(*repo, "b")[0].removed_at_us, 0);
}

TEST_F(SqliteHoneypotRepositoryTest, BlocksRoundTripAndSurviveReopen) {
  {
    auto repo = OpenRepo();
    ASSERT_NE(repo, nullptr);
    ASSERT_THAT(repo->PutBlock({"a", std::string("\x01k1\0x", 5), "state-1"}), IsOk());
    ASSERT_THAT(repo->PutBlock({"b", "k2", "state-2"}), IsOk());
    ASSERT_THAT(repo->PutBlock({"b", "k2", "state-3"}), IsOk());  // replaces
    ASSERT_TRUE(repo->AddRun({0, "a", 1, 1, "{}", "[]", "[]", 0}).ok());
  }
  auto repo = OpenRepo();
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
  EXPECT_EQ(Runs(*repo, "a").size(), 1u);

  EXPECT_THAT(repo->DeleteBlock("k2"), IsOk());
  EXPECT_THAT(repo->DeleteBlock("k2"), StatusIs(absl::StatusCode::kNotFound));
}

TEST_F(SqliteHoneypotRepositoryTest, SettingsRoundTripAndAreBounded) {
  auto repo = OpenRepo();
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
}

TEST_F(SqliteHoneypotRepositoryTest, RefusesOversizedInputAndChangesNothing) {
  auto repo = OpenRepo();
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
}

TEST_F(SqliteHoneypotRepositoryTest, MissingFileIsNotFoundAndTheStoreStillOpens) {
  EXPECT_THAT(SqliteHoneypotRepository::Open(dir_ / "nope.db").status(),
              StatusIs(absl::StatusCode::kNotFound));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "nope.db"));
  ASSERT_NE(OpenRepo(), nullptr);  // adds the tables to an existing store
  auto backend = SqliteBackend::Open(path_, /*create=*/false);
  ASSERT_TRUE(backend.ok()) << backend.status();
  auto version = (*backend)->GetMeta("schema_version");
  ASSERT_TRUE(version.ok()) << version.status();
  EXPECT_EQ(version->value_or(""), std::to_string(kStoreSchemaVersion));
}

}  // namespace
}  // namespace bulwark
