// PgTestCluster (tests only): a throwaway PostgreSQL 15 cluster for the tests of the PostgreSQL
// repositories. Start() runs /usr/lib/postgresql/15/bin/initdb into a fresh directory under
// $TMPDIR (or /tmp) and `pg_ctl start`s a server listening on 127.0.0.1 only, on a free port, with
// its Unix socket inside that directory, trust authentication, and fsync off (test data need not
// survive a power loss). The destructor stops the server (pg_ctl stop -m immediate) and removes
// the directory; a test failure unwinds normally, so the cluster goes with it, and a watchdog
// process does the same if the test process dies without unwinding (a crash, or ctest killing it
// on a timeout). Every wait is bounded (pg_ctl -w -t 30, every tool under `timeout 60`).
//
// PostgreSQL refuses to run as root: when this process is root (CI is), initdb, pg_ctl and the
// server run as the `postgres` user (runuser -u postgres --), and the directory is chowned to it.
// Otherwise they run as the current user.
//
// Failover (issue #17 point 3): a cluster started with Options::replication runs with
// synchronous_commit=on; StartSynchronousStandby() makes a streaming standby of it
// (pg_basebackup -R -X stream into a directory of its own, started on another loopback port) and
// then names it in the primary's synchronous_standby_names, so that from then on a COMMIT returns
// only once the standby has the commit's WAL. Kill() is a crash of the primary's host (SIGKILL of
// the postmaster and every process it started); Promote() makes the standby a primary.
#pragma once

#include <absl/status/status.h>
#include <absl/status/statusor.h>

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

namespace bulwark::testing {

class PgTestCluster {
 public:
  struct Options {
    // WAL senders on and synchronous_commit=on (instead of off), for StartSynchronousStandby.
    bool replication = false;
  };
  // Initializes and starts a cluster. Unavailable (with the tool's log) if PostgreSQL 15 is not
  // installed, initdb fails, or the server does not come up within 30 s.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<PgTestCluster>> Start(Options options);
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<PgTestCluster>> Start() { return Start(Options{}); }

  // A synchronous streaming standby of this cluster (which must run with Options::replication),
  // in a directory of its own on a free loopback port; returns once this cluster reports it
  // streaming in sync state (at most 30 s). Unavailable with the tools' log on failure.
  [[nodiscard]] absl::StatusOr<std::unique_ptr<PgTestCluster>> StartSynchronousStandby();
  // SIGKILL of this cluster's postmaster and of every process it started (stopped first, so it
  // forks nothing meanwhile): a crash of its host. Connections see their sockets close.
  [[nodiscard]] absl::Status Kill();
  // `pg_ctl promote -w`: a standby becomes a primary, accepting writes (at most 30 s).
  [[nodiscard]] absl::Status Promote();
  ~PgTestCluster();
  PgTestCluster(const PgTestCluster&) = delete;
  PgTestCluster& operator=(const PgTestCluster&) = delete;

  int port() const { return port_; }
  // A libpq connection string for database `dbname` as the cluster's superuser.
  std::string ConnInfo(std::string_view dbname = "postgres") const;
  // Creates an empty database `dbname` (UTF-8) and returns its connection string.
  [[nodiscard]] absl::StatusOr<std::string> CreateDatabase(std::string_view dbname);
  // Runs SQL on database `dbname` (tests use it to edit rows behind a repository's back).
  [[nodiscard]] absl::Status ExecSql(std::string_view dbname, std::string_view sql);

 private:
  PgTestCluster() = default;
  // A fresh directory under $TMPDIR (owned by `postgres` when root) with its tools log.
  static absl::StatusOr<std::unique_ptr<PgTestCluster>> MakeDirectory();
  // pg_ctl start of dir_/data on a free loopback port (three tries: the port may be taken between
  // pick and bind); sets port_ and starts the watchdog.
  absl::Status StartServer();
  // Runs a PostgreSQL program (as `postgres` when root) with stdout and stderr appended to
  // `log`; its exit status as OK or Unavailable with the log's tail.
  absl::Status RunTool(const std::string& program, const std::vector<std::string>& args);
  // Starts the watchdog: a detached process (reparented to init, so that killing this process
  // and its children, as ctest does on a timeout, does not kill it) that waits for this process
  // to close its pipe, by exiting or dying, then stops the server and removes the directory.
  void StartWatchdog();

  std::filesystem::path dir_;  // removed on destruction
  std::filesystem::path log_;
  int port_ = 0;
  bool started_ = false;
  bool replication_ = false;
  int watchdog_fd_ = -1;  // the pipe's write end; closing it wakes the watchdog
};

}  // namespace bulwark::testing
