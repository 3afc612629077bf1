// SqliteHoneypotRepository: a missing file is NotFound, and a store created before the tables
// existed still opens (for the repository and for SqliteBackend, at the current schema version).
// The HoneypotRepository contract itself (round trips, partitions, limits) runs against SQLite and
// PostgreSQL in storage/postgresql/repository_contract_test.cc.
#include "storage/sqlite/sqlite_honeypot_repository.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "storage/sqlite/sqlite_backend.h"
#include "storage/sqlite/sqlite_schema.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"

namespace bulwark {
namespace {

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

  ::bulwark::testing::TempDir dir_;
  std::filesystem::path path_;
};

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
