// The shared HTTP client of the OpenAI-compatible endpoints (see json_http_client.h).
#include "net/json_http_client.h"

#include <absl/strings/str_cat.h>
#include <absl/time/clock.h>
#include <absl/time/time.h>
#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "core/status_macros.h"
#include "core/strings.h"

namespace bulwark {
namespace {

constexpr size_t kMaxErrorSnippet = 200;

absl::Status ConfigError(std::string_view who, std::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(std::string(who), ": ", std::string(message)));
}

}  // namespace

std::string ErrorSnippet(std::string_view body) {
  std::string out(body.substr(0, kMaxErrorSnippet));
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  }
  if (body.size() > kMaxErrorSnippet) out += "...";
  return out;
}

absl::Status ValidateEndpointOptions(const HttpEndpointOptions& options, std::string_view who) {
  if (auto url = ParseBaseUrl(options.url); !url.ok()) return ConfigError(who, ToStd(url.status().message()));
  if (options.timeout_ms < 1 || options.timeout_ms > 600000) {
    return ConfigError(who, "\"timeout_ms\" must be in [1, 600000]");
  }
  if (options.max_retries < 0 || options.max_retries > 10) {
    return ConfigError(who, "\"max_retries\" must be in [0, 10]");
  }
  if (options.initial_backoff_ms < 0 || options.initial_backoff_ms > 60000) {
    return ConfigError(who, "\"initial_backoff_ms\" must be in [0, 60000]");
  }
  for (char c : options.api_key) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return ConfigError(who, "the API key contains control characters");
    }
  }
  return absl::OkStatus();
}

absl::Status ReadConfigInt(const nlohmann::json& config, const char* key, int lo, int hi,
                           std::string_view who, int* out) {
  auto it = config.find(key);
  if (it == config.end()) return absl::OkStatus();
  if (!it->is_number_integer()) return ConfigError(who, absl::StrCat("\"", key, "\" must be an integer"));
  const int64_t value = it->get<int64_t>();
  if (value < lo || value > hi) {
    return ConfigError(who, absl::StrCat("\"", key, "\" must be in [", lo, ", ", hi, "], got ", value));
  }
  *out = static_cast<int>(value);
  return absl::OkStatus();
}

absl::Status ReadConfigDouble(const nlohmann::json& config, const char* key, double lo, double hi,
                              std::string_view who, double* out) {
  auto it = config.find(key);
  if (it == config.end()) return absl::OkStatus();
  if (!it->is_number()) return ConfigError(who, absl::StrCat("\"", key, "\" must be a number"));
  const double value = it->get<double>();
  if (!(value >= lo && value <= hi)) {
    return ConfigError(who, absl::StrCat("\"", key, "\" must be in [", lo, ", ", hi, "]"));
  }
  *out = value;
  return absl::OkStatus();
}

absl::Status ReadConfigString(const nlohmann::json& config, const char* key, std::string_view who,
                              std::string* out) {
  auto it = config.find(key);
  if (it == config.end()) return absl::OkStatus();
  if (!it->is_string()) return ConfigError(who, absl::StrCat("\"", key, "\" must be a string"));
  *out = it->get<std::string>();
  return absl::OkStatus();
}

absl::Status CheckConfigKeys(const nlohmann::json& config, std::initializer_list<const char*> known,
                             std::string_view who) {
  if (!config.is_object()) return ConfigError(who, "config must be a JSON object");
  for (const auto& item : config.items()) {
    const std::string& key = item.key();
    if (std::none_of(known.begin(), known.end(), [&](const char* k) { return key == k; })) {
      return ConfigError(who, absl::StrCat("unknown field \"", key, "\""));
    }
  }
  return absl::OkStatus();
}

