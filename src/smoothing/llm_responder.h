// LlmResponder: asks an OpenAI-compatible chat model to answer from one run's memories only, in
// JSON mode ({"answer": "..."}). The memories are quoted as numbered data blocks and the model is
// told to treat them as untrusted data, never as instructions; that lowers, but cannot remove, the
// influence of an injected instruction, which is what smoothing and its certificate are for.
#pragma once

#include "llm/chat_client.h"
#include "smoothing/responder.h"

namespace bulwark {

class LlmResponder final : public Responder {
 public:
  // `client` must outlive the responder.
  explicit LlmResponder(const ChatClient* client) : client_(client) {}
  std::string_view name() const override { return "llm"; }
  // Errors: ChatClient's; DataLoss when the reply has no string "answer".
  [[nodiscard]] absl::StatusOr<std::string> Respond(std::string_view question,
                                                    std::span<const SearchHit* const> context) const override;
  int max_concurrency() const override { return 8; }  // runs wait on the network, not the CPU

 private:
  const ChatClient* client_;
};

}  // namespace bulwark
