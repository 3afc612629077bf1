// HttpExtractionTarget: the extraction attacker as a remote client of `bulwark serve` with an
// ordinary reader key (doc/api.md): every query is
//   POST {url}/v1/memories/search  {"namespace": NS, "query": Q, "k": K}
//   Authorization: Bearer <key>    X-Bulwark-Session: <session>
// and the hits' id, text and score are read from the answer, best first. One keep-alive
// connection; not thread-safe (one target per thread).
#pragma once

#include <absl/status/statusor.h>

#include <memory>
#include <string>

#include "attack/extraction/extraction_target.h"
#include "net/base_url.h"

namespace httplib {
class Client;
}

namespace bulwark::extraction {

struct HttpTargetOptions {
  std::string url;         // "http://127.0.0.1:8420" (a path prefix is allowed); required
  std::string api_key;     // bwk_...; required
  std::string name_space;  // required
  int timeout_ms = 10000;  // per request, 1 .. 600000
  // Answers 429 are retried after their Retry-After (at most max_retry_wait_ms each), this often.
  int max_retries = 3;  // 0 .. 10
  int max_retry_wait_ms = 2000;
};

class HttpExtractionTarget final : public ExtractionTarget {
 public:
  // InvalidArgument for a bad URL, an empty key or namespace, or a value out of range.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<HttpExtractionTarget>> Create(
      HttpTargetOptions options);
  ~HttpExtractionTarget() override;

  // Errors, by answer: 403 -> PermissionDenied (query_rejected, session_blocked, forbidden; the
  // message carries the answer's error code); 400 -> InvalidArgument; 401 -> Unauthenticated; 404
  // -> NotFound; 429 after the retries -> ResourceExhausted; 5xx or no answer -> Unavailable; a 200
  // whose body is not a search answer (or holds more than k hits) -> DataLoss.
  [[nodiscard]] absl::StatusOr<std::vector<RetrievedText>> Query(std::string_view session,
                                                                 std::string_view query, int k) override;

 private:
  HttpExtractionTarget(HttpTargetOptions options, BaseUrl url);

  HttpTargetOptions options_;
  BaseUrl url_;
  std::unique_ptr<httplib::Client> client_;
};

}  // namespace bulwark::extraction
