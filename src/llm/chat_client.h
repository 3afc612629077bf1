// ChatClient: chat completions from any OpenAI-compatible endpoint (DESIGN 3, src/llm). It POSTs
//   {url}/v1/chat/completions  {"model", "messages": [{"role", "content"}, ...], "temperature",
//                               "max_tokens", "response_format": {"type": "json_object"}?}
// and reads choices[0].message.content. Used by the LLM responder and the LLM equivalence judge
// of smoothed retrieval (SMSR Component 2).
//
// Configuration: a JSON object {"url", "model", "api_key" | "api_key_env", "timeout_ms",
// "max_retries", "initial_backoff_ms", "temperature", "max_tokens"}; "url" and "model" default to
// $BULWARK_LLM_URL and $BULWARK_LLM_MODEL, the key to $BULWARK_LLM_API_KEY.
#pragma once

#include <absl/status/statusor.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "net/json_http_client.h"

namespace bulwark {

struct ChatClientOptions {
  HttpEndpointOptions endpoint = {.timeout_ms = 30000, .max_retries = 2, .initial_backoff_ms = 500};
  std::string model;         // required
  double temperature = 0.0;  // 0 .. 2; 0 for the most repeatable answers
  int max_tokens = 512;      // 1 .. 32768
};

struct ChatMessage {
  std::string role;  // "system" | "user" | "assistant"
  std::string content;
};

struct ChatReply {
  std::string content;
  std::string finish_reason;  // "stop", "length", ...
  int prompt_tokens = 0;      // from "usage" when the server reports it
  int completion_tokens = 0;
};

// The JSON body of a chat completions request for `options` (model, temperature, max_tokens) and
// `messages`; with `json_mode`, "response_format": {"type": "json_object"}. Invalid UTF-8 in a
// message is replaced, never sent raw.
std::string ChatRequestBody(const ChatClientOptions& options, const std::vector<ChatMessage>& messages,
                            bool json_mode);

// Reads the body of a 200 answer: choices[0].message.content. FailedPrecondition for a refusal
// (a "refusal" in the message, or finish_reason "content_filter"); DataLoss for anything that is
// not a chat completion (not JSON, no choices, no string content).
[[nodiscard]] absl::StatusOr<ChatReply> ParseChatReply(std::string_view body);

// The content of a JSON-mode reply parsed as one JSON object. DataLoss when it was cut off
// (finish_reason "length") or is not a JSON object.
[[nodiscard]] absl::StatusOr<nlohmann::json> ParseJsonContent(const ChatReply& reply);

class ChatClient {
 public:
  // InvalidArgument naming the bad field (missing url/model, bad URL, value out of range).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<ChatClient>> Create(ChatClientOptions options);
  // Builds options from a JSON config (see above) and the environment, then calls Create().
  // InvalidArgument for an unknown, mistyped or missing field (after the environment defaults).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<ChatClient>> FromConfig(const nlohmann::json& config);

  // One completion. Errors, in addition to JsonHttpClient::Post's (Unavailable, ResourceExhausted,
  // DeadlineExceeded, PermissionDenied, InvalidArgument, Internal):
  //   FailedPrecondition  the model refused: a "refusal" in the message, or finish_reason
  //                       "content_filter" (not retried: asking again gets the same answer)
  //   DataLoss            a 200 whose body is not a chat completion (not JSON, no choices, no
  //                       string content)
  // Thread-safe: each call uses its own connection.
  [[nodiscard]] absl::StatusOr<ChatReply> Complete(const std::vector<ChatMessage>& messages) const;

  // A completion in JSON mode (response_format json_object): the reply's content parsed as one
  // JSON object. Same errors as Complete, plus DataLoss when the content is not a JSON object or
  // was cut off (finish_reason "length").
  [[nodiscard]] absl::StatusOr<nlohmann::json> CompleteJson(const std::vector<ChatMessage>& messages) const;

  const ChatClientOptions& options() const { return options_; }

 private:
  explicit ChatClient(ChatClientOptions options) : options_(std::move(options)) {}
  absl::StatusOr<ChatReply> Request(const std::vector<ChatMessage>& messages, bool json_mode) const;

  ChatClientOptions options_;
};

}  // namespace bulwark
