// Test helper for change_stress_test: opens a store and, on two threads, applies random updates,
// deletes, purges, quarantines, releases and adds to the given entries of namespace "shared" for
// STEPS steps each. A change refused for the state it found (FailedPrecondition) is expected; any
// other error is printed as "UNEXPECTED <status>" and makes the exit code 1.
//
//   change_stress_worker STORE_DIR SEED STEPS ID...
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "store/memory_store.h"

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: change_stress_worker STORE_DIR SEED STEPS ID...\n");
    return 2;
  }
  bulwark::StoreOptions options;
  options.other_writers_check_ms = 0;
  auto store = bulwark::MemoryStore::Open(argv[1], options);
  if (!store.ok()) {
    std::fprintf(stderr, "open: %s\n", store.status().ToString().c_str());
    return 1;
  }
  const unsigned seed = static_cast<unsigned>(std::strtoul(argv[2], nullptr, 10));
  const int steps = std::atoi(argv[3]);
  const std::vector<std::string> ids(argv + 4, argv + argc);
  std::atomic<int> unexpected{0};
  auto work = [&](unsigned thread_seed) {
    std::mt19937 rng(thread_seed);
    bulwark::MemoryStore& s = **store;
    for (int step = 0; step < steps; ++step) {
      const std::string& id = ids[rng() % ids.size()];
      absl::Status status;
      switch (rng() % 6) {
        case 0:
          status = s.Update("shared", id,
                            {.text = "text " + std::to_string(thread_seed) + "/" + std::to_string(step)}, "w")
                       .status();
          break;
        case 1:
          status = s.Delete("shared", id, "w");
          break;
        case 2:
          status = s.Purge("shared", id, "w");
          break;
        case 3:
          status = s.Quarantine("shared", id, "w", nlohmann::json::array({"stress"}));
          break;
        case 4:
          status = s.Release("shared", id, "w");
          break;
        default:
          status = s.Add("shared", {.text = "added by " + std::to_string(thread_seed)}, "w").status();
          break;
      }
      if (!status.ok() && !absl::IsFailedPrecondition(status)) {
        std::printf("UNEXPECTED %s\n", status.ToString().c_str());
        ++unexpected;
      }
    }
  };
  std::thread a(work, seed * 2 + 1), b(work, seed * 2 + 2);
  a.join();
  b.join();
  std::fflush(stdout);
  return unexpected.load() == 0 ? 0 : 1;
}
