// The chat completions client (see chat_client.h): request building and strict reading of the
// answer; transport, retries and HTTP errors are JsonHttpClient's.
#include "llm/chat_client.h"

#include <absl/strings/str_cat.h>

#include <cstdlib>

#include "core/status_macros.h"

namespace bulwark {
namespace {

constexpr char kWho[] = "chat client";

absl::Status Malformed(std::string_view why) {
  return absl::DataLossError(absl::StrCat(kWho, ": malformed response: ", std::string(why)));
}

std::string EnvOr(const char* name, std::string fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::string(value) : std::move(fallback);
}

}  // namespace

absl::StatusOr<ChatReply> ParseChatReply(std::string_view body) {
  const nlohmann::json response = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (response.is_discarded()) return Malformed("not JSON");
  if (!response.is_object()) return Malformed("not a JSON object");
  auto choices = response.find("choices");
  if (choices == response.end() || !choices->is_array() || choices->empty())
    return Malformed("no \"choices\"");
  const nlohmann::json& choice = (*choices)[0];
  if (!choice.is_object()) return Malformed("a choice is not an object");
  ChatReply reply;
  if (auto fr = choice.find("finish_reason"); fr != choice.end() && fr->is_string())
    reply.finish_reason = *fr;
  auto message = choice.find("message");
  if (message == choice.end() || !message->is_object())
    return Malformed("no \"message\" in the first choice");
  if (auto refusal = message->find("refusal"); refusal != message->end() && refusal->is_string()) {
    return absl::FailedPreconditionError(
        absl::StrCat(kWho, ": the model refused: ", ErrorSnippet(refusal->get<std::string>())));
  }
  if (reply.finish_reason == "content_filter") {
    return absl::FailedPreconditionError(
        absl::StrCat(kWho, ": the model refused (finish_reason content_filter)"));
  }
  auto content = message->find("content");
  if (content == message->end() || !content->is_string())
    return Malformed("the message has no string \"content\"");
  reply.content = content->get<std::string>();
  if (auto usage = response.find("usage"); usage != response.end() && usage->is_object()) {
    reply.prompt_tokens = usage->value("prompt_tokens", 0);
    reply.completion_tokens = usage->value("completion_tokens", 0);
  }
  return reply;
}

std::string ChatRequestBody(const ChatClientOptions& options, const std::vector<ChatMessage>& messages,
                            bool json_mode) {
  nlohmann::json body = {{"model", options.model},
                         {"temperature", options.temperature},
                         {"max_tokens", options.max_tokens},
                         {"messages", nlohmann::json::array()}};
  for (const ChatMessage& m : messages)
    body["messages"].push_back({{"role", m.role}, {"content", m.content}});
  if (json_mode) body["response_format"] = {{"type", "json_object"}};
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

absl::StatusOr<nlohmann::json> ParseJsonContent(const ChatReply& reply) {
  if (reply.finish_reason == "length")
    return Malformed("the JSON reply was cut off (finish_reason \"length\")");
  nlohmann::json parsed = nlohmann::json::parse(reply.content, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.is_object()) {
    return Malformed(absl::StrCat("the reply is not a JSON object: ", ErrorSnippet(reply.content)));
  }
  return parsed;
}

absl::StatusOr<std::unique_ptr<ChatClient>> ChatClient::Create(ChatClientOptions options) {
  if (auto s = ValidateEndpointOptions(options.endpoint, kWho); !s.ok()) return s;
  if (options.model.empty()) return absl::InvalidArgumentError(absl::StrCat(kWho, ": \"model\" is required"));
  if (!(options.temperature >= 0 && options.temperature <= 2)) {
    return absl::InvalidArgumentError(absl::StrCat(kWho, ": \"temperature\" must be in [0, 2]"));
  }
  if (options.max_tokens < 1 || options.max_tokens > 32768) {
    return absl::InvalidArgumentError(absl::StrCat(kWho, ": \"max_tokens\" must be in [1, 32768]"));
  }
  return std::unique_ptr<ChatClient>(new ChatClient(std::move(options)));
}

absl::StatusOr<std::unique_ptr<ChatClient>> ChatClient::FromConfig(const nlohmann::json& config) {
  if (auto s = CheckConfigKeys(config,
                               {"url", "model", "api_key", "api_key_env", "timeout_ms", "max_retries",
                                "initial_backoff_ms", "temperature", "max_tokens"},
                               kWho);
      !s.ok()) {
    return s;
  }
  ChatClientOptions options;
  options.endpoint.url = EnvOr("BULWARK_LLM_URL", "");
  options.endpoint.api_key = EnvOr("BULWARK_LLM_API_KEY", "");
  options.model = EnvOr("BULWARK_LLM_MODEL", "");
  for (absl::Status s : {ReadEndpointConfig(config, kWho, &options.endpoint),
                         ReadConfigString(config, "model", kWho, &options.model),
                         ReadConfigDouble(config, "temperature", 0, 2, kWho, &options.temperature),
                         ReadConfigInt(config, "max_tokens", 1, 32768, kWho, &options.max_tokens)}) {
    BULWARK_RETURN_IF_ERROR(s);
  }
  if (options.endpoint.url.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(kWho, ": \"url\" is required (or set BULWARK_LLM_URL)"));
  }
  return Create(std::move(options));
}

absl::StatusOr<ChatReply> ChatClient::Request(const std::vector<ChatMessage>& messages,
                                              bool json_mode) const {
  if (messages.empty()) return absl::InvalidArgumentError(absl::StrCat(kWho, ": no messages"));
  BULWARK_ASSIGN_OR_RETURN(auto client, JsonHttpClient::Create(options_.endpoint, kWho));
  BULWARK_ASSIGN_OR_RETURN(
      auto answer, client->Post("/v1/chat/completions", ChatRequestBody(options_, messages, json_mode)));
  return ParseChatReply(answer);
}

absl::StatusOr<ChatReply> ChatClient::Complete(const std::vector<ChatMessage>& messages) const {
  return Request(messages, /*json_mode=*/false);
}

absl::StatusOr<nlohmann::json> ChatClient::CompleteJson(const std::vector<ChatMessage>& messages) const {
  auto reply = Request(messages, /*json_mode=*/true);
  BULWARK_RETURN_IF_ERROR(reply.status());
  return ParseJsonContent(*reply);
}

}  // namespace bulwark
