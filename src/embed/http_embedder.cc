// The OpenAI-compatible embeddings client: config validation, request batching, and strict
// checking of the response before any vector is trusted. Transport, retries and HTTP error mapping
// are JsonHttpClient's (net/json_http_client.h).
#include "embed/http_embedder.h"

#include <absl/strings/str_cat.h>

#include <algorithm>
#include <cmath>

#include "core/hex.h"
#include "core/status_macros.h"
#include "net/json_http_client.h"

namespace bulwark {
namespace {

constexpr int kMaxDimension = 65536;
constexpr int kMaxBatchSize = 4096;
constexpr char kWho[] = "http embedder";

absl::Status ConfigError(absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(kWho, ": ", message));
}

HttpEndpointOptions EndpointOf(const HttpEmbedderOptions& options) {
  return {.url = options.url,
          .api_key = options.api_key,
          .timeout_ms = options.timeout_ms,
          .max_retries = options.max_retries,
          .initial_backoff_ms = options.initial_backoff_ms};
}

// Checks a 200 response body and fills `out` (one L2-normalized vector per input, in input order).
absl::Status ParseResponse(std::string_view body, size_t expected_items, int dimension,
                           std::vector<std::vector<float>>* out) {
  auto bad = [](absl::string_view why) {
    return absl::DataLossError(absl::StrCat("http embedder: malformed response: ", why));
  };
  const nlohmann::json response = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (response.is_discarded()) return bad("not JSON");
  if (!response.is_object()) return bad("not a JSON object");
  auto data = response.find("data");
  if (data == response.end() || !data->is_array()) return bad("no \"data\" array");
  if (data->size() != expected_items) {
    return bad(absl::StrCat("\"data\" has ", data->size(), " items for ", expected_items, " inputs"));
  }
  std::vector<std::vector<float>> vectors(expected_items);
  for (const nlohmann::json& item : *data) {
    if (!item.is_object()) return bad("a \"data\" item is not an object");
    auto index = item.find("index");
    if (index == item.end() || !index->is_number_integer()) return bad("missing integer \"index\"");
    const int64_t i = index->get<int64_t>();
    if (i < 0 || static_cast<uint64_t>(i) >= expected_items) {
      return bad(absl::StrCat("\"index\" ", i, " out of range"));
    }
    if (!vectors[i].empty()) return bad(absl::StrCat("duplicate \"index\" ", i));
    auto embedding = item.find("embedding");
    if (embedding == item.end() || !embedding->is_array()) return bad("missing \"embedding\" array");
    if (embedding->size() != static_cast<size_t>(dimension)) {
      return bad(
          absl::StrCat("embedding ", i, " has dimension ", embedding->size(), ", expected ", dimension));
    }
    std::vector<float>& vec = vectors[i];
    vec.reserve(dimension);
    double squared = 0;
    for (const nlohmann::json& x : *embedding) {
      if (!x.is_number()) return bad(absl::StrCat("embedding ", i, " has a non-numeric entry"));
      const double v = x.get<double>();
      const float f = static_cast<float>(v);
      if (!std::isfinite(v) || !std::isfinite(f)) {
        return bad(absl::StrCat("embedding ", i, " has a non-finite entry"));
      }
      vec.push_back(f);
      squared += v * v;
    }
    if (squared > 0) {
      const double scale = 1.0 / std::sqrt(squared);
      for (float& f : vec) f = static_cast<float>(f * scale);
    }
  }
  for (auto& vec : vectors) out->push_back(std::move(vec));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<HttpEmbedder>> HttpEmbedder::Create(HttpEmbedderOptions options) {
  BULWARK_RETURN_IF_ERROR(ValidateEndpointOptions(EndpointOf(options), kWho));
  BULWARK_ASSIGN_OR_RETURN(auto url, ParseBaseUrl(options.url));
  if (options.model.empty()) return ConfigError("\"model\" is required");
  if (options.dimension < 1 || options.dimension > kMaxDimension) {
    return ConfigError(absl::StrCat("\"dimension\" must be in [1, ", kMaxDimension, "]"));
  }
  if (options.batch_size < 1 || options.batch_size > kMaxBatchSize) {
    return ConfigError(absl::StrCat("\"batch_size\" must be in [1, ", kMaxBatchSize, "]"));
  }
  return std::unique_ptr<HttpEmbedder>(new HttpEmbedder(std::move(options)));
}

absl::StatusOr<std::unique_ptr<HttpEmbedder>> HttpEmbedder::FromConfig(const nlohmann::json& config) {
  if (absl::Status s = CheckConfigKeys(config,
                                       {"kind", "url", "model", "dimension", "api_key", "api_key_env",
                                        "batch_size", "timeout_ms", "max_retries", "initial_backoff_ms"},
                                       kWho);
      !s.ok()) {
    return s;
  }
  if (!config.contains("url")) return ConfigError("\"url\" is required");
  if (!config.contains("model")) return ConfigError("\"model\" is required");
  if (!config.contains("dimension")) return ConfigError("\"dimension\" is required");
  HttpEndpointOptions endpoint = EndpointOf({});
  HttpEmbedderOptions options;
  for (absl::Status s :
       {ReadEndpointConfig(config, kWho, &endpoint), ReadConfigString(config, "model", kWho, &options.model),
        ReadConfigInt(config, "dimension", 1, kMaxDimension, kWho, &options.dimension),
        ReadConfigInt(config, "batch_size", 1, kMaxBatchSize, kWho, &options.batch_size)}) {
    BULWARK_RETURN_IF_ERROR(s);
  }
  options.url = endpoint.url;
  options.api_key = endpoint.api_key;
  options.timeout_ms = endpoint.timeout_ms;
  options.max_retries = endpoint.max_retries;
  options.initial_backoff_ms = endpoint.initial_backoff_ms;
  return Create(std::move(options));
}

HttpEmbedder::HttpEmbedder(HttpEmbedderOptions options) : options_(std::move(options)) {
  const nlohmann::json config = {
      {"dimension", options_.dimension}, {"model", options_.model}, {"url", options_.url}};
  fingerprint_.name = "http";
  fingerprint_.dimension = options_.dimension;
  fingerprint_.config_hash = Sha256Hex(config.dump());
}

absl::StatusOr<std::vector<float>> HttpEmbedder::Embed(std::string_view text) const {
  const std::string one[] = {std::string(text)};
  BULWARK_ASSIGN_OR_RETURN(std::vector<std::vector<float>> vectors, EmbedBatch(one));
  return std::move(vectors.front());
}

absl::StatusOr<std::vector<std::vector<float>>> HttpEmbedder::EmbedBatch(
    std::span<const std::string> texts) const {
  std::vector<std::vector<float>> out;
  if (texts.empty()) return out;
  out.reserve(texts.size());
  auto client = JsonHttpClient::Create(EndpointOf(options_), kWho);  // one connection per call
  BULWARK_RETURN_IF_ERROR(client.status());
  for (size_t begin = 0; begin < texts.size(); begin += options_.batch_size) {
    const size_t count = std::min(texts.size() - begin, static_cast<size_t>(options_.batch_size));
    const std::string body =
        nlohmann::json{
            {"model", options_.model},
            {"input", std::vector<std::string>(texts.begin() + begin, texts.begin() + begin + count)}}
            .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    BULWARK_ASSIGN_OR_RETURN(auto answer, (*client)->Post("/v1/embeddings", body));
    BULWARK_RETURN_IF_ERROR(ParseResponse(answer, count, options_.dimension, &out));
  }
  return out;
}

}  // namespace bulwark