absl::Status ReadEndpointConfig(const nlohmann::json& config, std::string_view who,
                                HttpEndpointOptions* options) {
  std::string api_key_env;
  for (absl::Status s :
       {ReadConfigString(config, "url", who, &options->url),
        ReadConfigString(config, "api_key", who, &options->api_key),
        ReadConfigString(config, "api_key_env", who, &api_key_env),
        ReadConfigInt(config, "timeout_ms", 1, 600000, who, &options->timeout_ms),
        ReadConfigInt(config, "max_retries", 0, 10, who, &options->max_retries),
        ReadConfigInt(config, "initial_backoff_ms", 0, 60000, who, &options->initial_backoff_ms)}) {
    BULWARK_RETURN_IF_ERROR(s);
  }
  if (config.contains("api_key") && config.contains("api_key_env")) {
    return ConfigError(who, "give \"api_key\" or \"api_key_env\", not both");
  }
  if (config.contains("api_key_env")) {
    const char* value = api_key_env.empty() ? nullptr : std::getenv(api_key_env.c_str());
    if (value == nullptr || *value == '\0') {
      return ConfigError(who, absl::StrCat("environment variable '", api_key_env,
                                           "' named by \"api_key_env\" is unset or empty"));
    }
    options->api_key = value;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<JsonHttpClient>> JsonHttpClient::Create(const HttpEndpointOptions& options,
                                                                       std::string who) {
  if (auto s = ValidateEndpointOptions(options, who); !s.ok()) return s;
  BULWARK_ASSIGN_OR_RETURN(auto url, ParseBaseUrl(options.url));
  std::unique_ptr<JsonHttpClient> client(new JsonHttpClient(options, std::move(url), std::move(who)));
  if (!client->client_->is_valid()) {
    return absl::FailedPreconditionError(
        absl::StrCat(client->who_, ": cannot create a client for ", client->url_.scheme_host_port));
  }
  return client;
}

std::unique_ptr<httplib::Client> MakeKeepAliveClient(const BaseUrl& url, int timeout_ms) {
  auto client = std::make_unique<httplib::Client>(url.scheme_host_port);
  const auto timeout = std::chrono::milliseconds(timeout_ms);
  client->set_connection_timeout(timeout);
  client->set_read_timeout(timeout);
  client->set_write_timeout(timeout);
  client->set_keep_alive(true);
  client->set_tcp_nodelay(true);
  return client;
}

JsonHttpClient::JsonHttpClient(HttpEndpointOptions options, BaseUrl url, std::string who)
    : options_(std::move(options)),
      url_(std::move(url)),
      who_(std::move(who)),
      client_(MakeKeepAliveClient(url_, options_.timeout_ms)) {}

JsonHttpClient::~JsonHttpClient() = default;

std::string JsonHttpClient::Where(std::string_view path) const {
  return absl::StrCat(url_.scheme_host_port, url_.prefix, std::string(path));
}

absl::StatusOr<std::string> JsonHttpClient::Post(std::string_view path, const std::string& body) {
  httplib::Headers headers = {{"Accept", "application/json"}};
  if (!options_.api_key.empty()) headers.emplace("Authorization", absl::StrCat("Bearer ", options_.api_key));
  const std::string full_path = absl::StrCat(url_.prefix, std::string(path));
  const std::string where = Where(path);

  absl::Status last_error;
  absl::Duration backoff = absl::Milliseconds(options_.initial_backoff_ms);
  for (int attempt = 0; attempt <= options_.max_retries; ++attempt) {
    if (attempt > 0) {
      absl::SleepFor(backoff);
      backoff *= 2;
    }
    const absl::Time start = absl::Now();
    httplib::Result result = client_->Post(full_path, headers, body, "application/json");
    const absl::Duration elapsed = absl::Now() - start;
    if (!result) {
      const httplib::Error error = result.error();
      const bool timed_out = error == httplib::Error::ConnectionTimeout ||
                             ((error == httplib::Error::Read || error == httplib::Error::Write) &&
                              elapsed >= absl::Milliseconds(options_.timeout_ms));
      if (timed_out) {
        client_->stop();
        return absl::DeadlineExceededError(
            absl::StrCat(who_, ": no response from ", where, " within ", options_.timeout_ms, " ms"));
      }
      last_error = absl::UnavailableError(absl::StrCat(who_, ": request to ", where, " failed (",
                                                       httplib::to_string(error), ") after ", attempt + 1,
                                                       " attempt(s)"));
      client_->stop();  // drop a half-dead keep-alive connection before retrying
      continue;
    }
    const int status = result->status;
    if (status == 200) return std::move(result->body);
    if (status == 401 || status == 403) {
      return absl::PermissionDeniedError(
          absl::StrCat(who_, ": ", where, " returned ", status, ": ", ErrorSnippet(result->body)));
    }
    if (status == 429) {
      last_error = absl::ResourceExhaustedError(
          absl::StrCat(who_, ": ", where, " returned 429 (rate limited) after ", attempt + 1,
                       " attempt(s): ", ErrorSnippet(result->body)));
    } else if (status >= 500 && status <= 599) {
      last_error =
          absl::UnavailableError(absl::StrCat(who_, ": ", where, " returned ", status, " after ", attempt + 1,
                                              " attempt(s): ", ErrorSnippet(result->body)));
    } else if (status >= 400 && status <= 499) {
      return absl::InvalidArgumentError(
          absl::StrCat(who_, ": ", where, " returned ", status, ": ", ErrorSnippet(result->body)));
    } else {
      return absl::InternalError(absl::StrCat(who_, ": ", where, " returned unexpected status ", status));
    }
  }
  return last_error;
}

}  // namespace bulwark
