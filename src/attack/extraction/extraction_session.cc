// AttackSession accounting and SessionRecorder (see extraction_session.h).
#include "attack/extraction/extraction_session.h"

#include <absl/strings/str_cat.h>

namespace bulwark::extraction {

absl::Status ValidateBudget(const AttackBudget& budget) {
  if (budget.queries < 1 || budget.queries > 100000) {
    return absl::InvalidArgumentError(absl::StrCat("queries must be in 1..100000, got ", budget.queries));
  }
  if (budget.k < 1 || budget.k > 1000) {
    return absl::InvalidArgumentError(absl::StrCat("k must be in 1..1000, got ", budget.k));
  }
  return absl::OkStatus();
}

size_t AttackSession::UniqueHits() const { return UniqueHitsAfter(steps.size()); }

size_t AttackSession::UniqueHitsAfter(size_t rounds) const {
  absl::flat_hash_set<std::string_view> ids;
  for (size_t i = 0; i < rounds && i < steps.size(); ++i) {
    for (const RetrievedText& hit : steps[i].hits) ids.insert(hit.id);
  }
  return ids.size();
}

size_t AttackSession::RefusedSteps() const {
  size_t n = 0;
  for (const AttackStep& step : steps) n += step.refused ? 1 : 0;
  return n;
}

SessionRecorder::SessionRecorder(ExtractionTarget* target, std::string attack, std::string session, int k)
    : target_(target), k_(k) {
  session_.attack = std::move(attack);
  session_.session = std::move(session);
}

absl::StatusOr<const AttackStep*> SessionRecorder::Send(std::string query, std::string source_id) {
  AttackStep step;
  absl::StatusOr<std::vector<RetrievedText>> hits = target_->Query(session_.session, query, k_);
  if (hits.ok()) {
    step.hits = *std::move(hits);
  } else if (hits.status().code() == absl::StatusCode::kPermissionDenied) {
    step.refused = true;
  } else {
    return hits.status();
  }
  step.query = std::move(query);
  step.source_id = std::move(source_id);
  session_.steps.push_back(std::move(step));
  new_hits_.clear();
  for (const RetrievedText& hit : session_.steps.back().hits) {
    if (seen_.insert(hit.id).second) new_hits_.push_back(&hit);
  }
  return &session_.steps.back();
}

}  // namespace bulwark::extraction
