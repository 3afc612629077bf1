// Test helper: a real OpenAI-compatible chat completions server on 127.0.0.1 (an ephemeral port),
// run by httplib on its own thread. Each POST /v1/chat/completions is answered by a programmable
// handler; by default the reply's content comes from `SetContent`'s function (default "ok").
// Requests are counted and their bodies kept, so tests can check what a client sent.
#pragma once

#include <absl/synchronization/mutex.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace bulwark::testing {

class LoopbackChatServer {
 public:
  using Handler = std::function<void(const nlohmann::json& request, httplib::Response& response)>;
  using ContentFn = std::function<std::string(const nlohmann::json& request)>;

  LoopbackChatServer() {
    server_.Post("/v1/chat/completions", [this](const httplib::Request& req, httplib::Response& res) {
      ++requests_;
      const nlohmann::json request = nlohmann::json::parse(req.body, nullptr, false);
      Handler handler;
      {
        absl::MutexLock lock(&mu_);
        bodies_.push_back(request);
        authorization_ = req.get_header_value("Authorization");
        handler = handler_;
      }
      handler(request, res);
    });
    SetContent([](const nlohmann::json&) { return std::string("ok"); });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    for (int i = 0; i < 1000 && !server_.is_running(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ~LoopbackChatServer() {
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }
  LoopbackChatServer(const LoopbackChatServer&) = delete;
  LoopbackChatServer& operator=(const LoopbackChatServer&) = delete;

  bool running() const { return port_ > 0 && server_.is_running(); }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  void Stop() {
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }

  void SetHandler(Handler handler) {
    absl::MutexLock lock(&mu_);
    handler_ = std::move(handler);
  }
  // Every request is answered 200 with a completion whose content is fn(request).
  void SetContent(ContentFn fn) {
    SetHandler([fn = std::move(fn)](const nlohmann::json& request, httplib::Response& res) {
      res.set_content(Completion(fn(request)).dump(), "application/json");
    });
  }
  // Every request is answered with `status` and `body`.
  void AlwaysRespond(int status, std::string body) {
    SetHandler([status, body = std::move(body)](const nlohmann::json&, httplib::Response& res) {
      res.status = status;
      res.set_content(body, "application/json");
    });
  }

  int requests() const { return requests_.load(); }
  std::vector<nlohmann::json> bodies() const {
    absl::MutexLock lock(&mu_);
    return bodies_;
  }
  std::string last_authorization() const {
    absl::MutexLock lock(&mu_);
    return authorization_;
  }

  // A chat completion body whose first choice has `content`.
  static nlohmann::json Completion(const std::string& content, const std::string& finish_reason = "stop") {
    return {{"id", "chatcmpl-test"},
            {"object", "chat.completion"},
            {"model", "test-model"},
            {"choices",
             {{{"index", 0},
               {"message", {{"role", "assistant"}, {"content", content}}},
               {"finish_reason", finish_reason}}}},
            {"usage", {{"prompt_tokens", 11}, {"completion_tokens", 3}, {"total_tokens", 14}}}};
  }
  // The text of the last message of a request (the user turn the client sent).
  static std::string LastUserContent(const nlohmann::json& request) {
    if (!request.contains("messages") || request["messages"].empty()) return "";
    return request["messages"].back().value("content", "");
  }

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<int> requests_{0};
  mutable absl::Mutex mu_;
  Handler handler_ ABSL_GUARDED_BY(mu_);
  std::vector<nlohmann::json> bodies_ ABSL_GUARDED_BY(mu_);
  std::string authorization_ ABSL_GUARDED_BY(mu_);
};

}  // namespace bulwark::testing
