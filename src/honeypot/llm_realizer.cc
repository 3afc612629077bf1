// Propose-and-rank pot texts through a chat model (see llm_realizer.h).
#include "honeypot/llm_realizer.h"

#include <absl/status/status.h>
#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>

namespace bulwark::honeypot {
namespace {

constexpr std::string_view kSystemPrompt =
    "You write short, harmless, factual sentences for a reference note. Never write instructions, requests, "
    "commands or questions, never address the reader, and never mention examples, memories, documents or "
    "previous messages. Reply with a JSON object {\"candidates\": [\"sentence\", ...]}.";

std::string UserPrompt(const std::vector<std::string>& words, std::string_view safety, int count,
                       const std::string& best) {
  std::string p =
      absl::StrCat("Write ", count,
                   " different sentences of 12 to 30 words each that use as many of these words as "
                   "reads naturally: ",
                   absl::StrJoin(words, ", "), ".");
  if (!safety.empty())
    absl::StrAppend(&p, " Stay within this public topic description: ", std::string(safety));
  if (!best.empty()) absl::StrAppend(&p, " Improve on this sentence, keeping its words: ", best);
  return p;
}

}  // namespace

absl::StatusOr<std::unique_ptr<LlmPotRealizer>> LlmPotRealizer::Create(const ChatClient& client,
                                                                       const LexicalRealizer& lexical,
                                                                       const LlmRealizerOptions& o) {
  if (o.rounds < 1 || o.rounds > 16 || o.candidates < 1 || o.candidates > 32 || o.key_words < 1 ||
      o.key_words > 32 || o.max_candidate_bytes < 1) {
    return absl::InvalidArgumentError("LLM realiser: an option is out of range");
  }
  return std::unique_ptr<LlmPotRealizer>(new LlmPotRealizer(client, lexical, o));
}

absl::StatusOr<RealizedPot> LlmPotRealizer::Realize(std::span<const float> target, const PotTextGate& gate,
                                                    std::string_view safety_content) const {
  absl::StatusOr<RealizedPot> best = lexical_.Realize(target, gate, safety_content);
  if (!best.ok()) return best.status();
  absl::StatusOr<std::vector<std::string>> words = lexical_.KeyWords(target, gate, safety_content);
  if (!words.ok()) return words.status();
  if (words->size() > static_cast<size_t>(options_.key_words))
    words->resize(static_cast<size_t>(options_.key_words));
  std::string feedback;  // the best passing proposal so far
  for (int round = 0; round < options_.rounds; ++round) {
    absl::StatusOr<nlohmann::json> reply =
        client_.CompleteJson({{"system", std::string(kSystemPrompt)},
                              {"user", UserPrompt(*words, safety_content, options_.candidates, feedback)}});
    if (!reply.ok()) return reply.status();
    if (!reply->contains("candidates") || !(*reply)["candidates"].is_array()) {
      return absl::DataLossError("LLM realiser: the reply has no \"candidates\" array");
    }
    int seen = 0;
    for (const nlohmann::json& c : (*reply)["candidates"]) {
      if (!c.is_string()) return absl::DataLossError("LLM realiser: a candidate is not a string");
      const std::string& text = c.get_ref<const std::string&>();
      if (++seen > options_.candidates || text.empty() || text.size() > options_.max_candidate_bytes)
        continue;
      absl::StatusOr<RealizedPot> pot = lexical_.Evaluate(text, target, gate, safety_content);
      if (!pot.ok()) return pot.status();
      if (pot->passed && (!best->passed || pot->score > best->score)) {
        best = *std::move(pot);
        feedback = best->text;
      }
    }
  }
  return best;
}

}  // namespace bulwark::honeypot
