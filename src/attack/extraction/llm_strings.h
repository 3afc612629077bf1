// The LLM path of the extraction attacks and the benign-session simulator: one chat completion in
// JSON mode (src/llm/chat_client.h) whose reply is an object holding a list of strings (MEXTRA's
// generated queries, RAG-Thief's continuations, IKEA's anchors and questions). The reply is
// untrusted: only strings of bounded length are kept, and at most a bounded number of them.
#pragma once

#include <absl/status/statusor.h>

#include <string>
#include <string_view>
#include <vector>

#include "llm/chat_client.h"

namespace bulwark::extraction {

inline constexpr size_t kMaxLlmStringBytes = 2000;

// Sends `system` and `user` messages and returns the strings of the reply's array `field`
// (whitespace-trimmed; empty ones, non-strings and strings over kMaxLlmStringBytes dropped; at
// most `max_items`). Errors: those of ChatClient::CompleteJson; DataLoss if the reply has no
// array `field` or no usable string in it.
[[nodiscard]] absl::StatusOr<std::vector<std::string>> AskForStrings(const ChatClient& llm,
                                                                     std::string system, std::string user,
                                                                     std::string_view field,
                                                                     size_t max_items);

}  // namespace bulwark::extraction
