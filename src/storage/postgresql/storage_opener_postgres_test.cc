// The storage opener (storage/storage_opener.h) on a real PostgreSQL database: a postgresql://
// URL gives every repository of the store in that database (NotFound before the store is made),
// and the repositories each opener returns see one another's rows.
#include <absl/strings/str_cat.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "storage/postgresql/testing/pg_test_environment.h"
#include "storage/storage_opener.h"
#include "testing/status_matchers.h"

namespace bulwark {
namespace {

using ::bulwark::testing::IsOk;
using ::bulwark::testing::StatusIs;

TEST(StorageOpenerPostgresTest, AUrlGivesEveryRepositoryOfTheDatabase) {
  auto cluster = ::bulwark::testing::SharedPgCluster();
  ASSERT_THAT(cluster, IsOk());
  ASSERT_THAT((*cluster)->CreateDatabase("opener_url"), IsOk());
  const std::string url = absl::StrCat("postgresql://postgres@127.0.0.1:", (*cluster)->port(), "/opener_url");
  EXPECT_THAT(OpenStorage(url, /*create=*/false), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(OpenAuditRepository(url), StatusIs(absl::StatusCode::kNotFound));
  auto storage = OpenStorage(url, /*create=*/true);
  ASSERT_THAT(storage, IsOk());
  ASSERT_NE(storage->entries, nullptr);
  EXPECT_NE(storage->defense_state, nullptr);
  ASSERT_NE(storage->audit, nullptr);
  EXPECT_NE(storage->access, nullptr);
  EXPECT_NE(storage->gate, nullptr);
  EXPECT_NE(storage->honeypot, nullptr);
  ASSERT_THAT(storage->audit->Append([](const AuditHead&) -> absl::StatusOr<std::vector<AuditRow>> {
    AuditRow row;
    row.principal = "p";
    row.returned_ids = "[]";
    row.detail = "{}";
    return std::vector<AuditRow>{row};
  }),
              IsOk());
  // The one-repository openers reach the same tables (postgres:// is accepted too).
  const std::string short_url =
      absl::StrCat("postgres://postgres@127.0.0.1:", (*cluster)->port(), "/opener_url");
  auto audit = OpenAuditRepository(short_url);
  ASSERT_THAT(audit, IsOk());
  auto head = (*audit)->Head();
  ASSERT_THAT(head, IsOk());
  EXPECT_EQ(head->seq, 1);
  EXPECT_THAT(OpenEntryRepositories(url, /*create=*/false), IsOk());
  EXPECT_THAT(OpenAccessRepository(url), IsOk());
  EXPECT_THAT(OpenGateRepository(url), IsOk());
  EXPECT_THAT(OpenHoneypotRepository(url), IsOk());
}

}  // namespace
}  // namespace bulwark
