// HttpExtractionTarget (see http_extraction_target.h).
#include "attack/extraction/http_extraction_target.h"

#include <absl/strings/numbers.h>
#include <absl/strings/str_cat.h>
#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/status_macros.h"
#include "core/strings.h"
#include "net/json_http_client.h"

namespace bulwark::extraction {
namespace {

constexpr size_t kMaxAnswerBytes = 64u << 20;

std::string ErrorCode(const std::string& body) {
  const nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (!j.is_object() || !j.contains("error") || !j["error"].is_object()) return "unknown";
  const nlohmann::json& code = j["error"]["code"];
  return code.is_string() ? code.get<std::string>() : "unknown";
}

absl::StatusOr<std::vector<RetrievedText>> ParseHits(const std::string& body, int k) {
  if (body.size() > kMaxAnswerBytes) return absl::DataLossError("search answer too large");
  const nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (!j.is_object() || !j.contains("hits") || !j["hits"].is_array()) {
    return absl::DataLossError("search answer without a \"hits\" array");
  }
  if (j["hits"].size() > static_cast<size_t>(k))
    return absl::DataLossError("search answer with more than k hits");
  std::vector<RetrievedText> hits;
  for (const nlohmann::json& h : j["hits"]) {
    if (!h.is_object() || !h.contains("id") || !h["id"].is_string() || !h.contains("text") ||
        !h["text"].is_string() || !h.contains("score") || !h["score"].is_number()) {
      return absl::DataLossError("search hit without id, text or score");
    }
    hits.push_back({h["id"].get<std::string>(), h["text"].get<std::string>(), h["score"].get<float>()});
  }
  return hits;
}

}  // namespace

HttpExtractionTarget::HttpExtractionTarget(HttpTargetOptions options, BaseUrl url)
    : options_(std::move(options)),
      url_(std::move(url)),
      client_(MakeKeepAliveClient(url_, options_.timeout_ms)) {}

HttpExtractionTarget::~HttpExtractionTarget() = default;

absl::StatusOr<std::unique_ptr<HttpExtractionTarget>> HttpExtractionTarget::Create(
    HttpTargetOptions options) {
  BULWARK_ASSIGN_OR_RETURN(BaseUrl url, ParseBaseUrl(options.url));
  if (options.api_key.empty() || options.name_space.empty()) {
    return absl::InvalidArgumentError("http target: api_key and name_space are required");
  }
  if (options.timeout_ms < 1 || options.timeout_ms > 600000 || options.max_retries < 0 ||
      options.max_retries > 10 || options.max_retry_wait_ms < 0 || options.max_retry_wait_ms > 60000) {
    return absl::InvalidArgumentError(
        "http target: timeout_ms, max_retries or max_retry_wait_ms out of range");
  }
  return std::unique_ptr<HttpExtractionTarget>(new HttpExtractionTarget(std::move(options), std::move(url)));
}

absl::StatusOr<std::vector<RetrievedText>> HttpExtractionTarget::Query(std::string_view session,
                                                                       std::string_view query, int k) {
  const std::string body =
      nlohmann::json{{"namespace", options_.name_space}, {"query", std::string(query)}, {"k", k}}.dump(
          -1, ' ', false, nlohmann::json::error_handler_t::replace);
  httplib::Headers headers = {{"Authorization", "Bearer " + options_.api_key}};
  if (!session.empty()) headers.emplace("X-Bulwark-Session", std::string(session));
  const std::string path = url_.prefix + "/v1/memories/search";
  for (int attempt = 0;; ++attempt) {
    httplib::Result result = client_->Post(path, headers, body, "application/json");
    if (!result)
      return absl::UnavailableError(absl::StrCat("search: no answer from ", url_.scheme_host_port));
    const int status = result->status;
    if (status == 200) return ParseHits(result->body, k);
    if (status == 429 && attempt < options_.max_retries) {
      int seconds = 1;
      if (!absl::SimpleAtoi(ToAbsl(result->get_header_value("Retry-After")), &seconds)) seconds = 1;
      const int wait_ms = std::clamp(seconds * 1000, 0, options_.max_retry_wait_ms);
      std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
      continue;
    }
    const std::string message = absl::StrCat("search: HTTP ", status, " ", ErrorCode(result->body));
    switch (status) {
      case 400:
        return absl::InvalidArgumentError(message);
      case 401:
        return absl::UnauthenticatedError(message);
      case 403:
        return absl::PermissionDeniedError(message);
      case 404:
        return absl::NotFoundError(message);
      case 429:
        return absl::ResourceExhaustedError(message);
      default:
        return absl::UnavailableError(message);
    }
  }
}

}  // namespace bulwark::extraction
