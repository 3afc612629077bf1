// An acknowledged write is never lost: a writer process is SIGKILLed at random moments, many
// times; after each kill the store must open, hold every acknowledged entry, verify, and hold
// every batch either whole or not at all.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>

#include "store/memory_store.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"

extern char** environ;

namespace bulwark {
namespace {

using ::bulwark::testing::IsOk;

struct Child {
  pid_t pid = -1;
  FILE* out = nullptr;
};

Child SpawnWriter(const std::filesystem::path& store, const std::string& mode, long start) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  std::string binary = std::string(BULWARK_BUILD_DIR) + "/tests/durability_writer";
  std::string start_arg = std::to_string(start);
  const char* argv[] = {binary.c_str(), store.c_str(), mode.c_str(), start_arg.c_str(), nullptr};
  Child child;
  if (posix_spawn(&child.pid, binary.c_str(), &actions, nullptr, const_cast<char**>(argv), environ) != 0) {
    child.pid = -1;
  }
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  child.out = fdopen(fds[0], "r");
  return child;
}

// Reads acknowledgement lines until `wanted` arrived (then SIGKILLs the child) or EOF.
std::vector<std::string> ReadAcksThenKill(Child& child, int wanted) {
  std::vector<std::string> acks;
  char line[256];
  while (static_cast<int>(acks.size()) < wanted && std::fgets(line, sizeof(line), child.out)) {
    acks.emplace_back(line);
  }
  kill(child.pid, SIGKILL);
  // Lines the writer printed before dying are acknowledged too: drain them.
  while (std::fgets(line, sizeof(line), child.out)) acks.emplace_back(line);
  fclose(child.out);
  int status = 0;
  waitpid(child.pid, &status, 0);
  return acks;
}

TEST(DurabilityTest, AcknowledgedSingleWritesSurviveSigkill) {
  testing::TempDir dir;
  ASSERT_THAT(MemoryStore::Create(dir.path(), {}), IsOk());
  std::mt19937 rng(20261121);
  std::set<std::string> acked;
  constexpr int kRounds = 12;
  for (int round = 0; round < kRounds; ++round) {
    Child child = SpawnWriter(dir.path(), "single", round * 100000L);
    ASSERT_GT(child.pid, 0);
    int wanted = std::uniform_int_distribution<int>(1, 40)(rng);
    for (const std::string& line : ReadAcksThenKill(child, wanted)) {
      ASSERT_EQ(line.rfind("ACK ", 0), 0u) << line;
      acked.insert(line.substr(4, 26));
    }
    auto store = MemoryStore::Open(dir.path(), {});
    ASSERT_TRUE(store.ok()) << "round " << round << ": " << store.status();
    for (const std::string& id : acked) {
      auto got = (*store)->Get("durable", id);
      ASSERT_TRUE(got.ok()) << "round " << round << ": acknowledged entry " << id
                            << " lost: " << got.status();
    }
    auto report = (*store)->Verify();
    ASSERT_THAT(report, IsOk());
    EXPECT_TRUE(report->ok()) << report->bad_rows.size() << " bad rows after kill";
  }
  EXPECT_GT(acked.size(), static_cast<size_t>(kRounds));
}

TEST(DurabilityTest, BatchesAreAllOrNothingAcrossSigkill) {
  testing::TempDir dir;
  ASSERT_THAT(MemoryStore::Create(dir.path(), {}), IsOk());
  std::mt19937 rng(7);
  std::set<std::string> acked_batches;
  for (int round = 0; round < 8; ++round) {
    Child child = SpawnWriter(dir.path(), "batch", round * 100000L);
    ASSERT_GT(child.pid, 0);
    int wanted = std::uniform_int_distribution<int>(1, 6)(rng);
    for (const std::string& line : ReadAcksThenKill(child, wanted)) {
      char tag[64];
      ASSERT_EQ(std::sscanf(line.c_str(), "BATCH %63s", tag), 1) << line;
      acked_batches.insert(tag);
    }
  }
  auto store = MemoryStore::Open(dir.path(), {});
  ASSERT_TRUE(store.ok()) << store.status();
  std::map<std::string, int> per_batch;
  auto skipped = (*store)->Export("durable", 1u << static_cast<int>(State::kActive), [&](const Entry& e) {
    per_batch[e.metadata["batch"].get<std::string>()]++;
    return absl::OkStatus();
  });
  ASSERT_THAT(skipped, IsOk());
  EXPECT_EQ(*skipped, 0);
  for (const auto& [tag, count] : per_batch) EXPECT_EQ(count, 20) << "batch " << tag << " is partial";
  for (const std::string& tag : acked_batches)
    EXPECT_EQ(per_batch[tag], 20) << "acknowledged batch " << tag << " lost";
}

}  // namespace
}  // namespace bulwark
