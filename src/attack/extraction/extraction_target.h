// ExtractionTarget: what an extraction attacker (MemPot paper Sec. 3.1; research/mempot.md Sec. 4)
// can do with an ordinary reader key: send a query in a session and read the memories that come
// back, in rank order, with the score the public search API reports. Every extraction attack and
// the benign-session simulator talk to the store only through this interface, so the same attack
// runs in process (StoreExtractionTarget, over MemoryStore::Search) and against a running server
// (HttpExtractionTarget, over POST /v1/memories/search).
#pragma once

#include <absl/status/statusor.h>

#include <string>
#include <string_view>
#include <vector>

#include "store/memory_store.h"

namespace bulwark::extraction {

// One returned memory, as a caller sees it.
struct RetrievedText {
  std::string id;
  std::string text;
  float score = 0;  // cosine with the query, as the search API reports it
};

class ExtractionTarget {
 public:
  virtual ~ExtractionTarget() = default;

  // Sends `query` as part of `session` (the X-Bulwark-Session a client would send) and returns
  // the top `k` memories, best first. Errors:
  //   PermissionDenied  the store refused the query or the session (blocked session, query gate
  //                     in reject mode); attacks record such a round as refused and go on
  //   InvalidArgument   a query or k the API does not take
  //   anything else     the target failed (unreachable server, broken store); attacks stop
  [[nodiscard]] virtual absl::StatusOr<std::vector<RetrievedText>> Query(std::string_view session,
                                                                         std::string_view query, int k) = 0;
};

// The in-process target: MemoryStore::Search over one namespace (active memories only, no
// filter). The session is not used (the library search has no session monitor yet). Searches are
// recorded in the namespace's query history like any other search unless `record_queries` is
// false.
class StoreExtractionTarget final : public ExtractionTarget {
 public:
  // `store` is not owned and must outlive the target.
  StoreExtractionTarget(MemoryStore* store, std::string name_space, bool record_queries = true)
      : store_(store), name_space_(std::move(name_space)), record_queries_(record_queries) {}

  // Errors: those of MemoryStore::Search (InvalidArgument for k outside 1..1000 or a bad query).
  [[nodiscard]] absl::StatusOr<std::vector<RetrievedText>> Query(std::string_view session,
                                                                 std::string_view query, int k) override;

 private:
  MemoryStore* store_;
  std::string name_space_;
  bool record_queries_;
};

}  // namespace bulwark::extraction
