// Two MemoryStores on one directory, as `bulwark serve` and a `bulwark` command run beside it: the
// serving store's searches follow what the other one adds, updates, quarantines, releases and
// deletes, without reopening; its own writes are not re-read; and with the check off it keeps the
// index it had (the documented behaviour of a single-writer deployment).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "store/memory_store.h"
#include "testing/lexical_store.h"
#include "testing/temp_dir.h"

namespace bulwark {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::Not;

StoreOptions WithCheckEvery(int check_ms) {
  StoreOptions options = testing::LexicalStoreOptions();
  options.other_writers_check_ms = check_ms;
  return options;
}

class OtherWritersTest : public ::testing::Test {
 protected:
  void Open(int serving_check_ms) {
    auto created = MemoryStore::Create(dir_.path(), WithCheckEvery(serving_check_ms));
    ASSERT_TRUE(created.ok()) << created.status();
    serving_ = *std::move(created);
    auto other = MemoryStore::Open(dir_.path(), WithCheckEvery(-1));
    ASSERT_TRUE(other.ok()) << other.status();
    other_ = *std::move(other);
  }
  std::vector<std::string> Found(const std::string& query, bool include_quarantined = false) {
    auto result = serving_->Search("default", query, {.k = 3, .include_quarantined = include_quarantined});
    EXPECT_TRUE(result.ok()) << result.status();
    std::vector<std::string> ids;
    if (result.ok()) {
      for (const SearchHit& hit : result->hits) ids.push_back(hit.entry.id);
    }
    return ids;
  }
  Entry Add(MemoryStore& store, const std::string& text) {
    auto e = store.Add("default", {.text = text}, "alice");
    EXPECT_TRUE(e.ok()) << e.status();
    return e.ok() ? *e : Entry{};
  }

  testing::TempDir dir_;
  std::unique_ptr<MemoryStore> serving_;
  std::unique_ptr<MemoryStore> other_;
};

TEST_F(OtherWritersTest, SearchesFollowAnotherWritersChanges) {
  Open(/*serving_check_ms=*/0);
  const Entry own = Add(*serving_, "Alice prefers a window seat on long flights");
  const Entry added = Add(*other_, "the dentist appointment moved to Friday at nine");
  EXPECT_THAT(Found("dentist appointment Friday"), Contains(added.id)) << "added by the other writer";

  ASSERT_TRUE(other_->Quarantine("default", own.id, "admin", {"review"}).ok());
  EXPECT_THAT(Found("window seat flights"), Not(Contains(own.id)));
  EXPECT_THAT(Found("window seat flights", /*include_quarantined=*/true), Contains(own.id))
      << "indexed as quarantined";
  ASSERT_TRUE(other_->Release("default", own.id, "admin").ok());
  EXPECT_THAT(Found("window seat flights"), Contains(own.id)) << "released by the other writer";

  ASSERT_TRUE(
      other_->Update("default", added.id, {.text = "the vet appointment for the cat is on Monday"}, "alice")
          .ok());
  EXPECT_THAT(Found("vet appointment cat Monday"), Contains(added.id)) << "ranked by its new embedding";

  ASSERT_TRUE(other_->Delete("default", added.id, "alice").ok());
  EXPECT_THAT(Found("vet appointment cat Monday"), Not(Contains(added.id)));

  // The serving store's own writes after all of that: found once, not re-read as foreign.
  const Entry later = Add(*serving_, "passport renewal form is in the blue folder");
  EXPECT_THAT(Found("passport renewal blue folder"), Contains(later.id));
  const std::vector<std::string> ids = Found("passport renewal blue folder");
  EXPECT_EQ(std::count(ids.begin(), ids.end(), later.id), 1);
}

TEST_F(OtherWritersTest, ALongRunOfOwnWritesWithoutSearchesStillCatchesUp) {
  Open(/*serving_check_ms=*/0);
  const Entry foreign = Add(*other_, "the dentist appointment moved to Friday at nine");
  // More own events than the store keeps aside between searches: noted and drained while writing.
  std::vector<NewEntry> batch(5000);
  for (size_t i = 0; i < batch.size(); ++i) batch[i].text = "routine note number " + std::to_string(i);
  auto added = serving_->AddBatch("default", batch, "alice");
  ASSERT_TRUE(added.ok()) << added.status();
  EXPECT_THAT(Found("dentist appointment Friday"), Contains(foreign.id));
  EXPECT_THAT(Found("routine note number 4321"), Contains((*added)[4321].id));
}

TEST_F(OtherWritersTest, WithTheCheckOffTheIndexFollowsOnlyItsOwnWrites) {
  Open(/*serving_check_ms=*/-1);
  const Entry added = Add(*other_, "the dentist appointment moved to Friday at nine");
  EXPECT_THAT(Found("dentist appointment Friday"), Not(Contains(added.id)));
  serving_.reset();
  auto reopened = MemoryStore::Open(dir_.path(), WithCheckEvery(-1));
  ASSERT_TRUE(reopened.ok());
  serving_ = *std::move(reopened);
  EXPECT_THAT(Found("dentist appointment Friday"), ElementsAre(added.id)) << "after reopening";
}

// `bulwark keys rotate` and writes beside a running server: the other process signs with a key
// the serving store did not load. The serving store re-reads the keyring file, so it returns the
// other writer's entry (instead of withholding it) and its own writes find the history head,
// signed under the new key, verifiable (instead of refusing with DataLoss).
TEST_F(OtherWritersTest, ARotationByAnotherProcessReachesTheServingStore) {
  Open(/*serving_check_ms=*/0);
  Add(*serving_, "Alice prefers a window seat on long flights");
  ASSERT_TRUE(other_->RotateSigningKey().ok());
  const Entry added = Add(*other_, "the dentist appointment moved to Friday at nine");
  EXPECT_EQ(added.key_id, 2u) << "the other writer signs with the key it rotated to";
  EXPECT_THAT(Found("dentist appointment Friday"), Contains(added.id));
  const Entry own = Add(*serving_, "the boiler service is due in March");
  EXPECT_FALSE(own.id.empty()) << "the serving store still writes";
  EXPECT_EQ(own.key_id, 2u) << "and signs with the newest key too";
  auto report = serving_->Verify();
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->ok()) << ToJson(*report).dump();
}

}  // namespace
}  // namespace bulwark
