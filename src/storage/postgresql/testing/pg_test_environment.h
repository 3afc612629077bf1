// The test binaries' shared PostgreSQL cluster (tests only): started on first use, once per test
// binary, and stopped when the binary's tests end (a GoogleTest global environment, registered
// by this library). Each test asks for a database of its own.
#pragma once

#include <absl/status/statusor.h>

#include <string>

#include "storage/postgresql/testing/pg_test_cluster.h"

namespace bulwark::testing {

// The binary's cluster, started on the first call; Unavailable if it cannot start (every later
// call returns the same error without trying again).
[[nodiscard]] absl::StatusOr<PgTestCluster*> SharedPgCluster();

// A new, empty database on the shared cluster; returns its connection string.
[[nodiscard]] absl::StatusOr<std::string> NewPgTestDatabase();

}  // namespace bulwark::testing
