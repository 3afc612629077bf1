// The OpenAI-compatible embeddings client: config validation, request batching, the retry loop
// and strict checking of the response before any vector is trusted.
#include "embed/http_embedder.h"

#include <absl/strings/ascii.h>
#include <absl/strings/str_cat.h>
#include <absl/time/clock.h>
#include <absl/time/time.h>
#include <httplib.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdlib>

#include "core/hex.h"

namespace bulwark {
namespace {

constexpr int kMaxDimension = 65536;
constexpr int kMaxBatchSize = 4096;
constexpr size_t kMaxErrorSnippet = 200;

bool ParseDecimal(std::string_view s, int* out) {
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return !s.empty() && ec == std::errc() && ptr == s.data() + s.size();
}

absl::Status ConfigError(absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat("http embedder: ", message));
}

// Splits "http(s)://host[:port][/prefix]" into "scheme://host[:port]" and the path prefix
// without a trailing slash.
absl::Status ParseUrl(std::string_view url, std::string* scheme_host_port, std::string* prefix) {
  auto bad = [&](absl::string_view why) {
    return ConfigError(absl::StrCat("bad \"url\" '", std::string(url), "': ", why));
  };
  std::string_view rest;
  if (url.starts_with("http://")) {
    rest = url.substr(7);
  } else if (url.starts_with("https://")) {
    rest = url.substr(8);
  } else {
    return bad("must start with http:// or https://");
  }
  const size_t slash = rest.find('/');
  const std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? "" : rest.substr(slash);
  if (authority.empty()) return bad("no host");
  std::string_view host = authority;
  if (host.front() == '[') {  // IPv6 literal
    const size_t close = host.find(']');
    if (close == std::string_view::npos) return bad("unterminated IPv6 address");
    host = authority.substr(0, close + 1);
  } else {
    host = authority.substr(0, authority.find(':'));
  }
  if (host.empty()) return bad("no host");
  for (char c : host) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '[' && c != ']' &&
        c != ':') {
      return bad("invalid character in host");
    }
  }
  if (host.size() < authority.size()) {
    const std::string_view port = authority.substr(host.size());
    int port_number = 0;
    if (port.size() < 2 || port[0] != ':' || !ParseDecimal(port.substr(1), &port_number) || port_number < 1 ||
        port_number > 65535) {
      return bad("invalid port");
    }
  }
  for (char c : path) {
    if (c <= ' ' || c == '?' || c == '#' || static_cast<unsigned char>(c) >= 0x7f) {
      return bad("path may not contain spaces, controls, '?' or '#'");
    }
  }
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  *scheme_host_port = std::string(url.substr(0, url.size() - rest.size() + authority.size()));
  *prefix = std::string(path);
  return absl::OkStatus();
}

std::string Snippet(std::string_view body) {
  std::string out(body.substr(0, kMaxErrorSnippet));
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  }
  if (body.size() > kMaxErrorSnippet) out += "...";
  return out;
}

// Reads an optional integer field into *out, checking [lo, hi].
absl::Status ReadInt(const nlohmann::json& config, const char* key, int lo, int hi, int* out) {
  auto it = config.find(key);
  if (it == config.end()) return absl::OkStatus();
  if (!it->is_number_integer()) return ConfigError(absl::StrCat("\"", key, "\" must be an integer"));
  const int64_t value = it->get<int64_t>();
  if (value < lo || value > hi) {
    return ConfigError(absl::StrCat("\"", key, "\" must be in [", lo, ", ", hi, "], got ", value));
  }
  *out = static_cast<int>(value);
  return absl::OkStatus();
}

