// API key extraction, authentication and the role/grant checks (see authorization.h).
#include "server/authorization.h"

#include <algorithm>

#include "core/status_macros.h"
#include "server/api_status.h"
#include "server/request_parsing.h"

namespace bulwark::server {
namespace {

absl::Status Unauthenticated(std::string_view message) {
  return ApiError(absl::StatusCode::kUnauthenticated, "unauthenticated", message);
}

}  // namespace

Principal InsecureDevPrincipal() {
  Principal p;
  p.name = "insecure-dev";
  p.role = Role::kAdmin;
  p.namespaces = {"*"};
  return p;
}

absl::StatusOr<std::string> ApiKeyOf(const httplib::Request& request) {
  std::string from_header;
  if (request.has_header("Authorization")) {
    const std::string value = request.get_header_value("Authorization");
    // "Bearer <key>", or "Token <key>" as Mem0's clients send it (doc/mem0.md); case-insensitive.
    auto has_scheme = [&value](std::string_view scheme) {
      return value.size() > scheme.size() &&
             std::equal(scheme.begin(), scheme.end(), value.begin(), [](char a, char b) {
               return std::tolower(static_cast<unsigned char>(a)) ==
                      std::tolower(static_cast<unsigned char>(b));
             });
    };
    constexpr std::string_view kBearer = "Bearer ";
    constexpr std::string_view kToken = "Token ";
    if (has_scheme(kBearer)) {
      from_header = value.substr(kBearer.size());
    } else if (has_scheme(kToken)) {
      from_header = value.substr(kToken.size());
    } else {
      return ApiError(absl::StatusCode::kUnauthenticated, "unauthenticated",
                      "the Authorization header must be \"Bearer <api key>\"");
    }
  }
  std::string from_api_key = request.has_header("X-API-Key") ? request.get_header_value("X-API-Key") : "";
  if (!from_header.empty() && !from_api_key.empty() && from_header != from_api_key) {
    return ApiError(absl::StatusCode::kInvalidArgument, "invalid_argument",
                    "Authorization and X-API-Key name different keys");
  }
  return from_header.empty() ? from_api_key : from_header;
}

std::string KeyIdOf(std::string_view api_key) {
  if (!api_key.starts_with("bwk_")) return "";
  api_key.remove_prefix(4);
  size_t end = api_key.find('_');
  if (end == std::string_view::npos || end == 0) return "";
  return std::string(api_key.substr(0, end));
}

absl::StatusOr<Caller> Authenticate(const httplib::Request& request, PrincipalRegistry& registry,
                                    CredentialCache* cache, int64_t now_us, bool insecure_dev) {
  Caller caller;
  caller.session = request.get_header_value("X-Bulwark-Session");
  BULWARK_RETURN_IF_ERROR(ValidateSessionId(caller.session));
  BULWARK_ASSIGN_OR_RETURN(auto key, ApiKeyOf(request));
  if (key.empty()) {
    if (!insecure_dev) {
      return Unauthenticated("missing API key: send \"Authorization: Bearer <key>\" or \"X-API-Key: <key>\"");
    }
    caller.principal = InsecureDevPrincipal();
    caller.key_id = "insecure-dev";
    return caller;
  }
  caller.key_id = KeyIdOf(key);
  if (cache != nullptr) {
    if (std::optional<Principal> cached = cache->Find(key, now_us)) {
      caller.principal = *std::move(cached);
      return caller;
    }
  }
  auto principal = registry.Authenticate(key);
  if (!principal.ok()) {
    if (principal.status().code() == absl::StatusCode::kUnauthenticated)
      return Unauthenticated("invalid API key");
    return principal.status();  // the registry itself failed: 500/503, not the caller's fault
  }
  if (cache != nullptr) cache->Insert(key, *principal, now_us);
  caller.principal = *std::move(principal);
  return caller;
}

absl::Status Authorize(const Caller& caller, std::string_view name_space, Need need,
                       const absl::Status& hidden) {
  const Principal& p = caller.principal;
  if (!p.CanRead(name_space)) return hidden;
  switch (need) {
    case Need::kRead:
      return absl::OkStatus();
    case Need::kWrite:
      return p.CanWrite(name_space) ? absl::OkStatus()
                                    : Forbidden("this API key may not write (role reader)");
    case Need::kAdmin:
      return p.IsAdmin() ? absl::OkStatus() : Forbidden("this operation needs the admin role");
  }
  return hidden;
}

bool HoldsAllNamespaces(const Principal& principal) {
  return std::find(principal.namespaces.begin(), principal.namespaces.end(), "*") !=
         principal.namespaces.end();
}

absl::Status RequireServiceAdmin(const Caller& caller) {
  if (caller.principal.IsAdmin() && HoldsAllNamespaces(caller.principal)) return absl::OkStatus();
  return Forbidden("this operation needs the admin role with the \"*\" namespace grant");
}

absl::Status RequireAdmin(const Caller& caller) {
  if (caller.principal.IsAdmin()) return absl::OkStatus();
  return Forbidden("this operation needs the admin role");
}

}  // namespace bulwark::server
