// The storage opener: a directory location gives every repository of one store (created with
// `create`, NotFound without), a PostgreSQL location goes to the PostgreSQL repositories (and its
// layout names no files), and the SQLite audit
// repository appends batches under the head it read, returns them filtered newest first, and
// scans them in seq order.
#include "storage/storage_opener.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "storage/store_layout.h"
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

// The PostgreSQL repositories answer for a postgresql:// location (the contract tests in
// storage/postgresql/ open them on a real cluster); here nothing listens, so every opener says
// Unavailable rather than falling back to a directory of that name.
TEST(StorageOpenerTest, PostgresLocationsGoToPostgres) {
  for (const char* location : {"postgresql://127.0.0.1:1/bulwark?connect_timeout=5",
                               "postgres://u@127.0.0.1:1/db?connect_timeout=5"}) {
    EXPECT_TRUE(IsPostgresLocation(location)) << location;
    EXPECT_THAT(OpenStorage(location, true), StatusIs(absl::StatusCode::kUnavailable)) << location;
    EXPECT_THAT(OpenEntryRepositories(location, true), StatusIs(absl::StatusCode::kUnavailable));
    EXPECT_THAT(OpenAuditRepository(location), StatusIs(absl::StatusCode::kUnavailable));
    EXPECT_THAT(OpenAccessRepository(location), StatusIs(absl::StatusCode::kUnavailable));
    EXPECT_THAT(OpenGateRepository(location), StatusIs(absl::StatusCode::kUnavailable));
    EXPECT_THAT(OpenHoneypotRepository(location), StatusIs(absl::StatusCode::kUnavailable));
    EXPECT_FALSE(std::filesystem::exists(location)) << "no directory was made";
  }
  EXPECT_TRUE(IsPostgresLocation("POSTGRESQL://h/db"));
  EXPECT_FALSE(IsPostgresLocation("/var/lib/postgresql/store"));
}

TEST(StorageOpenerTest, DisplayLocationHidesPasswords) {
  EXPECT_EQ(DisplayLocation("postgresql://bob:s3cret@db:5432/bulwark"),
            "postgresql://bob:***@db:5432/bulwark");
  EXPECT_EQ(DisplayLocation("postgres://db/bulwark?sslmode=require&password=x&user=u"),
            "postgres://db/bulwark?sslmode=require&password=***&user=u");
  EXPECT_EQ(DisplayLocation("postgresql://bob@db/bulwark"), "postgresql://bob@db/bulwark");
  EXPECT_EQ(DisplayLocation("/srv/bob:pw@store"), "/srv/bob:pw@store");
}

// A PostgreSQL store keeps no files: its layout names the location for both databases, no default
// keyring and no gate.json.
TEST(StorageOpenerTest, APostgresLayoutNamesNoFiles) {
  const std::string url = "postgresql://u@db.example/bulwark";
  const StoreLayout layout(url);
  EXPECT_TRUE(layout.is_postgres());
  EXPECT_TRUE(layout.StoreExists());
  EXPECT_EQ(layout.database().string(), url);
  EXPECT_EQ(layout.audit_database().string(), url);
  EXPECT_TRUE(layout.keyring().empty());
  EXPECT_TRUE(layout.write_gate_config().empty());
  EXPECT_EQ(StoreLayout::ForDatabase(layout.database()).dir().string(), url);
  EXPECT_EQ(StoreLayout(url, "/etc/bulwark/keyring.json").keyring().string(), "/etc/bulwark/keyring.json");
  const StoreLayout dir("/srv/store");
  EXPECT_FALSE(dir.is_postgres());
  EXPECT_EQ(dir.keyring().string(), "/srv/store/keyring.json");
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
