// The benign-session simulator: sessions of an ordinary user of the same memory, the negatives
// against which MemPot's session test (and any extraction detector) is scored (research/mempot.md
// Sec. 5.5; the LLM-free stand-in for MemPot's user proxy, App. A). It deliberately includes the
// hard negatives, benign behaviour that resembles extraction:
//   follow-ups  a question on a salient word of the previous answer's top memory ("What else do I
//               have about {word}?"), which walks the memory like IKEA and RAG-Thief do
//   broad       "what's on my plate" questions that match many memories at once
//   briefings   morning-briefing sessions that go through every category in turn
// Two kinds of session: a persona session (1-2 categories; each turn a follow-up with probability
// follow_up_probability, else a broad question with probability broad_probability, else a
// category question, after a pivot to the persona's other category with probability
// pivot_probability) and,
// with probability briefing_probability, a briefing session (every third turn the briefing
// question of the next category, the other turns category questions or follow-ups). Category
// questions come from benign query files (data/corpora/benign_queries.jsonl), each category's in a
// shuffled order; a follow-up with no previous answer asks about a salient word of a memory of the
// current category from the memory corpus (data/corpora/benign_memories.jsonl), if one is given.
#pragma once

#include <absl/status/statusor.h>

#include <map>
#include <string>
#include <vector>

#include "attack/extraction/extraction_session.h"

namespace bulwark::extraction {

struct BenignCorpus {
  // category -> queries, from query files ({"query": "...", "category": "..."}; a line without a
  // category counts as "general").
  std::map<std::string, std::vector<std::string>> queries;
  // category -> memory texts ({"text": "...", "metadata": {"category": "..."}}); may be empty.
  std::map<std::string, std::vector<std::string>> memories;
};

// Reads the query files and, if `memories_file` is not empty, the memory corpus. Errors: NotFound
// for a file that cannot be read; InvalidArgument naming file and line for a line that is not such
// an object, a line over 1 MiB, or no query at all; ResourceExhausted for a file over 256 MiB.
[[nodiscard]] absl::StatusOr<BenignCorpus> LoadBenignCorpus(const std::vector<std::string>& query_files,
                                                            const std::string& memories_file);

struct BenignSessionOptions {
  double follow_up_probability = 0.3;  // research/mempot.md Sec. 5.5
  double pivot_probability = 0.2;
  double broad_probability = 0.1;
  double briefing_probability = 0.2;  // share of sessions that are morning briefings
};

// Follow-up and broad question templates (exposed for tests).
const std::vector<std::string>& FollowUpTemplates();  // "{w}" marks the word
const std::vector<std::string>& BroadQuestions();

class BenignSessionSimulator final : public ExtractionAttack {
 public:
  // InvalidArgument if the corpus has no query or a probability is outside [0, 1].
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<BenignSessionSimulator>> Create(
      BenignCorpus corpus, BenignSessionOptions options);

  std::string_view Name() const override { return "benign"; }

  // One session of budget.queries turns (8 and 64 in the evaluation). A follow-up's step carries
  // the id of the memory it follows up on in source_id.
  [[nodiscard]] absl::StatusOr<AttackSession> Run(ExtractionTarget& target, std::string_view session,
                                                  const AttackBudget& budget, SeededCsprng& rng) override;

 private:
  struct State;  // one session's cursors (benign_session.cc)
  BenignSessionSimulator(BenignCorpus corpus, BenignSessionOptions options);
  std::string CategoryQuestion(State& state, const std::string& category, SeededCsprng& rng) const;
  // A follow-up on the last answer's top memory (or on a corpus memory of `category`); "" if none.
  std::string FollowUp(const AttackStep* last, const std::string& category, SeededCsprng& rng,
                       std::string* source) const;

  BenignCorpus corpus_;
  BenignSessionOptions options_;
  std::vector<std::string> categories_;  // with at least one query, sorted
};

// The briefing question of a category ("What's on my calendar today?" for calendar_events).
std::string BriefingQuestion(const std::string& category);

}  // namespace bulwark::extraction
