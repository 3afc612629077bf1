// Issue #18 point 9: a store whose database fails the engine's integrity check (a damaged b-tree
// page) keeps serving reads but refuses every write until a verify passes; verify reports the
// damage, and once the database is repaired the next clean verify lifts the freeze.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "storage/sqlite/raw_sql.h"
#include "store/entry_store.h"
#include "store/memory_store.h"
#include "store/memory_store_impl.h"
#include "testing/exec_sql.h"
#include "testing/lexical_store.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"

namespace bulwark {
namespace {

using ::bulwark::testing::IsOk;
using ::bulwark::testing::StatusIs;
using ::testing::HasSubstr;

class WriteFreezeTest : public ::testing::Test {
 protected:
  std::filesystem::path db() const { return dir_.path() / "bulwark.db"; }
  std::unique_ptr<MemoryStore> Open() {
    auto store = MemoryStore::Open(dir_.path(), testing::LexicalStoreOptions());
    EXPECT_THAT(store.status(), IsOk());
    return store.ok() ? *std::move(store) : nullptr;
  }
  // Overwrites the first bytes of b-tree page `page` (1-based, pages of the file's page size) with
  // `bytes`, and returns what was there.
  std::string WritePageStart(int64_t page, const std::string& bytes) {
    int64_t page_size = 0;
    {
      auto raw = RawSqlFile::Open(db());
      EXPECT_TRUE(raw.ok()) << raw.status();
      auto rows = raw.ok() ? (*raw)->Query("PRAGMA page_size") : absl::InternalError("no file");
      EXPECT_TRUE(rows.ok() && rows->size() == 1u);
      if (rows.ok() && rows->size() == 1u) page_size = SqlInt((*rows)[0][0]);
    }
    std::fstream file(db(), std::ios::in | std::ios::out | std::ios::binary);
    std::string before(bytes.size(), '\0');
    file.seekg((page - 1) * page_size);
    file.read(before.data(), static_cast<std::streamsize>(before.size()));
    file.seekp((page - 1) * page_size);
    file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return before;
  }

  testing::TempDir dir_;
};

TEST_F(WriteFreezeTest, ADamagedDatabaseServesReadsButNoWritesUntilVerified) {
  std::string id;
  {
    auto store = MemoryStore::Create(dir_.path(), testing::LexicalStoreOptions());
    ASSERT_THAT(store.status(), IsOk());
    auto added = (*store)->Add("default", {.text = "the boiler is serviced every October"}, "ana");
    ASSERT_THAT(added.status(), IsOk());
    id = added->id;
  }
  // A table of no importance to the store, whose index page is then damaged: the store opens and
  // reads, but the engine's check fails.
  testing::ExecSql(db(),
                   "PRAGMA page_size; CREATE TABLE scratch(x TEXT PRIMARY KEY); "
                   "INSERT INTO scratch VALUES('a'), ('b'); PRAGMA wal_checkpoint(TRUNCATE);");
  int64_t index_page = 0;
  {
    auto raw = RawSqlFile::Open(db());
    ASSERT_TRUE(raw.ok()) << raw.status();
    auto rows = (*raw)->Query("SELECT rootpage FROM sqlite_master WHERE name = 'sqlite_autoindex_scratch_1'");
    ASSERT_TRUE(rows.ok()) << rows.status();
    ASSERT_EQ(rows->size(), 1u);
    index_page = SqlInt((*rows)[0][0]);
  }
  ASSERT_GT(index_page, 1);
  const std::string original = WritePageStart(index_page, std::string(24, '\xff'));

  auto store = Open();
  ASSERT_NE(store, nullptr);
  EntryStore& entries = *store->impl().entries;
  EXPECT_THAT(entries.CheckIntegrityOrFreeze(), StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_TRUE(entries.writes_frozen());
  EXPECT_THAT(store->Get("default", id).status(), IsOk()) << "reads go on";
  EXPECT_THAT(store->Add("default", {.text = "new memory"}, "ana").status(),
              StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_THAT(store->Delete("default", id, "ana"), StatusIs(absl::StatusCode::kUnavailable));

  auto report = store->Verify();
  ASSERT_THAT(report.status(), IsOk());
  EXPECT_FALSE(report->ok());
  EXPECT_THAT(report->integrity_problem, HasSubstr("integrity check"));
  EXPECT_TRUE(entries.writes_frozen()) << "a failing verify lifts nothing";

  // The repair (a backup of the page put back), then any change by another connection so that the
  // store's connection re-reads pages instead of trusting its cache.
  WritePageStart(index_page, original);
  testing::ExecSql(db(), "CREATE TABLE bump(x); DROP TABLE bump;");
  report = store->Verify();
  ASSERT_THAT(report.status(), IsOk());
  EXPECT_TRUE(report->ok()) << report->integrity_problem;
  EXPECT_FALSE(entries.writes_frozen());
  EXPECT_THAT(store->Add("default", {.text = "new memory"}, "ana").status(), IsOk());
}

}  // namespace
}  // namespace bulwark
