// The built-in extractive responder (see extractive_responder.h).
#include "smoothing/extractive_responder.h"

namespace bulwark {

std::string ClaimOf(const Entry& entry) {
  auto claim = entry.metadata.find("claim");
  if (claim != entry.metadata.end() && claim->is_string() && !claim->get<std::string>().empty()) {
    return claim->get<std::string>();
  }
  return entry.text;
}

absl::StatusOr<std::string> ExtractiveResponder::Respond(std::string_view,
                                                         std::span<const SearchHit* const> context) const {
  if (context.empty()) return absl::InvalidArgumentError("no memories to answer from");
  const SearchHit* best = context.front();
  for (const SearchHit* hit : context) {
    if (hit->score > best->score || (hit->score == best->score && hit->entry.id < best->entry.id)) best = hit;
  }
  return ClaimOf(best->entry);
}

}  // namespace bulwark
