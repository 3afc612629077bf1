// PgTestCluster implementation (see pg_test_cluster.h).
#include "storage/postgresql/testing/pg_test_cluster.h"

#include <absl/strings/str_cat.h>
#include <absl/time/clock.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <vector>

#include "core/status_macros.h"
#include "storage/postgresql/pg_connection.h"

namespace bulwark::testing {
namespace {

constexpr char kBinDir[] = "/usr/lib/postgresql/15/bin/";
constexpr char kRunAs[] = "postgres";

// A port on 127.0.0.1 that nothing listens on right now (the kernel's pick for port 0).
absl::StatusOr<int> FreeLoopbackPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return absl::UnavailableError("socket() failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  int port = -1;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  if (port <= 0) return absl::UnavailableError("no free loopback port");
  return port;
}

std::string Tail(const std::filesystem::path& file, size_t bytes = 2000) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  return text.size() > bytes ? text.substr(text.size() - bytes) : text;
}

// Chowns every file under `dir` (and itself) to `user`.
absl::Status ChownTree(const std::filesystem::path& dir, const char* user) {
  const passwd* pw = getpwnam(user);
  if (pw == nullptr) return absl::UnavailableError(absl::StrCat("no user ", user, " to run PostgreSQL as"));
  if (chown(dir.c_str(), pw->pw_uid, pw->pw_gid) != 0) {
    return absl::UnavailableError(absl::StrCat("cannot chown ", dir.string()));
  }
  std::error_code ec;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir, ec)) {
    if (lchown(e.path().c_str(), pw->pw_uid, pw->pw_gid) != 0) {
      return absl::UnavailableError(absl::StrCat("cannot chown ", e.path().string()));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status PgTestCluster::RunTool(const std::string& program, const std::vector<std::string>& args) {
  // Every argument is built before fork: the child only redirects and execs.
  std::vector<std::string> argv = {"/usr/bin/timeout", "60"};
  if (geteuid() == 0) argv.insert(argv.end(), {"/usr/sbin/runuser", "-u", kRunAs, "--"});
  argv.push_back(kBinDir + program);
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargv;
  for (std::string& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  const int log_fd = open(log_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) return absl::UnavailableError(absl::StrCat("cannot open ", log_.string()));
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(log_fd, STDOUT_FILENO);
    dup2(log_fd, STDERR_FILENO);
    const int null_fd = open("/dev/null", O_RDONLY);
    if (null_fd >= 0) dup2(null_fd, STDIN_FILENO);
    if (chdir(dir_.c_str()) != 0) _exit(126);
    execv(cargv[0], cargv.data());
    _exit(127);
  }
  close(log_fd);
  if (pid < 0) return absl::UnavailableError("fork failed");
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return absl::UnavailableError("waitpid failed");
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return absl::OkStatus();
  return absl::UnavailableError(absl::StrCat(program, " failed (status ", status, "): ", Tail(log_)));
}

absl::StatusOr<std::unique_ptr<PgTestCluster>> PgTestCluster::MakeDirectory() {
  if (access((std::string(kBinDir) + "initdb").c_str(), X_OK) != 0) {
    return absl::UnavailableError("PostgreSQL 15 is not installed (scripts/setup installs postgresql-15)");
  }
  std::unique_ptr<PgTestCluster> cluster(new PgTestCluster());
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base && *base ? base : "/tmp") + "/bulwark-pg-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) return absl::UnavailableError("mkdtemp failed");
  cluster->dir_ = pattern;
  cluster->log_ = cluster->dir_ / "tools.log";
  if (geteuid() == 0) {
    std::ofstream(cluster->log_).flush();
    BULWARK_RETURN_IF_ERROR(ChownTree(cluster->dir_, kRunAs));
  }
  return cluster;
}

absl::Status PgTestCluster::StartServer() {
  const std::string data = (dir_ / "data").string();
  // Without replication nothing needs to survive: no fsync, no waiting for WAL. With it, a COMMIT
  // waits for the synchronous standby (once one is named), and full pages go to the WAL.
  const std::string durability = replication_
                                     ? " -c fsync=off -c synchronous_commit=on -c full_page_writes=on"
                                     : " -c fsync=off -c synchronous_commit=off -c full_page_writes=off";
  absl::Status started;
  for (int attempt = 0; attempt < 3; ++attempt) {  // the port may be taken between pick and bind
    BULWARK_ASSIGN_OR_RETURN(const int port, FreeLoopbackPort());
    const std::string options = absl::StrCat("-c listen_addresses=127.0.0.1 -p ", port, " -k ", dir_.string(),
                                             durability, " -c max_connections=60 -c shared_buffers=32MB");
    started = RunTool("pg_ctl", {"-D", data, "-l", (dir_ / "server.log").string(), "-w", "-t", "30", "-o",
                                 options, "start"});
    if (started.ok()) {
      port_ = port;
      started_ = true;
      StartWatchdog();
      return absl::OkStatus();
    }
  }
  return absl::UnavailableError(absl::StrCat(started.message(), "; server log: ", Tail(dir_ / "server.log")));
}

absl::StatusOr<std::unique_ptr<PgTestCluster>> PgTestCluster::Start(Options options) {
  BULWARK_ASSIGN_OR_RETURN(std::unique_ptr<PgTestCluster> cluster, MakeDirectory());
  cluster->replication_ = options.replication;
  const std::string data = (cluster->dir_ / "data").string();
  BULWARK_RETURN_IF_ERROR(cluster->RunTool("initdb", {"-D", data, "-U", "postgres", "-A", "trust", "-E",
                                                      "UTF8", "--locale=C.UTF-8", "--no-sync"}));
  BULWARK_RETURN_IF_ERROR(cluster->StartServer());
  return cluster;
}

void PgTestCluster::StartWatchdog() {
  // The whole cleanup as one shell command, built before fork (the child only reads and execs).
  // mkdtemp's directory name has no quote in it unless $TMPDIR has one: then no watchdog.
  if (dir_.string().find('\'') != std::string::npos) return;
  const std::string quoted = "'" + dir_.string() + "'";
  std::string command = "/usr/bin/timeout 60 ";
  if (geteuid() == 0) absl::StrAppend(&command, "/usr/sbin/runuser -u ", kRunAs, " -- ");
  absl::StrAppend(&command, kBinDir, "pg_ctl -D ", quoted,
                  "/data -m immediate -w -t 30 stop >/dev/null 2>&1; rm -rf ", quoted);
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return;
  const pid_t child = fork();
  if (child == 0) {
    if (fork() != 0) _exit(0);  // the grandchild is reparented to init
    close(fds[1]);
    setsid();
    // Holds no end of the test's output pipes (ctest reads them until every writer is gone).
    const int null_fd = open("/dev/null", O_RDWR);
    for (int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO}) dup2(null_fd, fd);
    char byte;
    while (read(fds[0], &byte, 1) < 0 && errno == EINTR) {
    }
    const char* argv[] = {"/bin/sh", "-c", command.c_str(), nullptr};
    execv(argv[0], const_cast<char**>(argv));
    _exit(127);
  }
  close(fds[0]);
  if (child < 0) {
    close(fds[1]);
    return;
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  watchdog_fd_ = fds[1];
}

PgTestCluster::~PgTestCluster() {
  if (started_) {
    RunTool("pg_ctl", {"-D", (dir_ / "data").string(), "-m", "immediate", "-w", "-t", "30", "stop"})
        .IgnoreError();
  }
  std::error_code ec;
  if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  if (watchdog_fd_ >= 0) close(watchdog_fd_);  // the watchdog then finds nothing left to do
}

std::string PgTestCluster::ConnInfo(std::string_view dbname) const {
  return absl::StrCat("host=127.0.0.1 port=", port_, " user=postgres dbname=", std::string(dbname),
                      " connect_timeout=10");
}

absl::StatusOr<std::string> PgTestCluster::CreateDatabase(std::string_view dbname) {
  BULWARK_RETURN_IF_ERROR(
      ExecSql("postgres", absl::StrCat("CREATE DATABASE \"", std::string(dbname), "\" ENCODING 'UTF8'")));
  return ConnInfo(dbname);
}

absl::Status PgTestCluster::ExecSql(std::string_view dbname, std::string_view sql) {
  BULWARK_ASSIGN_OR_RETURN(auto conn, pg::PgConnection::Open(ConnInfo(dbname)));
  return conn->Exec(sql);
}

absl::StatusOr<std::unique_ptr<PgTestCluster>> PgTestCluster::StartSynchronousStandby() {
  if (!replication_ || !started_) {
    return absl::FailedPreconditionError("a standby needs a running cluster started with replication");
  }
  BULWARK_ASSIGN_OR_RETURN(std::unique_ptr<PgTestCluster> standby, MakeDirectory());
  standby->replication_ = true;
  // -R writes standby.signal and primary_conninfo (this cluster) into the copy's configuration.
  BULWARK_RETURN_IF_ERROR(standby->RunTool(
      "pg_basebackup",
      {"-D", (standby->dir_ / "data").string(), "-h", "127.0.0.1", "-p", std::to_string(port_), "-U",
       "postgres", "-R", "-X", "stream", "--checkpoint=fast", "--no-sync"}));
  BULWARK_RETURN_IF_ERROR(standby->StartServer());
  // Only now: naming a standby that is not streaming yet would make every COMMIT wait for it.
  BULWARK_RETURN_IF_ERROR(ExecSql("postgres", "ALTER SYSTEM SET synchronous_standby_names = '*'"));
  BULWARK_RETURN_IF_ERROR(ExecSql("postgres", "SELECT pg_reload_conf()"));
  BULWARK_ASSIGN_OR_RETURN(auto conn, pg::PgConnection::Open(ConnInfo("postgres")));
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (absl::Now() < deadline) {
    BULWARK_ASSIGN_OR_RETURN(
        const pg::PgResult synced,
        conn->Query(
            "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming' AND sync_state = 'sync'"));
    if (synced.Int(0, 0) >= 1) return standby;
    absl::SleepFor(absl::Milliseconds(50));
  }
  return absl::UnavailableError(
      absl::StrCat("the standby is not in sync within 30 s; its log: ", Tail(standby->dir_ / "server.log")));
}

namespace {

// The processes whose parent is `parent` (from /proc/PID/stat: "pid (comm) state ppid ...").
std::vector<pid_t> ChildrenOf(pid_t parent) {
  std::vector<pid_t> children;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(e.path() / "stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t close = stat.rfind(')');  // comm may hold spaces and parentheses
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 1));
    char state = 0;
    long ppid = 0;
    if (rest >> state >> ppid && ppid == parent) children.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return children;
}

// True once `pid` is gone or a zombie (a reparented process may wait for a reaper).
bool Gone(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t close = stat.rfind(')');
  return close == std::string::npos || close + 2 >= stat.size() || stat[close + 2] == 'Z';
}

}  // namespace

absl::Status PgTestCluster::Kill() {
  std::ifstream pid_file(dir_ / "data" / "postmaster.pid");
  long postmaster = 0;
  if (!(pid_file >> postmaster) || postmaster <= 1) {
    return absl::FailedPreconditionError("no postmaster.pid: the cluster is not running");
  }
  const pid_t pid = static_cast<pid_t>(postmaster);
  if (kill(pid, SIGSTOP) != 0) return absl::UnavailableError(absl::StrCat("cannot stop postmaster ", pid));
  const std::vector<pid_t> children = ChildrenOf(pid);
  for (pid_t child : children) kill(child, SIGKILL);
  kill(pid, SIGKILL);
  started_ = false;  // nothing for pg_ctl stop to do
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  for (pid_t p : children) {
    while (!Gone(p) && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(5));
  }
  while (!Gone(pid) && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(5));
  if (!Gone(pid)) return absl::UnavailableError(absl::StrCat("postmaster ", pid, " survived SIGKILL"));
  return absl::OkStatus();
}

absl::Status PgTestCluster::Promote() {
  return RunTool("pg_ctl", {"-D", (dir_ / "data").string(), "-w", "-t", "30", "promote"});
}

}  // namespace bulwark::testing
