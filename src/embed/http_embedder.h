// HttpEmbedder: embeddings from any OpenAI-compatible endpoint. It POSTs
//   {url}/v1/embeddings   {"model": model, "input": [text, ...]}
// with "Authorization: Bearer <api_key>" when a key is configured, expects
//   {"data": [{"index": i, "embedding": [float, ...]}, ...], ...}
// and returns the vectors L2-normalized. Batches of up to batch_size texts go in one request;
// connection failures, 429 and 5xx are retried with exponential backoff.
#pragma once

#include <absl/status/statusor.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bulwark/embedder.h"

namespace bulwark {

struct HttpEmbedderOptions {
  // Base URL, "http://host[:port][/prefix]" or "https://...". Required. The request goes to
  // prefix + "/v1/embeddings".
  std::string url;
  // Model name sent in every request. Required, non-empty.
  std::string model;
  // Dimension the endpoint returns; every vector is checked against it. Required, 1..65536.
  int dimension = 0;
  // Bearer token; empty sends no Authorization header. Never part of the fingerprint.
  std::string api_key;
  // Texts per request, 1..4096. Default 64.
  int batch_size = 64;
  // Connect, read and write timeout of each request in milliseconds, 1..600000. Default 10000.
  int timeout_ms = 10000;
  // Retries after the first attempt, on connection errors, 429 and 5xx; 0..10. Default 3.
  int max_retries = 3;
  // Wait before the first retry in milliseconds, doubled for each further retry; 0..60000.
  // Default 200.
  int initial_backoff_ms = 200;
};

class HttpEmbedder final : public Embedder {
 public:
  // Validates `options`. Errors: InvalidArgument naming the bad field (missing url/model, a URL
  // that is not http(s)://host[:port][/prefix], a value out of range).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<HttpEmbedder>> Create(HttpEmbedderOptions options);

  // Builds options from an embedder config {"kind": "http", "url", "model", "dimension",
  // optional "api_key" or "api_key_env" (name of an environment variable holding the key),
  // "batch_size", "timeout_ms", "max_retries", "initial_backoff_ms"}, then calls Create().
  // Errors: InvalidArgument for a missing, mistyped or unknown field, for both "api_key" and
  // "api_key_env", or for an "api_key_env" variable that is unset or empty.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<HttpEmbedder>> FromConfig(const nlohmann::json& config);

  int dimension() const override { return options_.dimension; }

  // name "http", the configured dimension, config_hash = SHA-256 hex of the canonical JSON
  // {"dimension": d, "model": m, "url": u}.
  EmbedderFingerprint Fingerprint() const override { return fingerprint_; }

  // One request with one input. Same errors as EmbedBatch.
  [[nodiscard]] absl::StatusOr<std::vector<float>> Embed(std::string_view text) const override;

  // ceil(n / batch_size) requests, in order; all-or-nothing. An empty span makes no request.
  // Errors:
  //   Unavailable        connection failure or 5xx, still failing after max_retries retries
  //   ResourceExhausted  429, still after max_retries retries
  //   DeadlineExceeded   no response within timeout_ms (not retried)
  //   PermissionDenied   401 or 403
  //   InvalidArgument    another 4xx (e.g. the endpoint rejects an input as too long)
  //   DataLoss           a 200 whose body is not the expected JSON: not parseable, wrong number
  //                      of items, a missing/duplicate/out-of-range "index", a vector whose
  //                      length differs from dimension, a non-finite or non-numeric entry
  //   Internal           any other HTTP status
  // Thread-safe: each call uses its own connection.
  [[nodiscard]] absl::StatusOr<std::vector<std::vector<float>>> EmbedBatch(
      std::span<const std::string> texts) const override;

 private:
  explicit HttpEmbedder(HttpEmbedderOptions options);

  HttpEmbedderOptions options_;
  EmbedderFingerprint fingerprint_;
};

}  // namespace bulwark
