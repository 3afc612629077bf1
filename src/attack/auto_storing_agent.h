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
//
// The agent reaches its memory through AgentMemory, so the same loop runs in process
// (StoreAgentMemory over MemoryStore) or client-side over the HTTP API (an agent framework
// holding a reader+writer key: POST /v1/memories/search, then POST /v1/memories).
#pragma once

#include <absl/status/statusor.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "attack/attack.h"
#include "store/memory_store.h"

namespace bulwark::attack {

struct Interaction {
  std::string query;      // as received
  std::string question;   // the query's first sentence
  std::string guidance;   // the rest of the query ("" if none)
  std::string reasoning;  // what the agent reasoned
  Entry record;           // the auto-stored interaction record (state says whether the gate quarantined it)
  std::vector<std::string> retrieved_ids;
};

// The agent's memory: one namespace, searched and written as the agent's principal.
class AgentMemory {
 public:
  virtual ~AgentMemory() = default;
  // The top k hits for `query`, best first (verified; quarantined entries excluded).
  [[nodiscard]] virtual absl::StatusOr<std::vector<SearchHit>> Search(std::string_view query, int k) = 0;
  // Stores `record`; the stored entry (its state says whether the write gate quarantined it).
  [[nodiscard]] virtual absl::StatusOr<Entry> Add(const NewEntry& record) = 0;
};

// AgentMemory over a MemoryStore in process. `store` must outlive it.
class StoreAgentMemory final : public AgentMemory {
 public:
  StoreAgentMemory(MemoryStore* store, std::string name_space, std::string principal)
      : store_(store), name_space_(std::move(name_space)), principal_(std::move(principal)) {}
  absl::StatusOr<std::vector<SearchHit>> Search(std::string_view query, int k) override;
  absl::StatusOr<Entry> Add(const NewEntry& record) override;

 private:
  MemoryStore* store_;
  std::string name_space_;
  std::string principal_;
};

class AutoStoringAgent {
 public:
  // `store` must outlive the agent. k: memories retrieved per query (1..1000).
  // `marker`, if set, is applied to each record before it is stored (the agent is a legitimate
  // writer: with a watermark deployment it marks what it writes, attacker-induced text included).
  AutoStoringAgent(MemoryStore* store, std::string name_space, int k = 3, std::string principal = "agent",
                   TextMarker marker = {})
      : owned_(std::make_unique<StoreAgentMemory>(store, std::move(name_space), std::move(principal))),
        memory_(owned_.get()),
        k_(k),
        marker_(std::move(marker)) {}
  // Over any AgentMemory (e.g. the HTTP API); `memory` must outlive the agent.
  explicit AutoStoringAgent(AgentMemory* memory, int k = 3, TextMarker marker = {})
      : memory_(memory), k_(k), marker_(std::move(marker)) {}

  // Serves one query and stores the interaction record
  //   "Question: <query>\nReasoning: <reasoning>"
  // with metadata {"kind": "interaction", "session": session, "reasoning": reasoning}. Errors: those of
  // Search and Add.
  [[nodiscard]] absl::StatusOr<Interaction> Handle(std::string_view query, std::string_view session = "");

  // Splits a query into its first sentence (up to and including the first '?', or '.'/'!'
  // followed by a space) and the rest, both trimmed.
  static std::pair<std::string, std::string> SplitQuestion(std::string_view query);
  // The reasoning of a stored interaction record; empty if `text` is not one.
  static std::string ReasoningOf(std::string_view text);

 private:
  std::unique_ptr<AgentMemory> owned_;
  AgentMemory* memory_;
  int k_;
  TextMarker marker_;
};

}  // namespace bulwark::attack
