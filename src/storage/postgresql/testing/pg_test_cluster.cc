// PgTestCluster implementation (see pg_test_cluster.h).
#include "storage/postgresql/testing/pg_test_cluster.h"

#include <absl/strings/str_cat.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

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

absl::StatusOr<std::unique_ptr<PgTestCluster>> PgTestCluster::Start() {
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
    if (auto s = ChownTree(cluster->dir_, kRunAs); !s.ok()) return s;
  }
  const std::string data = (cluster->dir_ / "data").string();
  if (auto s = cluster->RunTool("initdb", {"-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8",
                                           "--locale=C.UTF-8", "--no-sync"});
      !s.ok()) {
    return s;
  }
  absl::Status started;
  for (int attempt = 0; attempt < 3; ++attempt) {  // the port may be taken between pick and bind
    auto port = FreeLoopbackPort();
    if (!port.ok()) return port.status();
    const std::string options =
        absl::StrCat("-c listen_addresses=127.0.0.1 -p ", *port, " -k ", cluster->dir_.string(),
                     " -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=60",
                     " -c shared_buffers=32MB");
    started = cluster->RunTool("pg_ctl", {"-D", data, "-l", (cluster->dir_ / "server.log").string(), "-w",
                                          "-t", "30", "-o", options, "start"});
    if (started.ok()) {
      cluster->port_ = *port;
      cluster->started_ = true;
      cluster->StartWatchdog();
      return cluster;
    }
  }
  return absl::UnavailableError(
      absl::StrCat(started.message(), "; server log: ", Tail(cluster->dir_ / "server.log")));
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
  if (auto s =
          ExecSql("postgres", absl::StrCat("CREATE DATABASE \"", std::string(dbname), "\" ENCODING 'UTF8'"));
      !s.ok()) {
    return s;
  }
  return ConnInfo(dbname);
}

absl::Status PgTestCluster::ExecSql(std::string_view dbname, std::string_view sql) {
  auto conn = pg::PgConnection::Open(ConnInfo(dbname));
  if (!conn.ok()) return conn.status();
  return (*conn)->Exec(sql);
}

}  // namespace bulwark::testing
