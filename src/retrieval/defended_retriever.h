// DefendedRetriever: the read path of DESIGN 3 with the read-time defenses layered on top of
// MemoryStore::Search (DESIGN 4.6):
//
//   embed the query once -> QueryGate (QOE: off | flag | escalate | reject | strip)
//     -> MemoryStore::Search with k, or k_high when escalated, over-fetching m when smoothing
//     -> Smoother (SMSR Component 2: nruns uniform k-subsets, responder, equivalence majority,
//        certificate), when asked for or escalated
//
// The query's embedding enters the namespace's query history (MemoryStore::Search, the history
// MemSAD and `gate fit --from-history` use) only if the gate did not flag it.
//
// It knows nothing of HTTP or the command line: the search and answer routes and the CLI commands
// call it and render the result. Thread-safe (as the store, registry and LLM client are).
#pragma once

#include <absl/status/statusor.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "bulwark/env.h"
#include "core/seeded_csprng.h"
#include "gate/gate_registry.h"
#include "gate/query_gate.h"
#include "llm/chat_client.h"
#include "retrieval/honeypot_guard.h"
#include "smoothing/responder.h"
#include "smoothing/smoother.h"
#include "store/memory_store.h"

namespace bulwark {

struct DefendedSearchRequest {
  std::string name_space;
  std::string query;
  SearchOptions search;  // k is k_low: the hits returned unless escalated
  // The gate mode; nullopt means the namespace's policy (off without a fitted gate).
  std::optional<GateMode> gate_mode;
  // Callers that may choose a mode less strict than the namespace policy (admins). Others get
  // PermissionDenied for that.
  bool may_weaken_gate = false;
  // Hits returned when the gate escalates; 0 means 2k. k .. 1000.
  int k_high = 0;
  // Smoothing; also switched on (with these options, or the defaults) when the gate escalates.
  std::optional<SmoothingOptions> smoothing;
  ResponderKind responder = ResponderKind::kExtractive;
  // The subsets' seed; by default a fresh one from the Env's CSPRNG. Callers must not let an
  // untrusted client choose it (it could search for seeds that favour its entries).
  std::optional<SeededCsprng::Seed> seed;
  // Who searches, for the honeypot monitor (HoneypotGuard): the principal's name and the
  // X-Bulwark-Session (may be empty). With no principal the guard is not consulted.
  std::string principal;
  std::string session;
};

// Where one search spent its time (seconds; /metrics histograms by stage). `index` is the store's
// ranking (vector scan, and lexical ranking and fusion for hybrid); `verify` reading the candidate
// rows back and checking their tags. A stage that did not run is 0.
struct SearchStageTimes {
  double embed = 0;
  double gate = 0;
  double index = 0;
  double verify = 0;
  double observe = 0;  // the honeypot monitor's observation
  double smooth = 0;
};

struct DefendedSearchResult {
  SearchStageTimes stages;
  GateVerdict gate;
  std::string retrieved_query;  // what retrieval used: the cleaned query after strip
  int k = 0;                    // hits asked for (k_high when escalated)
  SearchResult search;          // verified hits (never honeypots); empty when rejected
  std::optional<SmoothedAnswer> smoothed;
  // The honeypot monitor's verdict on this search (set when a guard observed it). Internal, for
  // evaluations: never rendered to a caller (the statistic would be an oracle for the pots).
  std::optional<honeypot::MonitorVerdict> honeypot;
  bool rejected() const { return gate.rejected(); }
};

// For responses and audit records: {"gate": ..., "k": ..., "smoothing": {... certificate ...}}
// (never the query text: the audit log keeps only its hash).
nlohmann::json DefenseDetail(const DefendedSearchResult& result);

class DefendedRetriever {
 public:
  // `store` is required; `gates` and `llm` may be null (no gates; no LLM responder or judge).
  // All must outlive the retriever. `env` null means Env::Default().
  DefendedRetriever(MemoryStore* store, GateRegistry* gates, const ChatClient* llm, Env* env = nullptr);

  // Runs the read path above. A query the gate rejects is not an error: the result says so
  // (rejected()) and has no hits, so the caller can audit it before refusing. Errors:
  //   InvalidArgument     bad query, k, k_high or smoothing options; unknown responder
  //   PermissionDenied    a gate mode weaker than the namespace policy without may_weaken_gate;
  //                       "session_blocked" for a caller the honeypot monitor blocked (block mode)
  //   FailedPrecondition  responder "llm" without an LLM; a gate fitted under another embedder
  //   DataLoss            a damaged stored gate
  //   and the errors of Search, the embedder, the responder and the judge.
  [[nodiscard]] absl::StatusOr<DefendedSearchResult> Search(const DefendedSearchRequest& request);

  bool has_llm() const { return llm_ != nullptr; }
  // The MemPot guard (null: none). Set before serving; not owned, must outlive the retriever.
  // With a guard, a blocked caller gets PermissionDenied("session_blocked") before any retrieval,
  // and every search's observation feeds the monitor after retrieval (results are unchanged).
  void SetHoneypotGuard(HoneypotGuard* guard) { guard_ = guard; }
  HoneypotGuard* honeypot_guard() const { return guard_; }

 private:
  MemoryStore* store_;
  GateRegistry* gates_;
  const ChatClient* llm_;
  Env* env_;
  HoneypotGuard* guard_ = nullptr;
};

}  // namespace bulwark
