// ReplicaGroupTest: the fixture of the process tests that run three real `bulwark serve
// --replica-id` processes (r1, r2, r3) over one new database of the shared PostgreSQL test cluster
// (replica_service_test, replica_query_history_test). r1 starts first (it creates the store and
// prints the admin key), then r2 and r3 together. Each test suite gives its replicas' own flags
// (ReplicaFlags) beyond --keyring and --replica-id.
#pragma once

#include <absl/strings/str_cat.h>
#include <gtest/gtest.h>

#include <future>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "service_harness.h"
#include "storage/postgresql/namespace_lease.h"
#include "storage/postgresql/testing/pg_test_environment.h"
#include "testing/temp_dir.h"

namespace bulwark::testing {

class ReplicaGroupTest : public ::testing::Test {
 protected:
  // Creates the database `db` on the shared cluster and starts r1, then r2 and r3; a test failure
  // (checked with ASSERT_NO_FATAL_FAILURE by the caller's SetUp) if any does not start.
  void StartGroup(const std::string& db) {
    auto cluster = SharedPgCluster();
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *cluster;
    ASSERT_TRUE(cluster_->CreateDatabase(db).ok());
    url_ = absl::StrCat("postgresql://postgres@127.0.0.1:", cluster_->port(), "/", db);
    keyring_ = (dir_.path() / "keyring.json").string();
    replicas_["r1"] = Start("r1");
    ASSERT_NE(replicas_["r1"], nullptr) << "r1 did not start";
    ASSERT_TRUE(replicas_["r1"]->admin_key().has_value());
    admin_ = *replicas_["r1"]->admin_key();
    ASSERT_FALSE(admin_.empty());
    auto r2 = std::async(std::launch::async, [this] { return Start("r2"); });
    auto r3 = std::async(std::launch::async, [this] { return Start("r3"); });
    replicas_["r2"] = r2.get();
    replicas_["r3"] = r3.get();
    ASSERT_NE(replicas_["r2"], nullptr) << "r2 did not start";
    ASSERT_NE(replicas_["r3"], nullptr) << "r3 did not start";
    auto leases = NamespaceLeases::Open(url_);
    ASSERT_TRUE(leases.ok()) << leases.status();
    leases_ = *std::move(leases);
  }

  // The flags of every replica of the suite beyond --keyring and --replica-id.
  virtual std::vector<std::string> ReplicaFlags() const = 0;

  // Starts replica `id` on the group's store (null if it did not start).
  std::unique_ptr<ServerProcess> Start(const std::string& id) const {
    std::vector<std::string> flags = {"--keyring", keyring_, "--replica-id", id};
    for (std::string& flag : ReplicaFlags()) flags.push_back(std::move(flag));
    return ServerProcess::StartAt(url_, (dir_.path() / absl::StrCat(id, ".stderr")).string(), flags);
  }

  // The replica id leading `ns` now ("" if none): the lease holder's incarnation is "<id>/<hex>".
  std::string Leader(const std::string& ns) {
    auto lease = leases_->Current(ns);
    if (!lease.ok() || !lease->has_value() || !(*lease)->live()) return "";
    return (*lease)->holder.substr(0, (*lease)->holder.find('/'));
  }

  TempDir dir_;
  PgTestCluster* cluster_ = nullptr;
  std::string url_;
  std::string keyring_;
  std::string admin_;
  std::map<std::string, std::unique_ptr<ServerProcess>> replicas_;
  std::unique_ptr<NamespaceLeases> leases_;
};

}  // namespace bulwark::testing
