// No lost updates across processes (issue #18, point 3): three worker processes with two threads
// each (tests/change_stress_worker.cc) mix adds, updates, deletes, purges, quarantines and releases
// on the same entries of one store; afterwards every entry's row agrees with its signed history
// (testing/change_invariants.h) and verify is clean. Bounded: 3 x 2 x 60 changes, 120 s at most.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "store/memory_store.h"
#include "testing/change_invariants.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"

extern char** environ;

namespace bulwark {
namespace {

using ::bulwark::testing::IsOk;

pid_t Spawn(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) != 0) return -1;
  return pid;
}

// The exit status of `pid`, or -1 if it did not exit within `deadline` (it is then killed).
int WaitWithDeadline(pid_t pid, std::chrono::steady_clock::time_point deadline) {
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(ChangeStressTest, ThreeProcessesWithTwoThreadsEachLoseNoChange) {
  testing::TempDir dir;
  std::vector<std::string> ids;
  {
    StoreOptions options;
    options.embedder_config = {{"kind", "lexical"}, {"synonyms", false}};
    auto store = MemoryStore::Create(dir.path(), options);
    ASSERT_THAT(store, IsOk());
    for (int i = 0; i < 6; ++i) {
      auto added = (*store)->Add("shared", {.text = "shared memory " + std::to_string(i)}, "seed");
      ASSERT_THAT(added, IsOk());
      ids.push_back(added->id);
    }
  }
  const std::string worker = std::string(BULWARK_BUILD_DIR) + "/tests/change_stress_worker";
  std::vector<pid_t> pids;
  for (int p = 0; p < 3; ++p) {
    std::vector<std::string> args = {worker, dir.path().string(), std::to_string(p + 1), "60"};
    args.insert(args.end(), ids.begin(), ids.end());
    const pid_t pid = Spawn(args);
    ASSERT_GT(pid, 0) << "cannot start " << worker;
    pids.push_back(pid);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  for (pid_t pid : pids) EXPECT_EQ(WaitWithDeadline(pid, deadline), 0) << "a worker failed or hung";

  auto store = MemoryStore::Open(dir.path(), {});
  ASSERT_THAT(store, IsOk());
  for (const std::string& id : ids) testing::ExpectChangeInvariants(**store, "shared", id);
  auto verify = (*store)->Verify();
  ASSERT_THAT(verify, IsOk());
  EXPECT_TRUE(verify->ok());
}

}  // namespace
}  // namespace bulwark
