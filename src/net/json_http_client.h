// JsonHttpClient: POSTs JSON to an OpenAI-compatible service (embeddings, chat completions) over one
// keep-alive connection, with a per-request timeout, bounded retries with exponential backoff, and
// one mapping from HTTP outcomes to canonical status codes. Used by HttpEmbedder and ChatClient.
//
// Also here: the connection settings both clients share and how they are read from a JSON config.
#pragma once

#include <absl/status/status.h>
#include <absl/status/statusor.h>

#include <initializer_list>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "net/base_url.h"

namespace httplib {
class Client;
}

namespace bulwark {

struct HttpEndpointOptions {
  // Base URL, "http://host[:port][/prefix]" or "https://...". Required.
  std::string url;
  // Bearer token; empty sends no Authorization header. Never appears in an error message.
  std::string api_key;
  // Connect, read and write timeout of each request in milliseconds, 1..600000.
  int timeout_ms = 10000;
  // Retries after the first attempt, on connection errors, 429 and 5xx; 0..10.
  int max_retries = 3;
  // Wait before the first retry in milliseconds, doubled for each further retry; 0..60000.
  int initial_backoff_ms = 200;
};

// Checks every field of `options`. InvalidArgument naming the field, prefixed with `who`.
[[nodiscard]] absl::Status ValidateEndpointOptions(const HttpEndpointOptions& options, std::string_view who);

// Reads the endpoint fields of a client config into `options`: "url", "api_key" or "api_key_env"
// (the name of an environment variable holding the key), "timeout_ms", "max_retries",
// "initial_backoff_ms". Absent fields keep their value. InvalidArgument (prefixed with `who`) for
// a mistyped or out-of-range field, both "api_key" and "api_key_env", or an unset/empty variable.
[[nodiscard]] absl::Status ReadEndpointConfig(const nlohmann::json& config, std::string_view who,
                                              HttpEndpointOptions* options);

// Helpers for the other fields of a client config; each leaves *out alone when the key is absent.
// InvalidArgument (prefixed with `who`) for a value of the wrong type or outside [lo, hi].
[[nodiscard]] absl::Status ReadConfigInt(const nlohmann::json& config, const char* key, int lo, int hi,
                                         std::string_view who, int* out);
[[nodiscard]] absl::Status ReadConfigDouble(const nlohmann::json& config, const char* key, double lo,
                                            double hi, std::string_view who, double* out);
[[nodiscard]] absl::Status ReadConfigString(const nlohmann::json& config, const char* key,
                                            std::string_view who, std::string* out);
// InvalidArgument (prefixed with `who`) if `config` is not an object or has a key not in `known`.
[[nodiscard]] absl::Status CheckConfigKeys(const nlohmann::json& config,
                                           std::initializer_list<const char*> known, std::string_view who);

// A keep-alive httplib client for `url` (its scheme, host and port) with `timeout_ms` for
// connecting, reading and writing each, and TCP_NODELAY (requests are small and latency-bound).
std::unique_ptr<httplib::Client> MakeKeepAliveClient(const BaseUrl& url, int timeout_ms);

class JsonHttpClient {
 public:
  // Validates `options` (see ValidateEndpointOptions). `who` prefixes every error message
  // ("http embedder", "chat client").
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<JsonHttpClient>> Create(
      const HttpEndpointOptions& options, std::string who);
  ~JsonHttpClient();

  // POSTs `body` (JSON text) to prefix + `path` and returns the body of a 200 answer. Errors:
  //   Unavailable        connection failure or 5xx, still failing after max_retries retries
  //   ResourceExhausted  429, still after max_retries retries
  //   DeadlineExceeded   no response within timeout_ms (not retried)
  //   PermissionDenied   401 or 403
  //   InvalidArgument    another 4xx (the message quotes the start of the answer)
  //   Internal           any other HTTP status
  // Not thread-safe: one client per thread (they are cheap).
  [[nodiscard]] absl::StatusOr<std::string> Post(std::string_view path, const std::string& body);

  // "http://host:port/prefix/path", for messages.
  std::string Where(std::string_view path) const;
  const std::string& who() const { return who_; }

 private:
  JsonHttpClient(HttpEndpointOptions options, BaseUrl url, std::string who);

  HttpEndpointOptions options_;
  BaseUrl url_;
  std::string who_;
  std::unique_ptr<httplib::Client> client_;
};

// At most the first 200 bytes of `body`, control characters blanked, "..." when cut.
std::string ErrorSnippet(std::string_view body);

}  // namespace bulwark
