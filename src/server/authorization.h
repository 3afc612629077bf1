// Who is calling, and may they do this here? Authentication reads the API key of a request;
// authorization checks a principal's role and namespace grants (DESIGN 4.9).
//
// Tenant isolation rule: a namespace the caller is not granted answers exactly like one that
// does not exist. Authorize therefore returns the caller-chosen `hidden` status (EntryNotFound or
// NamespaceNotFound, both canned and byte-identical everywhere) for an ungranted namespace, and
// PermissionDenied only when the namespace *is* granted but the role is too low (which reveals
// nothing the caller does not already know about its own grants).
#pragma once

#include <absl/status/status.h>
#include <absl/status/statusor.h>
#include <httplib.h>

#include <string>
#include <string_view>

#include "auth/principal_registry.h"
#include "server/credential_cache.h"

namespace bulwark::server {

// The authenticated caller of one request.
struct Caller {
  Principal principal;
  std::string key_id;   // the API key's public id (rate limiting); "insecure-dev" for anonymous dev calls
  std::string session;  // X-Bulwark-Session, may be empty
};

// The principal anonymous requests act as under --insecure-dev: admin on every namespace.
Principal InsecureDevPrincipal();

// The API key of a request: `Authorization: Bearer <key>` (or `Token <key>`, Mem0's scheme) or
// `X-API-Key: <key>`; empty if neither. InvalidArgument if both are given and differ;
// Unauthenticated if the Authorization scheme is neither Bearer nor Token.
[[nodiscard]] absl::StatusOr<std::string> ApiKeyOf(const httplib::Request& request);

// The public key id of "bwk_<key_id>_<secret>", or "" for a string of another shape.
std::string KeyIdOf(std::string_view api_key);

// Authenticates `request`. Unauthenticated ("missing API key" / "invalid API key") unless the key
// is valid, or the request has no key at all and `insecure_dev` is set (then the caller is
// InsecureDevPrincipal()). The session header is validated (InvalidArgument) and copied. A key
// found in `cache` (may be null) is not looked up again; a key the registry accepts is cached.
[[nodiscard]] absl::StatusOr<Caller> Authenticate(const httplib::Request& request,
                                                  PrincipalRegistry& registry, CredentialCache* cache,
                                                  int64_t now_us, bool insecure_dev);

enum class Need {
  kRead,   // search, get, history: any role
  kWrite,  // add, update, delete: writer or admin
  kAdmin,  // purge, quarantine review, include_quarantined: admin
};

// OK if the caller may do `need` in `name_space`. An ungranted namespace -> `hidden`; a granted
// namespace with too low a role -> PermissionDenied.
[[nodiscard]] absl::Status Authorize(const Caller& caller, std::string_view name_space, Need need,
                                     const absl::Status& hidden);

// Whole-service administration (principals, keys, signing keys, verify): role admin *and* the
// "*" grant, since these act across every namespace. PermissionDenied otherwise.
[[nodiscard]] absl::Status RequireServiceAdmin(const Caller& caller);
// Role admin with any grants (metrics, audit of granted namespaces). PermissionDenied otherwise.
[[nodiscard]] absl::Status RequireAdmin(const Caller& caller);

// True if the principal holds the "*" grant.
bool HoldsAllNamespaces(const Principal& principal);

}  // namespace bulwark::server
