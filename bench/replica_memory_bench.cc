// Memory per replica under rendezvous placement (issue #17 point 2; doc/scale-out.md, "Replication"):
// a synthetic multi-namespace corpus is written to a throwaway PostgreSQL cluster, then N = 3
// Followers (R copies each namespace) load it from the change feed, verifying every row; the
// program prints each replica's rows, vector and text bytes, its share of the corpus, the
// process's resident-memory growth while it loaded, and its cold-load rate.
//
//   replica_memory_bench [namespaces=120] [rows=24000] [dimension=384] [copies=0]
//
// Namespace sizes are skewed (size_i proportional to 1 / (i + 10)), as tenants are. `copies` R
// measures only that R (0: R = 1, 2 and 3 in turn; a million rows at R = 3 would hold three full
// copies in this one process). Bounded: at most 1000 namespaces, 1000000 rows, dimension 1024.
#include <absl/strings/numbers.h>
#include <absl/strings/str_cat.h>
#include <absl/time/clock.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bulwark/env.h"
#include "provenance/keyring.h"
#include "provenance/signer.h"
#include "replication/follower.h"
#include "storage/postgresql/postgres_backend.h"
#include "storage/postgresql/testing/pg_test_cluster.h"
#include "testing/temp_dir.h"

namespace bulwark {
namespace {

struct Config {
  int namespaces = 120;
  int rows = 24000;
  int dimension = 384;
  int copies = 0;  // 0: 1, 2 and 3
};

// Resident set size of this process in bytes (/proc/self/statm), 0 if unreadable.
size_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  size_t pages = 0, resident = 0;
  if (!(statm >> pages >> resident)) return 0;
  return resident * 4096;
}

// Rows per namespace: proportional to 1 / (i + 10), summing to about config.rows, at least 1.
std::vector<int> NamespaceSizes(const Config& config) {
  double total = 0;
  for (int i = 0; i < config.namespaces; ++i) total += 1.0 / (i + 10);
  std::vector<int> sizes;
  for (int i = 0; i < config.namespaces; ++i) {
    sizes.push_back(std::max(1, static_cast<int>(std::lround(config.rows / total / (i + 10)))));
  }
  return sizes;
}

absl::Status WriteCorpus(const Config& config, PostgresBackend& backend, const Signer& signer) {
  std::mt19937 rng(17);
  std::normal_distribution<float> normal;
  const std::vector<int> sizes = NamespaceSizes(config);
  int next_id = 0;
  for (int n = 0; n < config.namespaces; ++n) {
    for (int done = 0; done < sizes[n];) {
      std::vector<Entry> entries;
      std::vector<HistoryEvent> events;
      for (; done < sizes[n] && entries.size() < 200; ++done) {
        Entry e;
        e.id = absl::StrCat("m", next_id++);
        e.name_space = absl::StrCat("tenant-", n);
        e.text = absl::StrCat("synthetic memory ", e.id, " of ", e.name_space,
                              ": the user prefers concise answers and works in UTC");
        e.principal = "loader";
        e.created_at_us = e.updated_at_us = Env::Default()->NowMicros();
        e.embedding.resize(config.dimension);
        float norm = 0;
        for (float& x : e.embedding) {
          x = normal(rng);
          norm += x * x;
        }
        for (float& x : e.embedding) x /= std::sqrt(norm);
        signer.Sign(&e);
        HistoryEvent ev{0, e.id, e.name_space, "add", e.principal, e.updated_at_us, {{"text", e.text}}};
        signer.Sign(&ev);
        entries.push_back(std::move(e));
        events.push_back(std::move(ev));
      }
      auto ids = backend.InsertEntries(entries, events);
      if (!ids.ok()) return ids.status();
    }
  }
  return absl::OkStatus();
}

// Loads one replica's follower from the feed and prints its line.
absl::StatusOr<std::unique_ptr<Follower>> LoadReplica(const std::string& conninfo, const Keyring* keyring,
                                                      const Config& config, const std::string& id,
                                                      size_t copies, size_t corpus_vector_bytes) {
  FollowerOptions options;
  options.replica_id = id;
  options.replicas = {"r1", "r2", "r3"};
  options.copies = copies;
  options.dimension = config.dimension;
  options.batch = 2000;
  options.listen = false;
  const size_t rss_before = ResidentBytes();
  const absl::Time start = absl::Now();
  auto follower = Follower::Open(conninfo, keyring, options, /*start=*/false);
  if (!follower.ok()) return follower.status();
  while (true) {
    auto read = (*follower)->PollOnce();
    if (!read.ok()) return read.status();
    if (*read < options.batch) break;
  }
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  const ReplicaMemory m = (*follower)->index().Memory();
  const FollowerStats s = (*follower)->stats();
  std::printf("| %zu | %s | %zu | %zu | %.1f | %.1f | %.3f | %.1f | %.0f | %lld |\n", copies, id.c_str(),
              m.namespaces, m.rows, m.vector_bytes / 1048576.0, m.text_bytes / 1048576.0,
              static_cast<double>(m.vector_bytes) / static_cast<double>(corpus_vector_bytes),
              (ResidentBytes() - rss_before) / 1048576.0, m.rows / seconds,
              static_cast<long long>(s.rows_rejected));
  return follower;
}

int Run(const Config& config) {
  auto cluster = testing::PgTestCluster::Start();
  if (!cluster.ok()) return std::fprintf(stderr, "%s\n", cluster.status().ToString().c_str()), 1;
  auto conninfo = (*cluster)->CreateDatabase("replica_memory");
  testing::TempDir dir;
  auto keyring = Keyring::Create(dir / "keyring", Env::Default());
  if (!conninfo.ok() || !keyring.ok()) return std::fprintf(stderr, "setup failed\n"), 1;
  auto backend = PostgresBackend::Open(*conninfo, /*create=*/true);
  if (!backend.ok()) return std::fprintf(stderr, "%s\n", backend.status().ToString().c_str()), 1;
  const Signer signer(&*keyring);
  const absl::Time start = absl::Now();
  if (absl::Status s = WriteCorpus(config, **backend, signer); !s.ok()) {
    return std::fprintf(stderr, "%s\n", s.ToString().c_str()), 1;
  }
  size_t corpus_rows = 0;
  for (int n : NamespaceSizes(config)) corpus_rows += n;
  const size_t corpus_vector_bytes = corpus_rows * config.dimension * sizeof(float);
  std::printf("corpus: %d namespaces, %zu rows, d = %d, %.1f MiB of vectors, written in %.1f s\n\n",
              config.namespaces, corpus_rows, config.dimension, corpus_vector_bytes / 1048576.0,
              absl::ToDoubleSeconds(absl::Now() - start));
  std::printf(
      "| R | replica | namespaces | rows | vectors MiB | text MiB | share of vectors | RSS growth MiB "
      "| cold load rows/s | rejected |\n|---|---|---|---|---|---|---|---|---|---|\n");
  // Every follower stays alive to the end, so each one's RSS growth is memory it newly took.
  std::vector<std::unique_ptr<Follower>> loaded;
  for (size_t copies : {1, 2, 3}) {
    if (config.copies != 0 && copies != static_cast<size_t>(config.copies)) continue;
    for (const char* id : {"r1", "r2", "r3"}) {
      auto follower = LoadReplica(*conninfo, &*keyring, config, id, copies, corpus_vector_bytes);
      if (!follower.ok()) return std::fprintf(stderr, "%s\n", follower.status().ToString().c_str()), 1;
      loaded.push_back(*std::move(follower));
    }
  }
  return 0;
}

}  // namespace
}  // namespace bulwark

int main(int argc, char** argv) {
  bulwark::Config config;
  int* fields[] = {&config.namespaces, &config.rows, &config.dimension, &config.copies};
  const int lows[] = {1, 1, 1, 0};
  const int limits[] = {1000, 1000000, 1024, 3};
  for (int i = 1; i < argc && i <= 4; ++i) {
    if (!absl::SimpleAtoi(argv[i], fields[i - 1]) || *fields[i - 1] < lows[i - 1] ||
        *fields[i - 1] > limits[i - 1]) {
      std::fprintf(stderr,
                   "usage: replica_memory_bench [namespaces<=1000] [rows<=1000000] [dimension<=1024] "
                   "[copies=0..3]\n");
      return 2;
    }
  }
  return bulwark::Run(config);
}