absl::Status ReadString(const nlohmann::json& config, const char* key, std::string* out) {
  auto it = config.find(key);
  if (it == config.end()) return absl::OkStatus();
  if (!it->is_string()) return ConfigError(absl::StrCat("\"", key, "\" must be a string"));
  *out = it->get<std::string>();
  return absl::OkStatus();
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
  std::string scheme_host_port, prefix;
  if (absl::Status s = ParseUrl(options.url, &scheme_host_port, &prefix); !s.ok()) return s;
  if (options.model.empty()) return ConfigError("\"model\" is required");
  if (options.dimension < 1 || options.dimension > kMaxDimension) {
    return ConfigError(absl::StrCat("\"dimension\" must be in [1, ", kMaxDimension, "]"));
  }
  if (options.batch_size < 1 || options.batch_size > kMaxBatchSize) {
    return ConfigError(absl::StrCat("\"batch_size\" must be in [1, ", kMaxBatchSize, "]"));
  }
  if (options.timeout_ms < 1 || options.timeout_ms > 600000) {
    return ConfigError("\"timeout_ms\" must be in [1, 600000]");
  }
  if (options.max_retries < 0 || options.max_retries > 10) {
    return ConfigError("\"max_retries\" must be in [0, 10]");
  }
  if (options.initial_backoff_ms < 0 || options.initial_backoff_ms > 60000) {
    return ConfigError("\"initial_backoff_ms\" must be in [0, 60000]");
  }
  for (char c : options.api_key) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return ConfigError("the API key contains control characters");
    }
  }
  return std::unique_ptr<HttpEmbedder>(
      new HttpEmbedder(std::move(options), std::move(scheme_host_port), prefix + "/v1/embeddings"));
}

absl::StatusOr<std::unique_ptr<HttpEmbedder>> HttpEmbedder::FromConfig(const nlohmann::json& config) {
  if (!config.is_object()) return ConfigError("config must be a JSON object");
  static constexpr const char* kKnownKeys[] = {
      "kind",        "url",        "model",      "dimension",   "api_key",
      "api_key_env", "batch_size", "timeout_ms", "max_retries", "initial_backoff_ms"};
  for (const auto& [key, value] : config.items()) {
    if (std::find_if(std::begin(kKnownKeys), std::end(kKnownKeys), [&](const char* k) { return key == k; }) ==
        std::end(kKnownKeys)) {
      return ConfigError(absl::StrCat("unknown field \"", key, "\""));
    }
  }
  HttpEmbedderOptions options;
  if (!config.contains("url")) return ConfigError("\"url\" is required");
  if (!config.contains("model")) return ConfigError("\"model\" is required");
  if (!config.contains("dimension")) return ConfigError("\"dimension\" is required");
  std::string api_key_env;
  for (absl::Status s :
       {ReadString(config, "url", &options.url), ReadString(config, "model", &options.model),
        ReadInt(config, "dimension", 1, kMaxDimension, &options.dimension),
        ReadString(config, "api_key", &options.api_key), ReadString(config, "api_key_env", &api_key_env),
        ReadInt(config, "batch_size", 1, kMaxBatchSize, &options.batch_size),
        ReadInt(config, "timeout_ms", 1, 600000, &options.timeout_ms),
        ReadInt(config, "max_retries", 0, 10, &options.max_retries),
        ReadInt(config, "initial_backoff_ms", 0, 60000, &options.initial_backoff_ms)}) {
    if (!s.ok()) return s;
  }
  if (config.contains("api_key") && config.contains("api_key_env")) {
    return ConfigError("give \"api_key\" or \"api_key_env\", not both");
  }
  if (config.contains("api_key_env")) {
    const char* value = api_key_env.empty() ? nullptr : std::getenv(api_key_env.c_str());
    if (value == nullptr || *value == '\0') {
      return ConfigError(absl::StrCat("environment variable '", api_key_env,
                                      "' named by \"api_key_env\" is unset or empty"));
    }
    options.api_key = value;
  }
  return Create(std::move(options));
}

HttpEmbedder::HttpEmbedder(HttpEmbedderOptions options, std::string scheme_host_port, std::string path)
    : options_(std::move(options)), scheme_host_port_(std::move(scheme_host_port)), path_(std::move(path)) {
  const nlohmann::json config = {
      {"dimension", options_.dimension}, {"model", options_.model}, {"url", options_.url}};
  fingerprint_.name = "http";
  fingerprint_.dimension = options_.dimension;
  fingerprint_.config_hash = Sha256Hex(config.dump());
}

