// Test harness for whole-service tests: runs the real `bulwark serve` binary as a child process on
// 127.0.0.1 with an ephemeral port (--port 0 --json), reads its startup lines (admin key, port), and
// talks to it with httplib::Client. Every wait is bounded; the destructor SIGKILLs a server still
// running.
#pragma once

#include <fcntl.h>
#include <httplib.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

extern char** environ;

namespace bulwark::testing {

inline std::string BulwarkBinary() { return std::string(BULWARK_BUILD_DIR) + "/tools/bulwark"; }

// One HTTP answer, with the body parsed as JSON when it is JSON.
struct Answer {
  int status = 0;  // 0: no answer (connection failed)
  std::string body;
  httplib::Headers headers;
  nlohmann::json json() const { return nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false); }
  std::string header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? "" : it->second;
  }
  std::string error_code() const {
    nlohmann::json j = json();
    return j.is_object() && j.contains("error") ? j["error"].value("code", "") : "";
  }
};

class ServerProcess {
 public:
  // Starts `bulwark --store STORE --json serve --port 0 ARGS...`; waits (at most 20 s) for the
  // "listening" line. Returns null if the process exited first; exit_code then holds its status.
  static std::unique_ptr<ServerProcess> Start(const std::filesystem::path& store,
                                              std::vector<std::string> args, int* exit_code = nullptr) {
    return StartAt(store.string(), store.string() + ".stderr", std::move(args), exit_code);
  }
  // As Start, for any store location (a postgresql:// URL too), with the server's stderr written
  // to `stderr_path`.
  static std::unique_ptr<ServerProcess> StartAt(const std::string& store, const std::string& stderr_path,
                                                std::vector<std::string> args, int* exit_code = nullptr) {
    std::unique_ptr<ServerProcess> server(new ServerProcess());
    server->stderr_path_ = stderr_path;
    int out[2];
    if (pipe(out) != 0) return nullptr;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    posix_spawn_file_actions_addclose(&actions, out[1]);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, server->stderr_path_.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0600);
    std::vector<std::string> argv_s = {BulwarkBinary(), "--store", store, "--json", "serve", "--port", "0"};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    const std::string binary = BulwarkBinary();
    int rc = posix_spawn(&server->pid_, binary.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    close(out[1]);
    if (rc != 0) {
      close(out[0]);
      return nullptr;
    }
    server->out_ = fdopen(out[0], "r");
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    std::string line;
    while (server->ReadLine(&line, deadline)) {
      nlohmann::json event = nlohmann::json::parse(line, nullptr, false);
      if (!event.is_object()) continue;
      server->events_.push_back(event);
      if (event.value("event", "") == "admin_created") server->admin_key_ = event["api_key"];
      if (event.value("event", "") == "listening") {
        server->port_ = event["port"];
        return server;
      }
    }
    int status = server->Wait(std::chrono::seconds(10));
    if (exit_code) *exit_code = status;
    return nullptr;
  }

  ~ServerProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (out_) fclose(out_);
  }

  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  // The admin key printed on this start, if the store was created now.
  const std::optional<std::string>& admin_key() const { return admin_key_; }
  const std::vector<nlohmann::json>& events() const { return events_; }
  std::string Stderr() const {
    std::string text;
    if (FILE* f = fopen(stderr_path_.c_str(), "r")) {
      char buf[4096];
      size_t n;
      while ((n = fread(buf, 1, sizeof(buf), f)) > 0) text.append(buf, n);
      fclose(f);
    }
    return text;
  }

  // Sends `sig`; with SIGKILL also reaps the process.
  void Signal(int sig) {
    if (pid_ <= 0) return;
    kill(pid_, sig);
    if (sig == SIGKILL) {
      waitpid(pid_, nullptr, 0);
      pid_ = -1;
    }
  }
  // Waits for the process to exit (at most `timeout`, then SIGKILL); returns its exit code, or
  // 128 + signal.
  int Wait(std::chrono::seconds timeout) {
    if (pid_ <= 0) return -1;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    int status = 0;
    while (waitpid(pid_, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        kill(pid_, SIGKILL);
        waitpid(pid_, &status, 0);
        break;
      }
      usleep(10'000);
    }
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  std::unique_ptr<httplib::Client> Client(bool keep_alive = false) const {
    auto client = std::make_unique<httplib::Client>("127.0.0.1", port_);
    client->set_connection_timeout(5, 0);
    client->set_read_timeout(10, 0);
    client->set_write_timeout(10, 0);
    client->set_keep_alive(keep_alive);
    client->set_tcp_nodelay(true);
    return client;
  }

 private:
  ServerProcess() = default;

  bool ReadLine(std::string* line, std::chrono::steady_clock::time_point deadline) {
    line->clear();
    while (true) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      pollfd p{fileno(out_), POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
      char c;
      if (read(fileno(out_), &c, 1) != 1) return false;
      if (c == '\n') return true;
      *line += c;
    }
  }

  pid_t pid_ = -1;
  FILE* out_ = nullptr;
  int port_ = 0;
  std::optional<std::string> admin_key_;
  std::vector<nlohmann::json> events_;
  std::string stderr_path_;
};

// Runs `bulwark --store STORE ARGS...` to completion; returns the exit code and stdout.
inline std::pair<int, std::string> RunCli(const std::filesystem::path& store, std::vector<std::string> args) {
  std::string command = BulwarkBinary() + " --store '" + store.string() + "'";
  for (const auto& a : args) command += " '" + a + "'";
  command += " 2>/dev/null";
  std::string out;
  FILE* p = popen(command.c_str(), "r");
  if (!p) return {-1, ""};
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

// Sends one request. `key` empty: no Authorization header.
inline Answer Send(httplib::Client& client, const std::string& method, const std::string& path,
                   const std::string& key, const std::string& body = "", httplib::Headers headers = {}) {
  if (!key.empty()) headers.emplace("Authorization", "Bearer " + key);
  httplib::Result result(nullptr, httplib::Error::Unknown);
  if (method == "GET") {
    result = client.Get(path.c_str(), headers);
  } else if (method == "POST") {
    result = client.Post(path.c_str(), headers, body, "application/json");
  } else if (method == "PATCH") {
    result = client.Patch(path.c_str(), headers, body, "application/json");
  } else if (method == "DELETE") {
    result = body.empty() ? client.Delete(path.c_str(), headers)
                          : client.Delete(path.c_str(), headers, body, "application/json");
  } else if (method == "PUT") {
    result = client.Put(path.c_str(), headers, body, "application/json");
  }
  Answer answer;
  if (!result) return answer;
  answer.status = result->status;
  answer.body = result->body;
  answer.headers = result->headers;
  return answer;
}

inline Answer SendJson(httplib::Client& client, const std::string& method, const std::string& path,
                       const std::string& key, const nlohmann::json& body, httplib::Headers headers = {}) {
  return Send(client, method, path, key, body.dump(), std::move(headers));
}

}  // namespace bulwark::testing
