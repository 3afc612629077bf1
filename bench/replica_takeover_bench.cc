// Takeover time against namespace size (issue #17 point 4; doc/scale-out.md, "Measured: takeover
// time"): the time from a namespace leader's death to a new leader serving writes, when the new
// leader must first load the namespace (a cold takeover: the replica did not hold it before).
//
// For each size, a namespace of that many signed entries is written to a throwaway PostgreSQL
// cluster. The old leader takes the namespace's lease (ttl given) and dies at once, never renewing
// or releasing it, as a kill -9 right after a renewal would (the worst case: the whole ttl must
// pass). The new leader then, on connections of its own:
//   1. tries NamespaceLeadership::Acquire every 20 ms until the lease has expired (wait);
//   2. loads the namespace through a Follower from the change feed, verifying every row (load);
//   3. commits one write through its fenced backend (write).
// Printed per size: each phase and the total, in ms. A warm takeover (a replica that already
// followed the namespace, R >= 2) skips step 2.
//
//   replica_takeover_bench [ttl_ms=1000] [sizes=1000,10000,100000]
//
// Bounded: ttl 100..10000 ms, sizes 1..200000, every wait at most ttl + 30 s.
#include <absl/strings/numbers.h>
#include <absl/strings/str_cat.h>
#include <absl/strings/str_split.h>
#include <absl/time/clock.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "bulwark/env.h"
#include "core/status_macros.h"
#include "provenance/keyring.h"
#include "provenance/signer.h"
#include "replication/follower.h"
#include "replication/namespace_leadership.h"
#include "storage/postgresql/namespace_lease.h"
#include "storage/postgresql/postgres_backend.h"
#include "storage/postgresql/testing/pg_test_cluster.h"
#include "testing/temp_dir.h"

