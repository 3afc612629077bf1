// StoreExtractionTarget (see extraction_target.h).
#include "attack/extraction/extraction_target.h"

#include "core/status_macros.h"

namespace bulwark::extraction {

absl::StatusOr<std::vector<RetrievedText>> StoreExtractionTarget::Query(std::string_view session,
                                                                        std::string_view query, int k) {
  SearchOptions options;
  options.k = k;
  options.record_query = record_queries_;
  BULWARK_ASSIGN_OR_RETURN(SearchResult result, store_->Search(name_space_, query, options));
  std::vector<RetrievedText> hits;
  hits.reserve(result.hits.size());
  for (SearchHit& hit : result.hits) {
    hits.push_back({std::move(hit.entry.id), std::move(hit.entry.text), hit.score});
  }
  return hits;
}

}  // namespace bulwark::extraction
