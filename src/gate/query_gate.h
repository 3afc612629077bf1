// QueryGate: the query OOD gate of QOE (Sec. 3.2-3.3; DESIGN 4.6) applied to one query. It scores
// the query's embedding with a fitted GateModel, compares the decision score with its threshold,
// and turns the outcome into a decision under a mode:
//
//   off       the gate is not consulted                              decision "off"
//   flag      a flagged query is retrieved as usual, marked flagged  "pass" | "flag"
//   escalate  a flagged query is retrieved with k_high instead of k, with smoothing on
//                                                                    "pass" | "escalate"
//   reject    a flagged query is refused                             "pass" | "reject"
//   strip     the tokens whose deletion lowers the score most are removed one at a time
//             (trigger localization) until the score is at or below the threshold, then the
//             cleaned query is retrieved                             "pass" | "strip"
//
// A namespace without a fitted gate gets decision "no_gate" (the query passes). The verdict, with
// every score, goes into the search response and the audit record.
#pragma once

#include <absl/status/statusor.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bulwark/embedder.h"
#include "gate/gate_model.h"

namespace bulwark {

enum class GateMode { kOff, kFlag, kEscalate, kReject, kStrip };
std::string_view ToString(GateMode mode);  // "off", "flag", "escalate", "reject", "strip"
std::optional<GateMode> ParseGateMode(std::string_view name);
// How much a mode restricts a flagged query: off 0 < flag 1 < escalate = strip 2 < reject 3. A
// caller without the admin role may choose a mode only at least as strict as the namespace policy.
int Strictness(GateMode mode);

// What the gate decided for one query: a closed set, GateVerdict::decision, named by ToString in
// responses, audit records and the /metrics label.
enum class GateDecision { kOff, kNoGate, kPass, kFlag, kEscalate, kReject, kStrip };
constexpr int kGateDecisionCount = 7;
std::string_view ToString(GateDecision decision);  // "off", "no_gate", "pass", ...
// The decision named `name`; nullopt for any other string.
std::optional<GateDecision> ParseGateDecision(std::string_view name);

struct GateVerdict {
  GateMode mode = GateMode::kOff;
  GateDecision decision = GateDecision::kOff;
  bool flagged = false;  // the decision score of the (original) query is above threshold
  std::optional<GateScore> score_kind;
  double score = 0;  // decision score of the original query
  double threshold = 0;
  std::optional<GateScores> scores;
  // strip only:
  std::string cleaned_query;
  std::vector<std::string> removed_tokens;  // in the order they were removed
  double score_after = 0;                   // decision score of the cleaned query
  bool still_flagged = false;               // the cleaned query is still above threshold

  bool rejected() const { return decision == GateDecision::kReject; }
};

// {"mode", "decision", "flagged", "score_kind", "score", "threshold", "scores": {...},
//  + for strip: "removed_tokens", "score_after", "still_flagged"}. The cleaned query is left out
// (the audit log never keeps query text); the caller adds it to responses.
nlohmann::json ToJson(const GateVerdict& verdict);

struct StripOptions {
  int max_removals = 8;  // tokens removed at most; 1 .. 64
  int max_tokens = 128;  // queries with more whitespace tokens are not stripped (rejected instead)
};

class QueryGate {
 public:
  // `model` may be null (no gate fitted); `embedder` must be the store's and outlive the gate.
  QueryGate(std::shared_ptr<const GateModel> model, const Embedder* embedder, StripOptions strip = {})
      : model_(std::move(model)), embedder_(embedder), strip_(strip) {}

  // Decides for `query` with embedding `embedding` under `mode`. In strip mode a flagged query is
  // stripped (embedding its variants; at least one token is kept); a query with more than
  // max_tokens tokens is rejected instead. Errors only from the embedder.
  [[nodiscard]] absl::StatusOr<GateVerdict> Evaluate(std::string_view query, std::span<const float> embedding,
                                                     GateMode mode) const;

  const GateModel* model() const { return model_.get(); }

 private:
  absl::Status Strip(std::string_view query, GateVerdict* verdict) const;

  std::shared_ptr<const GateModel> model_;
  const Embedder* embedder_;
  StripOptions strip_;
};

}  // namespace bulwark
