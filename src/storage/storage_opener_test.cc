// The storage opener: a directory location gives every repository of one store (created with
// `create`, NotFound without), a PostgreSQL location is Unimplemented, and the SQLite audit
// repository appends batches under the head it read, returns them filtered newest first, and
// scans them in seq order.
#include "storage/storage_opener.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/status_matchers.h"
#include "testing/temp_dir.h"

namespace bulwark {
namespace {

using ::bulwark::testing::IsOk;
using ::bulwark::testing::StatusIs;

TEST(StorageOpenerTest, ADirectoryGivesEveryRepository) {
  testing::TempDir dir;
  EXPECT_THAT(OpenStorage(dir.path().string(), /*create=*/false), StatusIs(absl::StatusCode::kNotFound));
  auto storage = OpenStorage(dir.path().string(), /*create=*/true);
  ASSERT_THAT(storage, IsOk());
  EXPECT_NE(storage->entries, nullptr);
  EXPECT_NE(storage->defense_state, nullptr);
  EXPECT_NE(storage->audit, nullptr);
  EXPECT_NE(storage->access, nullptr);
  EXPECT_NE(storage->gate, nullptr);
  EXPECT_NE(storage->honeypot, nullptr);
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "bulwark.db"));
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "audit.db"));
  storage = absl::InternalError("closed");
  EXPECT_THAT(OpenStorage(dir.path().string(), /*create=*/false), IsOk()) << "the store opens again";
}

TEST(StorageOpenerTest, PostgresLocationsAreUnimplemented) {
  for (const char* location : {"postgresql://localhost/bulwark", "postgres://u@h/db", "POSTGRESQL://h/db"}) {
    EXPECT_TRUE(IsPostgresLocation(location)) << location;
    EXPECT_THAT(OpenStorage(location, true), StatusIs(absl::StatusCode::kUnimplemented)) << location;
    EXPECT_THAT(OpenEntryRepositories(location, true), StatusIs(absl::StatusCode::kUnimplemented));
    EXPECT_THAT(OpenAuditRepository(location), StatusIs(absl::StatusCode::kUnimplemented));
    EXPECT_THAT(OpenAccessRepository(location), StatusIs(absl::StatusCode::kUnimplemented));
    EXPECT_THAT(OpenGateRepository(location), StatusIs(absl::StatusCode::kUnimplemented));
    EXPECT_THAT(OpenHoneypotRepository(location), StatusIs(absl::StatusCode::kUnimplemented));
  }
  EXPECT_FALSE(IsPostgresLocation("/var/lib/postgresql/store"));
}

AuditRow Row(std::string principal, std::string ids, int64_t seq = 0) {
  AuditRow row;
  row.seq = seq;
  row.at_us = 1000 + seq;
  row.principal = std::move(principal);
  row.operation = "search";
  row.returned_ids = std::move(ids);
  row.detail = "{}";
  if (seq != 0) {
    row.key_id = 1;
    row.tag = "tag" + std::to_string(seq);
  }
  return row;
}

TEST(StorageOpenerTest, AuditRepositoryAppendsUnderTheHeadItRead) {
  testing::TempDir dir;
  auto storage = OpenStorage(dir.path().string(), /*create=*/true);
  ASSERT_THAT(storage, IsOk());
  AuditRepository& audit = *storage->audit;
  std::vector<int64_t> heads;
  auto append = [&](std::vector<AuditRow> rows) {
    return audit.Append([&](const AuditHead& head) -> absl::StatusOr<std::vector<AuditRow>> {
      heads.push_back(head.seq);
      return rows;
    });
  };
  ASSERT_THAT(append({Row("alice", R"(["A1"])"), Row("bob", R"(["A10"])")}), IsOk());
  ASSERT_THAT(append({Row("alice", R"(["A1","B"])", 3)}), IsOk());
  EXPECT_THAT(heads, ::testing::ElementsAre(0, 2));
  EXPECT_THAT(append({Row("carol", "[]", 3)}), StatusIs(absl::StatusCode::kAlreadyExists));
  EXPECT_THAT(audit.Append([](const AuditHead&) -> absl::StatusOr<std::vector<AuditRow>> {
    return absl::InternalError("build failed");
  }),
              StatusIs(absl::StatusCode::kInternal));
  auto head = audit.Head();
  ASSERT_THAT(head, IsOk());
  EXPECT_EQ(head->seq, 3);
  EXPECT_EQ(head->tag, "tag3");

  AuditFilter filter;
  filter.entry_id = "A1";
  auto found = audit.Query(filter);
  ASSERT_THAT(found, IsOk());
  ASSERT_EQ(found->size(), 2u);
  EXPECT_EQ((*found)[0].seq, 3) << "newest first";
  EXPECT_EQ((*found)[1].seq, 1);
  EXPECT_FALSE((*found)[1].tag.has_value());
  filter.limit = 0;
  EXPECT_THAT(audit.Query(filter), StatusIs(absl::StatusCode::kInvalidArgument));

  std::vector<int64_t> seqs;
  ASSERT_THAT(audit.Scan([&](const AuditRow& row) {
    seqs.push_back(row.seq);
    return absl::OkStatus();
  }),
              IsOk());
  EXPECT_THAT(seqs, ::testing::ElementsAre(1, 2, 3));
}

}  // namespace
}  // namespace bulwark
