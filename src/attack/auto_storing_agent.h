// AutoStoringAgent: the agent that MINJA and InjecMEM attack (MemSAD Sec. 3, access models
// `query` and `single`). For every query it retrieves its top k memories through MemoryStore,
// composes a response, and stores the interaction as a new memory (source `agent`): the
// auto-storage that lets a query-only attacker write into memory.
//
// The response is produced by a deterministic stand-in for a compliant LLM: the reasoning is the
// guidance the user put after the question (an LLM follows in-prompt instructions) -- unless a
// retrieved interaction's reasoning covers at least half of the guidance's words, which the agent
// then completes as demonstrated -- or, when the query carries no guidance, the reasoning of the
// most similar stored interaction (an LLM imitates the in-context demonstrations it retrieved),
// or else the best retrieved memory.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <absl/status/statusor.h>

#include "attack/attack.h"
#include "bulwark/memory_store.h"

namespace bulwark::attack {

struct Interaction {
  std::string query;      // as received
  std::string question;   // the query's first sentence
  std::string guidance;   // the rest of the query ("" if none)
  std::string reasoning;  // what the agent reasoned
  Entry record;           // the auto-stored interaction record (state says whether the gate quarantined it)
  std::vector<std::string> retrieved_ids;
};

class AutoStoringAgent {
 public:
  // `store` must outlive the agent. k: memories retrieved per query (1..1000).
  // `marker`, if set, is applied to each record before it is stored (the agent is a legitimate
  // writer: with a watermark deployment it marks what it writes, attacker-induced text included).
  AutoStoringAgent(MemoryStore* store, std::string name_space, int k = 3, std::string principal = "agent",
                   TextMarker marker = {})
      : store_(store), name_space_(std::move(name_space)), k_(k), principal_(std::move(principal)),
        marker_(std::move(marker)) {}

  // Serves one query and stores the interaction record
  //   "Question: <query>\nReasoning: <reasoning>"
  // with metadata {"kind": "interaction", "session": session, "reasoning": reasoning}. Errors: those of Search and Add.
  [[nodiscard]] absl::StatusOr<Interaction> Handle(std::string_view query, std::string_view session = "");

  // Splits a query into its first sentence (up to and including the first '?', or '.'/'!'
  // followed by a space) and the rest, both trimmed.
  static std::pair<std::string, std::string> SplitQuestion(std::string_view query);
  // The reasoning of a stored interaction record; empty if `text` is not one.
  static std::string ReasoningOf(std::string_view text);

 private:
  MemoryStore* store_;
  std::string name_space_;
  int k_;
  std::string principal_;
  TextMarker marker_;
};

}  // namespace bulwark::attack
