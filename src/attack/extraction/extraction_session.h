// The common loop of the extraction attacks (research/mempot.md Sec. 4): for t = 1..T, build the
// next query from what came back so far, send it through the ExtractionTarget, record the answer.
// An attack is an ExtractionAttack; what it produces is an AttackSession (the ordered queries it
// sent and what came back), the unit that the attack log (attack_log.h) stores and that MemPot's
// session monitor scores.
//
// What counts as extracted (research/mempot.md Sec. 4 item 7): the search API returns memory
// texts verbatim, so a memory id returned to the session is extracted. Leakage of a session is the
// number of unique ids returned to it.
#pragma once

#include <absl/container/flat_hash_set.h>
#include <absl/status/statusor.h>

#include <string>
#include <string_view>
#include <vector>

#include "attack/extraction/extraction_target.h"
#include "core/seeded_csprng.h"
#include "embed/string_view_hash.h"

namespace bulwark::extraction {

struct AttackBudget {
  int queries = 64;  // T: rounds (MemPot Sec. 5.3 runs 64-round attacks); 1 .. 100000
  int k = 4;         // hits per query (MemPot: top-4 external, top-3/4 internal); 1 .. 1000
};

// InvalidArgument naming the field if `budget` is out of range.
[[nodiscard]] absl::Status ValidateBudget(const AttackBudget& budget);

// One round.
struct AttackStep {
  std::string query;
  std::vector<RetrievedText> hits;  // best first; empty when refused
  bool refused = false;             // the target answered PermissionDenied
  // The memory this query was built from (RAG-Thief's chunk, IKEA's mutation source, a benign
  // follow-up's previous top hit); empty for a query built without one.
  std::string source_id;
};

struct AttackSession {
  std::string attack;   // generator name: "mextra_general", ..., "benign"
  std::string session;  // the session id sent with every query
  std::vector<AttackStep> steps;

  // Unique memory ids returned over all steps (the session's leakage).
  size_t UniqueHits() const;
  // The same after the first `steps` rounds only.
  size_t UniqueHitsAfter(size_t steps) const;
  size_t RefusedSteps() const;
};

class ExtractionAttack {
 public:
  virtual ~ExtractionAttack() = default;
  // Log name, e.g. "mextra_general", "dgea", "rag_thief", "ikea".
  virtual std::string_view Name() const = 0;
  // Runs one session of budget.queries rounds against `target` under session id `session`,
  // drawing all randomness from `rng` (deterministic for a seed when the target is). Refused
  // rounds are recorded and the attack goes on. Errors: InvalidArgument for a bad budget; a
  // target error other than PermissionDenied (the session so far is lost); an LLM error on the LLM
  // path.
  [[nodiscard]] virtual absl::StatusOr<AttackSession> Run(ExtractionTarget& target, std::string_view session,
                                                          const AttackBudget& budget, SeededCsprng& rng) = 0;
};

// Sends the queries of one session and records them; what every attack's loop uses.
class SessionRecorder {
 public:
  SessionRecorder(ExtractionTarget* target, std::string attack, std::string session, int k);

  // Sends `query` and appends the step. Returns the recorded step (valid until the next Send).
  // PermissionDenied from the target is recorded as a refused step (not an error); other target
  // errors are returned and nothing is recorded.
  [[nodiscard]] absl::StatusOr<const AttackStep*> Send(std::string query, std::string source_id = "");

  // Whether `id` was returned to this session before (including by the last Send).
  bool Seen(std::string_view id) const { return seen_.contains(id); }
  // The hits of the last Send that no earlier step had returned, best first.
  const std::vector<const RetrievedText*>& new_hits() const { return new_hits_; }
  size_t rounds() const { return session_.steps.size(); }
  const AttackSession& session() const { return session_; }
  AttackSession Finish() && { return std::move(session_); }

 private:
  ExtractionTarget* target_;
  int k_;
  AttackSession session_;
  absl::flat_hash_set<std::string, StringViewHash, StringViewEq> seen_;
  std::vector<const RetrievedText*> new_hits_;  // into session_.steps.back()
};

}  // namespace bulwark::extraction
