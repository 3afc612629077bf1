// One bounded JSON-mode chat completion (see bounded_chat_call.h): httplib with a content receiver
// that counts bytes, and a watchdog thread that stops the client at the deadline.
#include "llm/bounded_chat_call.h"

#include <absl/strings/numbers.h>
#include <absl/strings/str_cat.h>
#include <absl/synchronization/mutex.h>
#include <absl/time/time.h>
#include <httplib.h>

#include <chrono>
#include <string>
#include <thread>

#include "core/status_macros.h"
#include "net/base_url.h"
#include "net/json_http_client.h"

namespace bulwark {
namespace {

constexpr char kCallWho[] = "chat call";
constexpr size_t kMaxAnswerLimit = size_t{16} << 20;

// Stops `client` unless Disarm() is called within `deadline`; fired() says whether it did.
class Watchdog {
 public:
  Watchdog(httplib::Client* client, std::chrono::milliseconds deadline)
      : thread_([this, client, deadline] { Run(client, absl::FromChrono(deadline)); }) {}
  ~Watchdog() { Disarm(); }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // Idempotent; after it returns the watchdog will not fire.
  void Disarm() {
    {
      absl::MutexLock lock(&mu_);
      disarmed_ = true;  // wakes Run's Await
    }
    if (thread_.joinable()) thread_.join();
  }
  bool fired() {
    absl::MutexLock lock(&mu_);
    return fired_;
  }

 private:
  void Run(httplib::Client* client, absl::Duration deadline) {
    absl::MutexLock lock(&mu_);
    if (!mu_.AwaitWithTimeout(absl::Condition(&disarmed_), deadline)) {
      fired_ = true;
      client->stop();  // shuts the socket down: a blocked read in send() returns
    }
  }

  absl::Mutex mu_;
  bool disarmed_ ABSL_GUARDED_BY(mu_) = false;
  bool fired_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;  // last: started once the members it reads exist
};

absl::Status StatusOfHttp(int status, const std::string& where, const std::string& body) {
  if (status == 401 || status == 403) {
    return absl::PermissionDeniedError(
        absl::StrCat(kCallWho, ": ", where, " returned ", status, ": ", ErrorSnippet(body)));
  }
  if (status == 429) {
    return absl::ResourceExhaustedError(absl::StrCat(kCallWho, ": ", where, " returned 429 (rate limited)"));
  }
  if (status >= 500 && status <= 599) {
    return absl::UnavailableError(
        absl::StrCat(kCallWho, ": ", where, " returned ", status, ": ", ErrorSnippet(body)));
  }
  if (status >= 400 && status <= 499) {
    return absl::InvalidArgumentError(
        absl::StrCat(kCallWho, ": ", where, " returned ", status, ": ", ErrorSnippet(body)));
  }
  return absl::InternalError(absl::StrCat(kCallWho, ": ", where, " returned unexpected status ", status));
}

}  // namespace

absl::Status ValidateChatCallBounds(const ChatCallBounds& bounds) {
  if (bounds.deadline_ms < 1 || bounds.deadline_ms > 600000) {
    return absl::InvalidArgumentError(absl::StrCat(kCallWho, ": deadline_ms must be in [1, 600000]"));
  }
  if (bounds.max_answer_bytes < 64 || bounds.max_answer_bytes > kMaxAnswerLimit) {
    return absl::InvalidArgumentError(absl::StrCat(kCallWho, ": max_answer_bytes must be in [64, 16 MiB]"));
  }
  return absl::OkStatus();
}

absl::StatusOr<nlohmann::json> BoundedJsonCompletion(const ChatClientOptions& options,
                                                     const std::vector<ChatMessage>& messages,
                                                     const ChatCallBounds& bounds) {
  BULWARK_RETURN_IF_ERROR(ValidateChatCallBounds(bounds));
  if (messages.empty()) return absl::InvalidArgumentError(absl::StrCat(kCallWho, ": no messages"));
  BULWARK_ASSIGN_OR_RETURN(const BaseUrl url, ParseBaseUrl(options.endpoint.url));
  const std::string path = absl::StrCat(url.prefix, "/v1/chat/completions");
  const std::string where = absl::StrCat(url.scheme_host_port, path);
  std::unique_ptr<httplib::Client> client = MakeKeepAliveClient(url, bounds.deadline_ms);

  httplib::Request request;
  request.method = "POST";
  request.path = path;
  request.body = ChatRequestBody(options, messages, /*json_mode=*/true);
  request.set_header("Content-Type", "application/json");
  request.set_header("Accept", "application/json");
  if (!options.endpoint.api_key.empty())
    request.set_header("Authorization", absl::StrCat("Bearer ", options.endpoint.api_key));
  bool too_large = false;
  std::string body;
  request.response_handler = [&](const httplib::Response& response) {
    size_t announced = 0;
    if (response.has_header("Content-Length") &&
        absl::SimpleAtoi(response.get_header_value("Content-Length"), &announced) &&
        announced > bounds.max_answer_bytes) {
      too_large = true;
      return false;
    }
    return true;
  };
  request.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    if (n > bounds.max_answer_bytes - body.size()) {
      too_large = true;
      return false;
    }
    body.append(data, n);
    return true;
  };

  httplib::Response response;
  httplib::Error error = httplib::Error::Success;
  bool sent = false;
  const auto start = std::chrono::steady_clock::now();
  {
    Watchdog watchdog(client.get(), std::chrono::milliseconds(bounds.deadline_ms));
    sent = client->send(request, response, error);
    watchdog.Disarm();
    if (watchdog.fired()) {
      return absl::DeadlineExceededError(
          absl::StrCat(kCallWho, ": no complete answer from ", where, " within ", bounds.deadline_ms, " ms"));
    }
  }
  if (too_large) {
    return absl::ResourceExhaustedError(absl::StrCat(kCallWho, ": the answer from ", where,
                                                     " is larger than ", bounds.max_answer_bytes, " bytes"));
  }
  if (!sent) {
    const bool late =
        std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(bounds.deadline_ms);
    if (error == httplib::Error::ConnectionTimeout || late) {
      // A socket timeout of deadline_ms: the deadline passed (the watchdog lost the race).
      return absl::DeadlineExceededError(
          absl::StrCat(kCallWho, ": no complete answer from ", where, " within ", bounds.deadline_ms, " ms"));
    }
    return absl::UnavailableError(
        absl::StrCat(kCallWho, ": request to ", where, " failed (", httplib::to_string(error), ")"));
  }
  if (response.status != 200) return StatusOfHttp(response.status, where, body);
  BULWARK_ASSIGN_OR_RETURN(const ChatReply reply, ParseChatReply(body));
  return ParseJsonContent(reply);
}

}  // namespace bulwark