absl::StatusOr<std::vector<float>> HttpEmbedder::Embed(std::string_view text) const {
  const std::string one[] = {std::string(text)};
  absl::StatusOr<std::vector<std::vector<float>>> vectors = EmbedBatch(one);
  if (!vectors.ok()) return vectors.status();
  return std::move(vectors->front());
}

absl::StatusOr<std::vector<std::vector<float>>> HttpEmbedder::EmbedBatch(
    std::span<const std::string> texts) const {
  std::vector<std::vector<float>> out;
  if (texts.empty()) return out;
  out.reserve(texts.size());

  httplib::Client client(scheme_host_port_);
  if (!client.is_valid()) {
    return absl::FailedPreconditionError(
        absl::StrCat("http embedder: cannot create a client for ", scheme_host_port_));
  }
  const auto timeout = std::chrono::milliseconds(options_.timeout_ms);
  client.set_connection_timeout(timeout);
  client.set_read_timeout(timeout);
  client.set_write_timeout(timeout);
  client.set_keep_alive(true);
  client.set_tcp_nodelay(true);
  httplib::Headers headers = {{"Accept", "application/json"}};
  if (!options_.api_key.empty()) {
    headers.emplace("Authorization", absl::StrCat("Bearer ", options_.api_key));
  }

  for (size_t begin = 0; begin < texts.size(); begin += options_.batch_size) {
    const size_t count = std::min(texts.size() - begin, static_cast<size_t>(options_.batch_size));
    const std::string body =
        nlohmann::json{
            {"model", options_.model},
            {"input", std::vector<std::string>(texts.begin() + begin, texts.begin() + begin + count)}}
            .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);

    absl::Status last_error;
    absl::Duration backoff = absl::Milliseconds(options_.initial_backoff_ms);
    bool done = false;
    for (int attempt = 0; attempt <= options_.max_retries && !done; ++attempt) {
      if (attempt > 0) {
        absl::SleepFor(backoff);
        backoff *= 2;
      }
      const absl::Time start = absl::Now();
      httplib::Result result = client.Post(path_, headers, body, "application/json");
      const absl::Duration elapsed = absl::Now() - start;
      if (!result) {
        const httplib::Error error = result.error();
        const bool timed_out = error == httplib::Error::ConnectionTimeout ||
                               ((error == httplib::Error::Read || error == httplib::Error::Write) &&
                                elapsed >= absl::Milliseconds(options_.timeout_ms));
        if (timed_out) {
          return absl::DeadlineExceededError(absl::StrCat("http embedder: no response from ",
                                                          scheme_host_port_, path_, " within ",
                                                          options_.timeout_ms, " ms"));
        }
        last_error = absl::UnavailableError(absl::StrCat("http embedder: request to ", scheme_host_port_,
                                                         path_, " failed (", httplib::to_string(error),
                                                         ") after ", attempt + 1, " attempt(s)"));
        client.stop();  // drop a half-dead keep-alive connection before retrying
        continue;
      }
      const int status = result->status;
      const std::string where = absl::StrCat(scheme_host_port_, path_);
      if (status == 200) {
        if (absl::Status s = ParseResponse(result->body, count, options_.dimension, &out); !s.ok()) {
          return s;
        }
        done = true;
      } else if (status == 401 || status == 403) {
        return absl::PermissionDeniedError(
            absl::StrCat("http embedder: ", where, " returned ", status, ": ", Snippet(result->body)));
      } else if (status == 429) {
        last_error = absl::ResourceExhaustedError(
            absl::StrCat("http embedder: ", where, " returned 429 (rate limited) after ", attempt + 1,
                         " attempt(s): ", Snippet(result->body)));
      } else if (status >= 500 && status <= 599) {
        last_error =
            absl::UnavailableError(absl::StrCat("http embedder: ", where, " returned ", status, " after ",
                                                attempt + 1, " attempt(s): ", Snippet(result->body)));
      } else if (status >= 400 && status <= 499) {
        return absl::InvalidArgumentError(
            absl::StrCat("http embedder: ", where, " returned ", status, ": ", Snippet(result->body)));
      } else {
        return absl::InternalError(
            absl::StrCat("http embedder: ", where, " returned unexpected status ", status));
      }
    }
    if (!done) return last_error;
  }
  return out;
}

}  // namespace bulwark
