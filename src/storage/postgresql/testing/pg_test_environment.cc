// The shared test cluster (see pg_test_environment.h).
#include "storage/postgresql/testing/pg_test_environment.h"

#include <absl/strings/str_cat.h>
#include <absl/synchronization/mutex.h>
#include <gtest/gtest.h>

#include <atomic>
#include <memory>

namespace bulwark::testing {
namespace {

ABSL_CONST_INIT absl::Mutex cluster_mu(absl::kConstInit);
std::unique_ptr<PgTestCluster> cluster ABSL_GUARDED_BY(cluster_mu);
absl::Status start_status ABSL_GUARDED_BY(cluster_mu);
bool tried ABSL_GUARDED_BY(cluster_mu) = false;

// Stops the cluster after the last test of the binary.
class PgClusterEnvironment : public ::testing::Environment {
 public:
  void TearDown() override {
    absl::MutexLock lock(&cluster_mu);
    cluster.reset();
  }
};

[[maybe_unused]] ::testing::Environment* const environment =
    ::testing::AddGlobalTestEnvironment(new PgClusterEnvironment);

}  // namespace

absl::StatusOr<PgTestCluster*> SharedPgCluster() {
  absl::MutexLock lock(&cluster_mu);
  if (!tried) {
    tried = true;
    auto started = PgTestCluster::Start();
    if (started.ok()) {
      cluster = *std::move(started);
    } else {
      start_status = started.status();
    }
  }
  if (cluster == nullptr) {
    return start_status.ok() ? absl::UnavailableError("the test cluster was stopped") : start_status;
  }
  return cluster.get();
}

absl::StatusOr<std::string> NewPgTestDatabase() {
  static std::atomic<int> next{0};
  auto shared = SharedPgCluster();
  if (!shared.ok()) return shared.status();
  return (*shared)->CreateDatabase(absl::StrCat("bulwark_test_", next.fetch_add(1)));
}

}  // namespace bulwark::testing
