// Responder: produces one answer to a question from one run's k memories (SMSR Component 2, the
// per-subset response). Implementations: ExtractiveResponder (built in, deterministic, no LLM) and
// LlmResponder (an OpenAI-compatible chat model).
#pragma once

#include <absl/status/statusor.h>

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "store/memory_store.h"

namespace bulwark {

// Which responder answers each smoothing run: the closed set a request may name.
enum class ResponderKind { kExtractive, kLlm };
constexpr std::string_view ToString(ResponderKind kind) {
  return kind == ResponderKind::kLlm ? "llm" : "extractive";
}
// "extractive" or "llm"; nullopt for anything else.
constexpr std::optional<ResponderKind> ParseResponderKind(std::string_view name) {
  if (name == "extractive") return ResponderKind::kExtractive;
  if (name == "llm") return ResponderKind::kLlm;
  return std::nullopt;
}

class Responder {
 public:
  virtual ~Responder() = default;
  // "extractive", "llm"
  virtual std::string_view name() const = 0;
  // The answer to `question` given `context` (the run's entries, most similar to the query
  // first). Errors: whatever the backend reports (Unavailable, DeadlineExceeded, ... for an LLM);
  // InvalidArgument for an empty context.
  [[nodiscard]] virtual absl::StatusOr<std::string> Respond(
      std::string_view question, std::span<const SearchHit* const> context) const = 0;
  // How many runs may call Respond concurrently (it must then be thread-safe). Default 1.
  virtual int max_concurrency() const { return 1; }
};

}  // namespace bulwark
