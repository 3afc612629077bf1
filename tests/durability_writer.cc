// Test helper for durability_test: opens a store and writes entries as fast as it can, printing
// "ACK <id>" (single adds) or "BATCH <tag> <n>" (batches) to stdout, flushed, only after the store
// acknowledged the write. The test SIGKILLs it at a random moment.
//
//   durability_writer STORE_DIR single|batch START
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "store/memory_store.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: durability_writer STORE_DIR single|batch START\n");
    return 2;
  }
  auto store = bulwark::MemoryStore::Open(argv[1], {});
  if (!store.ok()) {
    std::fprintf(stderr, "open: %s\n", std::string(store.status().message()).c_str());
    return 1;
  }
  const bool batch = std::string(argv[2]) == "batch";
  const long start = std::strtol(argv[3], nullptr, 10);
  for (long i = start; i < start + 100000; ++i) {
    if (batch) {
      std::string tag = "batch-" + std::to_string(i);
      std::vector<bulwark::NewEntry> entries;
      for (int j = 0; j < 20; ++j) {
        entries.push_back(
            {.text = "durability batch " + tag + " item " + std::to_string(j), .metadata = {{"batch", tag}}});
      }
      auto added = (*store)->AddBatch("durable", entries, "writer");
      if (!added.ok()) return 1;
      std::printf("BATCH %s %zu\n", tag.c_str(), added->size());
    } else {
      auto added = (*store)->Add("durable", {.text = "durability entry " + std::to_string(i)}, "writer");
      if (!added.ok()) return 1;
      std::printf("ACK %s\n", added->id.c_str());
    }
    std::fflush(stdout);
  }
  return 0;
}
