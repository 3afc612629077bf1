// BoundedChatCall: one JSON-mode chat completion with hard bounds, for callers that sit on a
// latency-critical path and must not be held by the endpoint (the LLM judge of the write gate,
// detect/llm_judge_detector.cc). Unlike ChatClient (chat_client.h), whose transport bounds each
// socket operation but not the whole exchange nor the size of the answer, a call here:
//   - never retries;
//   - ends within `deadline_ms` of wall-clock time, however slowly the server drips its answer: a
//     watchdog thread shuts the connection down at the deadline (the socket's blocked read then
//     returns at once);
//   - reads at most `max_answer_bytes` of the answer body (a Content-Length above it is refused
//     before the body is read; a chunked or unannounced body is cut at the limit);
//   - parses the answer strictly (chat_client.h: ParseChatReply, ParseJsonContent).
// Thread-safe: each call has its own connection.
#pragma once

#include <absl/status/statusor.h>

#include <cstddef>
#include <nlohmann/json.hpp>
#include <vector>

#include "llm/chat_client.h"

namespace bulwark {

struct ChatCallBounds {
  int deadline_ms = 2000;           // 1 .. 600000: the whole exchange, connect to last byte
  size_t max_answer_bytes = 16384;  // 64 .. 16 MiB: the HTTP body of the answer
};

// InvalidArgument unless both bounds are in range.
[[nodiscard]] absl::Status ValidateChatCallBounds(const ChatCallBounds& bounds);

// POSTs `messages` in JSON mode to {options.endpoint.url}/v1/chat/completions (api_key as a bearer
// token; endpoint.timeout_ms and max_retries are not used: `bounds` rule) and returns the reply's
// content parsed as one JSON object. Errors:
//   InvalidArgument     bad bounds or URL; no messages; a 4xx other than 401/403/429
//   DeadlineExceeded    the deadline passed before the whole answer arrived
//   ResourceExhausted   the answer is larger than max_answer_bytes; or a 429
//   Unavailable         the connection failed; a 5xx
//   PermissionDenied    401 or 403
//   FailedPrecondition  the model refused (chat_client.h)
//   DataLoss            a 200 that is not a chat completion whose content is one JSON object
//   Internal            any other HTTP status
[[nodiscard]] absl::StatusOr<nlohmann::json> BoundedJsonCompletion(const ChatClientOptions& options,
                                                                   const std::vector<ChatMessage>& messages,
                                                                   const ChatCallBounds& bounds);

}  // namespace bulwark