namespace bulwark {
namespace {

constexpr int kDim = 384;
constexpr char kNamespace[] = "tenant";

// `count` signed entries of kNamespace, written in batches of 500; `first` numbers their ids.
absl::Status WriteEntries(PostgresBackend& backend, const Signer& signer, int first, int count) {
  for (int done = 0; done < count;) {
    std::vector<Entry> entries;
    std::vector<HistoryEvent> events;
    for (; done < count && entries.size() < 500; ++done) {
      Entry e;
      e.id = absl::StrCat("m", first + done);
      e.name_space = kNamespace;
      e.text = absl::StrCat("memory ", e.id, ": the user prefers concise answers and works in UTC");
      e.principal = "loader";
      e.created_at_us = e.updated_at_us = Env::Default()->NowMicros();
      e.embedding.assign(kDim, 0.0f);
      e.embedding[(first + done) % kDim] = 1.0f;
      signer.Sign(&e);
      HistoryEvent ev{0, e.id, e.name_space, "add", e.principal, e.updated_at_us, {{"text", e.text}}};
      signer.Sign(&ev);
      entries.push_back(std::move(e));
      events.push_back(std::move(ev));
    }
    BULWARK_RETURN_IF_ERROR(backend.InsertEntries(entries, events).status());
  }
  return absl::OkStatus();
}

// One takeover of a namespace of `size` entries in a database of its own; prints its row.
absl::Status MeasureTakeover(testing::PgTestCluster& cluster, const Keyring* keyring, int size,
                             absl::Duration ttl) {
  BULWARK_ASSIGN_OR_RETURN(const std::string conninfo,
                           cluster.CreateDatabase(absl::StrCat("takeover_", size)));
  BULWARK_ASSIGN_OR_RETURN(auto writer, PostgresBackend::Open(conninfo, /*create=*/true));
  const Signer signer(keyring);
  BULWARK_RETURN_IF_ERROR(WriteEntries(*writer, signer, 0, size));
  BULWARK_ASSIGN_OR_RETURN(const int64_t last_seq, writer->LastEventSeq());

  // The old leader takes the lease and dies at once.
  BULWARK_ASSIGN_OR_RETURN(auto old_leases, NamespaceLeases::Open(conninfo));
  BULWARK_RETURN_IF_ERROR(old_leases->TryAcquire(kNamespace, "old-leader", ttl).status());
  const absl::Time died = absl::Now();
  old_leases.reset();

  // The new leader.
  BULWARK_ASSIGN_OR_RETURN(auto leases, NamespaceLeases::Open(conninfo));
  BULWARK_ASSIGN_OR_RETURN(auto backend, PostgresBackend::Open(conninfo, /*create=*/false));
  LeadershipOptions options;
  options.ttl = ttl;
  options.renew_every = ttl / 3;
  std::unique_ptr<NamespaceLeadership> leadership;
  for (const absl::Time until = died + ttl + absl::Seconds(30); leadership == nullptr;) {
    auto acquired =
        NamespaceLeadership::Acquire(leases.get(), backend.get(), kNamespace, "new-leader", options);
    if (acquired.ok()) {
      leadership = *std::move(acquired);
    } else if (acquired.status().code() != absl::StatusCode::kFailedPrecondition || absl::Now() > until) {
      return acquired.status();
    } else {
      absl::SleepFor(absl::Milliseconds(20));
    }
  }
  const absl::Time acquired = absl::Now();
  FollowerOptions follow;
  follow.replica_id = "r1";
  follow.replicas = {"r1"};
  follow.copies = 1;
  follow.dimension = kDim;
  follow.batch = 2000;
  follow.listen = false;
  BULWARK_ASSIGN_OR_RETURN(auto follower, Follower::Open(conninfo, keyring, follow, /*start=*/false));
  while (follower->stats().applied_version < last_seq) {
    BULWARK_RETURN_IF_ERROR(follower->PollOnce().status());
    if (absl::Now() > acquired + absl::Seconds(300)) return absl::DeadlineExceededError("load too slow");
  }
  const absl::Time loaded = absl::Now();
  BULWARK_RETURN_IF_ERROR(WriteEntries(*backend, signer, size, 1));
  const absl::Time served = absl::Now();
  const FollowerStats stats = follower->stats();
  if (stats.rows_rejected != 0 || follower->index().Memory().rows != static_cast<size_t>(size)) {
    return absl::InternalError(absl::StrCat("the new leader loaded ", follower->index().Memory().rows,
                                            " rows, ", stats.rows_rejected, " rejected"));
  }
  std::printf("| %d | %.0f | %.0f | %.0f | %.1f | %.0f | %.0f |\n", size,
              absl::ToDoubleMilliseconds(acquired - died), absl::ToDoubleMilliseconds(loaded - acquired),
              absl::ToDoubleMilliseconds(served - loaded), absl::ToDoubleMilliseconds(served - died),
              absl::ToDoubleMilliseconds(served - acquired), size / absl::ToDoubleSeconds(loaded - acquired));
  return absl::OkStatus();
}

int Main(absl::Duration ttl, const std::vector<int>& sizes) {
  auto cluster = testing::PgTestCluster::Start();
  if (!cluster.ok()) return std::fprintf(stderr, "%s\n", cluster.status().ToString().c_str()), 1;
  testing::TempDir dir;
  auto keyring = Keyring::Create(dir / "keyring", Env::Default());
  if (!keyring.ok()) return std::fprintf(stderr, "%s\n", keyring.status().ToString().c_str()), 1;
  std::printf("ttl %.0f ms, d = %d\n\n", absl::ToDoubleMilliseconds(ttl), kDim);
  std::printf(
      "| entries | wait (lease expiry) ms | load ms | first write ms | total ms | takeover after "
      "acquiring ms | load rows/s |\n|---|---|---|---|---|---|---|\n");
  for (int size : sizes) {
    if (absl::Status s = MeasureTakeover(**cluster, &*keyring, size, ttl); !s.ok()) {
      return std::fprintf(stderr, "size %d: %s\n", size, s.ToString().c_str()), 1;
    }
  }
  return 0;
}

}  // namespace
}  // namespace bulwark

int main(int argc, char** argv) {
  int ttl_ms = 1000;
  std::vector<int> sizes = {1000, 10000, 100000};
  const char* usage = "usage: replica_takeover_bench [ttl_ms=100..10000] [sizes=N,N,... each 1..200000]\n";
  if (argc > 1 && (!absl::SimpleAtoi(argv[1], &ttl_ms) || ttl_ms < 100 || ttl_ms > 10000)) {
    return std::fprintf(stderr, "%s", usage), 2;
  }
  if (argc > 2) {
    sizes.clear();
    for (absl::string_view part : absl::StrSplit(argv[2], ',')) {
      int n = 0;
      if (!absl::SimpleAtoi(part, &n) || n < 1 || n > 200000 || sizes.size() >= 10) {
        return std::fprintf(stderr, "%s", usage), 2;
      }
      sizes.push_back(n);
    }
  }
  return bulwark::Main(absl::Milliseconds(ttl_ms), sizes);
}
