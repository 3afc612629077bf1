// The optional LLM route of stage 2 (research/mempot.md 2.3, "LLM path"): MemPot's Alg. 1 needs
// next-token logits, which OpenAI-compatible chat endpoints do not expose, so this is
// propose-and-rank instead. Each round asks the model (src/llm/chat_client.h, JSON mode) for
// `candidates` harmless sentences about the safety content S that use the matching-pursuit key
// words of the target (LexicalRealizer::KeyWords), then scores every proposal exactly as the
// lexical route scores its own (LexicalRealizer::Evaluate: R of Eq. 16 plus the hard gates) and
// feeds the best passing one back for rewriting. After `rounds` rounds the best passing proposal
// wins; if none passed, the lexical route's own text is returned (so the LLM can only improve R).
// Nothing of the memories is ever sent to the model: only the key words (public vocabulary), S
// and earlier proposals.
#pragma once

#include <absl/status/statusor.h>

#include "honeypot/honeypot_fit.h"
#include "llm/chat_client.h"

namespace bulwark::honeypot {

struct LlmRealizerOptions {
  int rounds = 4;                    // propose-and-rank rounds, 1 .. 16
  int candidates = 8;                // sentences asked for per round, 1 .. 32
  int key_words = 15;                // matching-pursuit words given to the model, 1 .. 32
  size_t max_candidate_bytes = 600;  // longer proposals are ignored
};

class LlmPotRealizer final : public PotRealizer {
 public:
  // `client` and `lexical` must outlive the realiser. InvalidArgument for options out of range.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<LlmPotRealizer>> Create(
      const ChatClient& client, const LexicalRealizer& lexical, const LlmRealizerOptions& options = {});

  // Errors: the chat client's (Unavailable, DeadlineExceeded, DataLoss for a reply that is not a
  // JSON object with a "candidates" array of strings, ...) and the lexical realiser's.
  [[nodiscard]] absl::StatusOr<RealizedPot> Realize(std::span<const float> target, const PotTextGate& gate,
                                                    std::string_view safety_content) const override;

 private:
  LlmPotRealizer(const ChatClient& client, const LexicalRealizer& lexical, const LlmRealizerOptions& options)
      : client_(client), lexical_(lexical), options_(options) {}
  const ChatClient& client_;
  const LexicalRealizer& lexical_;
  LlmRealizerOptions options_;
};

}  // namespace bulwark::honeypot
