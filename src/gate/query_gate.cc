// Gate decisions and trigger stripping (see query_gate.h).
#include "gate/query_gate.h"

#include <absl/strings/str_join.h>
#include <absl/strings/str_split.h>

#include <cmath>

#include "core/status_macros.h"
#include "core/strings.h"

namespace bulwark {

std::string_view ToString(GateDecision decision) {
  switch (decision) {
    case GateDecision::kOff:
      return "off";
    case GateDecision::kNoGate:
      return "no_gate";
    case GateDecision::kPass:
      return "pass";
    case GateDecision::kFlag:
      return "flag";
    case GateDecision::kEscalate:
      return "escalate";
    case GateDecision::kReject:
      return "reject";
    case GateDecision::kStrip:
      return "strip";
  }
  return "unknown";
}

std::optional<GateDecision> ParseGateDecision(std::string_view name) {
  for (int i = 0; i < kGateDecisionCount; ++i) {
    if (ToString(static_cast<GateDecision>(i)) == name) return static_cast<GateDecision>(i);
  }
  return std::nullopt;
}

std::string_view ToString(GateMode mode) {
  switch (mode) {
    case GateMode::kOff:
      return "off";
    case GateMode::kFlag:
      return "flag";
    case GateMode::kEscalate:
      return "escalate";
    case GateMode::kReject:
      return "reject";
    case GateMode::kStrip:
      return "strip";
  }
  return "?";
}

std::optional<GateMode> ParseGateMode(std::string_view name) {
  for (GateMode m :
       {GateMode::kOff, GateMode::kFlag, GateMode::kEscalate, GateMode::kReject, GateMode::kStrip}) {
    if (name == ToString(m)) return m;
  }
  return std::nullopt;
}

int Strictness(GateMode mode) {
  switch (mode) {
    case GateMode::kOff:
      return 0;
    case GateMode::kFlag:
      return 1;
    case GateMode::kEscalate:
    case GateMode::kStrip:
      return 2;
    case GateMode::kReject:
      return 3;
  }
  return 0;
}

nlohmann::json ToJson(const GateVerdict& v) {
  nlohmann::json j = {{"mode", ToString(v.mode)}, {"decision", ToString(v.decision)}, {"flagged", v.flagged}};
  if (v.score_kind) {
    j["score_kind"] = ToString(*v.score_kind);
    j["score"] = v.score;
    j["threshold"] = v.threshold;
  }
  if (v.scores) {
    nlohmann::json scores = nlohmann::json::object();
    for (GateScore g : {GateScore::kCentroid, GateScore::kMahalanobis, GateScore::kLda}) {
      const double s = (*v.scores)[g];
      if (!std::isnan(s)) scores[std::string(ToString(g))] = s;
    }
    j["scores"] = scores;
  }
  if (v.decision == GateDecision::kStrip) {
    j["removed_tokens"] = v.removed_tokens;
    j["score_after"] = v.score_after;
    j["still_flagged"] = v.still_flagged;
  }
  return j;
}

absl::StatusOr<GateVerdict> QueryGate::Evaluate(std::string_view query, std::span<const float> embedding,
                                                GateMode mode) const {
  GateVerdict v;
  v.mode = mode;
  if (mode == GateMode::kOff) return v;
  if (model_ == nullptr) {
    v.decision = GateDecision::kNoGate;
    return v;
  }
  const GateScore kind = model_->decision_score();
  v.score_kind = kind;
  v.scores = model_->Score(embedding);
  v.score = (*v.scores)[kind];
  v.threshold = model_->threshold(kind);
  v.flagged = v.score > v.threshold;
  if (!v.flagged) {
    v.decision = GateDecision::kPass;
    return v;
  }
  switch (mode) {
    case GateMode::kOff:
      break;
    case GateMode::kFlag:
      v.decision = GateDecision::kFlag;
      break;
    case GateMode::kEscalate:
      v.decision = GateDecision::kEscalate;
      break;
    case GateMode::kReject:
      v.decision = GateDecision::kReject;
      break;
    case GateMode::kStrip:
      if (auto s = Strip(query, &v); !s.ok()) return s;
      break;
  }
  return v;
}

absl::Status QueryGate::Strip(std::string_view query, GateVerdict* v) const {
  std::vector<std::string> tokens =
      absl::StrSplit(ToAbsl(query), absl::ByAnyChar(" \t\r\n"), absl::SkipEmpty());
  if (static_cast<int>(tokens.size()) > strip_.max_tokens) {
    v->decision = GateDecision::kReject;  // too long to localize a trigger in; refusing is the safe answer
    return absl::OkStatus();
  }
  const GateScore kind = *v->score_kind;
  double current = v->score;
  for (int round = 0; round < strip_.max_removals && current > v->threshold && tokens.size() > 1; ++round) {
    // Score the query with each token deleted in turn; keep the deletion that lowers it most.
    std::vector<std::string> variants;
    variants.reserve(tokens.size());
    for (size_t drop = 0; drop < tokens.size(); ++drop) {
      std::vector<std::string> kept;
      for (size_t i = 0; i < tokens.size(); ++i) {
        if (i != drop) kept.push_back(tokens[i]);
      }
      variants.push_back(absl::StrJoin(kept, " "));
    }
    BULWARK_ASSIGN_OR_RETURN(auto embedded, embedder_->EmbedBatch(variants));
    size_t best = 0;
    double best_score = INFINITY;
    for (size_t i = 0; i < variants.size(); ++i) {
      const double s = model_->ScoreOf(kind, embedded[i]);
      if (s < best_score) {
        best_score = s;
        best = i;
      }
    }
    if (!(best_score < current)) break;  // no deletion helps: stop rather than mangle the query
    v->removed_tokens.push_back(tokens[best]);
    tokens.erase(tokens.begin() + static_cast<std::ptrdiff_t>(best));
    current = best_score;
  }
  v->decision = GateDecision::kStrip;
  v->cleaned_query = absl::StrJoin(tokens, " ");
  v->score_after = current;
  v->still_flagged = current > v->threshold;
  return absl::OkStatus();
}

}  // namespace bulwark
