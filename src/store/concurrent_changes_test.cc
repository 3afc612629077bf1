// No lost updates (issue #18, point 3): changes of the same entries from several store instances
// on one directory (each its own SQLite connection, as separate processes have) and several
// threads each never overwrite one another unseen. Before compare-and-set, an update that read an
// entry before another writer purged it wrote the full text back ("the history says purged, the
// row is active with its full text"). The invariants checked hold for any interleaving, so the
// test also catches the next way of losing a change.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "store/entry_store.h"
#include "store/memory_store.h"
#include "store/memory_store_impl.h"
#include "testing/change_invariants.h"
#include "testing/lexical_store.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"

namespace bulwark {
namespace {

using ::bulwark::testing::IsOk;
using ::bulwark::testing::StatusIs;

constexpr char kNs[] = "shared";

std::unique_ptr<MemoryStore> OpenSecond(const std::filesystem::path& dir) {
  StoreOptions options = testing::LexicalStoreOptions();
  options.other_writers_check_ms = 0;
  auto store = MemoryStore::Open(dir, options);
  EXPECT_THAT(store, IsOk());
  return store.ok() ? *std::move(store) : nullptr;
}

TEST(ConcurrentChangesTest, AChangeOverAVersionAnotherWriterReplacedIsRefused) {
  testing::TempDir dir;
  auto a = testing::CreateLexicalStore(dir.path());
  auto b = OpenSecond(dir.path());
  ASSERT_TRUE(a && b);
  auto added = a->Add(kNs, {.text = "the door code is 4711"}, "alice");
  ASSERT_THAT(added, IsOk());

  auto read = a->impl().entries->ReadForUpdate(kNs, added->id);  // A reads ...
  ASSERT_THAT(read, IsOk());
  ASSERT_THAT(b->Purge(kNs, added->id, "bob"), IsOk());  // ... B purges ...
  Entry changed = read->entry;                           // ... A writes over what it read
  changed.text = "the door code is 4711 (confirmed)";
  changed.updated_at_us = read->entry.updated_at_us + 1;
  HistoryEvent event{0, changed.id, kNs, "update", "alice", changed.updated_at_us, {{"text", changed.text}}};
  a->impl().entries->Sign(std::span<Entry>(&changed, 1), std::span<HistoryEvent>(&event, 1));
  EXPECT_THAT(a->impl().entries->CommitUpdate(*read, changed, event), StatusIs(absl::StatusCode::kAborted));

  // Through the write pipeline the update re-reads, sees the purge, and refuses.
  EXPECT_THAT(a->Update(kNs, added->id, {.text = std::string("again")}, "alice"),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  auto row = b->Get(kNs, added->id);
  ASSERT_THAT(row, IsOk());
  EXPECT_EQ(row->state, State::kPurged);
  EXPECT_EQ(row->text, "");
}

// Random updates, deletes, purges, quarantines and releases of a few entries from two store
// instances with two threads each; afterwards every entry's row agrees with its history.
TEST(ConcurrentChangesTest, MixedChangesFromTwoStoresAndFourThreadsLoseNothing) {
  testing::TempDir dir;
  auto a = testing::CreateLexicalStore(dir.path());
  auto b = OpenSecond(dir.path());
  ASSERT_TRUE(a && b);
  std::vector<std::string> ids;
  for (int i = 0; i < 6; ++i) {
    auto added = a->Add(kNs, {.text = "memory number " + std::to_string(i)}, "alice");
    ASSERT_THAT(added, IsOk());
    ids.push_back(added->id);
  }
  std::atomic<int> unexpected{0};
  auto work = [&](MemoryStore* store, uint32_t seed) {
    std::mt19937 rng(seed);
    for (int step = 0; step < 60; ++step) {
      const std::string& id = ids[rng() % ids.size()];
      absl::Status s;
      switch (rng() % 5) {
        case 0:
          s = store
                  ->Update(kNs, id, {.text = "text " + std::to_string(seed) + "/" + std::to_string(step)},
                           "w")
                  .status();
          break;
        case 1:
          s = store->Delete(kNs, id, "w");
          break;
        case 2:
          s = store->Purge(kNs, id, "w");
          break;
        case 3:
          s = store->Quarantine(kNs, id, "w", nlohmann::json::array({"test"}));
          break;
        default:
          s = store->Release(kNs, id, "w");
          break;
      }
      // A change refused because of the state it found is fine; anything else is a failure.
      if (!s.ok() && !absl::IsFailedPrecondition(s)) {
        ADD_FAILURE() << s;
        ++unexpected;
      }
    }
  };
  std::vector<std::thread> threads;
  threads.emplace_back(work, a.get(), 1);
  threads.emplace_back(work, a.get(), 2);
  threads.emplace_back(work, b.get(), 3);
  threads.emplace_back(work, b.get(), 4);
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(unexpected.load(), 0);

  for (const std::string& id : ids) testing::ExpectChangeInvariants(*a, kNs, id);
  auto verify = a->Verify();
  ASSERT_THAT(verify, IsOk());
  EXPECT_TRUE(verify->ok());
}

}  // namespace
}  // namespace bulwark
