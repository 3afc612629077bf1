// ExtractiveResponder: answers with the claim of the most relevant entry of the run (highest
// retrieval score; ties go to the smaller id). The claim is the entry's metadata "claim" when that
// is a non-empty string, else its text. Deterministic and free: for tests, benchmarks and
// evaluation without an LLM. It models an agent that trusts its single best memory, which is
// exactly what a retrieval-time poisoning attack targets.
#pragma once

#include "smoothing/responder.h"

namespace bulwark {

class ExtractiveResponder final : public Responder {
 public:
  std::string_view name() const override { return "extractive"; }
  [[nodiscard]] absl::StatusOr<std::string> Respond(std::string_view question,
                                                    std::span<const SearchHit* const> context) const override;
};

// The claim of an entry as ExtractiveResponder reads it.
std::string ClaimOf(const Entry& entry);

}  // namespace bulwark
