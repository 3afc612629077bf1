// Regression test for the keyring race of issue #12 point 8: the serving store re-reads the keyring
// file in place when another process rotated it, while its retrieval settings (and every signer)
// read the same Keyring object without the store's lock. The Keyring now has its own lock; this test
// rotates from "another process" (a second store on the same directory, as `bulwark keys rotate`
// beside `bulwark serve`) while searches, settings writes and entry writes run on the serving store.
// Run it under ThreadSanitizer to see the race it guards against (see the lead's report).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "store/memory_store.h"
#include "store/memory_store_impl.h"
#include "testing/lexical_store.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"

namespace bulwark {
namespace {

using ::bulwark::testing::IsOk;

constexpr int kRotations = 6;
constexpr int kMaxReaderRounds = 400;  // each reader thread stops after this many rounds at most

StoreOptions WithCheckEvery(int check_ms) {
  StoreOptions options = testing::LexicalStoreOptions();
  options.other_writers_check_ms = check_ms;
  return options;
}

TEST(KeyringRaceTest, RotationByAnotherProcessWhileSearchesAndWritesRun) {
  testing::TempDir dir;
  auto serving = MemoryStore::Create(dir.path(), WithCheckEvery(0));
  ASSERT_THAT(serving, IsOk());
  auto other = MemoryStore::Open(dir.path(), WithCheckEvery(-1));
  ASSERT_THAT(other, IsOk());
  ASSERT_THAT((*serving)->Add("default", {.text = "Alice prefers a window seat on long flights"}, "alice"),
              IsOk());

  std::atomic<bool> done{false};
  std::atomic<int> failures{0};
  auto reader = [&] {
    for (int round = 0; round < kMaxReaderRounds && !done.load(); ++round) {
      // Reads the signed retrieval setting (the settings' Signer reads the keyring) and catches up
      // with the other writer (which re-reads the keyring file in place).
      auto found = (*serving)->Search("default", "window seat flights", {.k = 3});
      if (!found.ok()) {
        failures.fetch_add(1);
        ADD_FAILURE() << "search: " << found.status();
      }
    }
  };
  auto writer = [&] {
    for (int round = 0; round < kMaxReaderRounds && !done.load(); ++round) {
      const Retrieval mode = round % 2 == 0 ? Retrieval::kHybrid : Retrieval::kVector;
      if (auto st = (*serving)->impl().retrieval->Set("default", mode); !st.ok()) {
        failures.fetch_add(1);
        ADD_FAILURE() << "set: " << st;
      }
      if (round % 8 == 0) {
        auto a = (*serving)->Add("default", {.text = "note " + std::to_string(round)}, "alice");
        if (!a.ok()) {
          failures.fetch_add(1);
          ADD_FAILURE() << "add: " << a.status();
        }
      }
    }
  };
  std::vector<std::thread> threads;
  threads.emplace_back(reader);
  threads.emplace_back(reader);
  threads.emplace_back(writer);

  // The other process rotates and writes under each new key, so the serving store's catch-up
  // re-reads the keyring while the threads above sign and verify with it.
  for (int i = 0; i < kRotations; ++i) {
    auto rotated = (*other)->RotateSigningKey();
    EXPECT_THAT(rotated, IsOk());
    auto added =
        (*other)->Add("default", {.text = "the dentist moved to Friday " + std::to_string(i)}, "bob");
    EXPECT_THAT(added, IsOk());
  }
  done.store(true);
  for (std::thread& t : threads) t.join();

  EXPECT_EQ(failures.load(), 0) << "a search or write failed while the keyring was re-read";
  // After the rotations the serving store has caught up and signs with the newest key.
  ASSERT_THAT((*serving)->Search("default", "dentist moved Friday", {.k = 3}), IsOk());
  auto own = (*serving)->Add("default", {.text = "the boiler service is due in March"}, "alice");
  ASSERT_THAT(own, IsOk());
  EXPECT_EQ(own->key_id, static_cast<uint32_t>(kRotations + 1));
  auto report = (*serving)->Verify();
  ASSERT_THAT(report, IsOk());
  EXPECT_TRUE(report->ok()) << ToJson(*report).dump();
}

}  // namespace
}  // namespace bulwark
