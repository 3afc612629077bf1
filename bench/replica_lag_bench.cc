// Follower lag (issue #17 point 2; doc/scale-out.md, "Replication"): how long after a write commits a
// follower serves it, i.e. how long a read carrying the write's version token waits. One writer
// commits signed entries to a throwaway PostgreSQL cluster one at a time; after each commit it
// waits for a Follower (another connection, as another replica would have) to apply the version,
// and records the wait. Three runs: with coalesced NOTIFY hints, and polling only at 100 ms and
// 500 ms intervals (a lost hint's worst case is the interval).
//
//   replica_lag_bench [writes=100]
//
// Bounded: at most 5000 writes per run, every wait at most 5 s.
#include <absl/strings/numbers.h>
#include <absl/strings/str_cat.h>
#include <absl/time/clock.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "bulwark/env.h"
#include "provenance/keyring.h"
#include "provenance/signer.h"
#include "replication/follower.h"
#include "storage/postgresql/change_notify.h"
#include "storage/postgresql/postgres_backend.h"
#include "storage/postgresql/testing/pg_test_cluster.h"
#include "testing/temp_dir.h"

namespace bulwark {
namespace {

constexpr int kDim = 64;

struct Run {
  const char* name;
  bool hints;
  absl::Duration poll;
};

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

absl::StatusOr<int64_t> WriteOne(PostgresBackend& backend, const Signer& signer, int i) {
  Entry e;
  e.id = absl::StrCat("lag", i);
  e.name_space = "tenant";
  e.text = absl::StrCat("memory ", i);
  e.principal = "writer";
  e.created_at_us = e.updated_at_us = Env::Default()->NowMicros();
  e.embedding.assign(kDim, 0.125f);
  signer.Sign(&e);
  HistoryEvent ev{0, e.id, e.name_space, "add", e.principal, e.updated_at_us, {{"text", e.text}}};
  signer.Sign(&ev);
  auto ids = backend.InsertEntries({&e, 1}, {&ev, 1});
  if (!ids.ok()) return ids.status();
  const std::vector<int64_t> seqs = backend.TakeInsertedEventSeqs();
  if (seqs.empty()) return absl::InternalError("no event seq");
  return seqs.back();
}

absl::Status Measure(const std::string& conninfo, const Keyring* keyring, const Run& run, int writes,
                     int* next_id) {
  auto backend = PostgresBackend::Open(conninfo, /*create=*/true);
  if (!backend.ok()) return backend.status();
  FollowerOptions options;
  options.replica_id = "r1";
  options.replicas = {"r1", "r2", "r3"};
  options.copies = 3;
  options.dimension = kDim;
  options.poll_interval = run.poll;
  options.listen = run.hints;
  auto follower = Follower::Open(conninfo, keyring, options);
  if (!follower.ok()) return follower.status();
  std::unique_ptr<CoalescingNotifier> notifier;
  if (run.hints) {
    auto started = CoalescingNotifier::Start(conninfo);
    if (!started.ok()) return started.status();
    notifier = *std::move(started);
  }
  const Signer signer(keyring);
  std::vector<double> waits_ms;
  for (int i = 0; i < writes; ++i) {
    auto version = WriteOne(**backend, signer, (*next_id)++);
    if (!version.ok()) return version.status();
    const absl::Time committed = absl::Now();
    if (notifier) notifier->Hint("tenant");
    if (absl::Status s = (*follower)->WaitForVersion("tenant", *version, committed + absl::Seconds(5));
        !s.ok()) {
      return s;
    }
    waits_ms.push_back(absl::ToDoubleMilliseconds(absl::Now() - committed));
  }
  std::printf("| %s | %d | %.2f | %.2f | %.2f | %.2f |\n", run.name, writes, Percentile(waits_ms, 0.5),
              Percentile(waits_ms, 0.9), Percentile(waits_ms, 0.99), Percentile(waits_ms, 1.0));
  return absl::OkStatus();
}

int Main(int writes) {
  auto cluster = testing::PgTestCluster::Start();
  if (!cluster.ok()) return std::fprintf(stderr, "%s\n", cluster.status().ToString().c_str()), 1;
  auto conninfo = (*cluster)->CreateDatabase("replica_lag");
  testing::TempDir dir;
  auto keyring = Keyring::Create(dir / "keyring", Env::Default());
  if (!conninfo.ok() || !keyring.ok()) return std::fprintf(stderr, "setup failed\n"), 1;
  std::printf("| run | writes | p50 ms | p90 ms | p99 ms | max ms |\n|---|---|---|---|---|---|\n");
  int next_id = 0;
  for (const Run& run : {Run{"NOTIFY hints (coalesced, 10 ms)", true, absl::Milliseconds(500)},
                         Run{"polling only, every 100 ms", false, absl::Milliseconds(100)},
                         Run{"polling only, every 500 ms", false, absl::Milliseconds(500)}}) {
    if (absl::Status s = Measure(*conninfo, &*keyring, run, writes, &next_id); !s.ok()) {
      return std::fprintf(stderr, "%s: %s\n", run.name, s.ToString().c_str()), 1;
    }
  }
  return 0;
}

}  // namespace
}  // namespace bulwark

int main(int argc, char** argv) {
  int writes = 100;
  if (argc > 1 && (!absl::SimpleAtoi(argv[1], &writes) || writes < 1 || writes > 5000)) {
    std::fprintf(stderr, "usage: replica_lag_bench [writes<=5000]\n");
    return 2;
  }
  return bulwark::Main(writes);
}
