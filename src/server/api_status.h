// Errors of the HTTP API. Handlers return absl::Status values; this file is the one place where a
// status becomes an HTTP answer. The canonical code picks the HTTP status; an optional payload
// carries the stable, machine-readable `code` of the JSON error body
//   {"error": {"code": "unknown_field", "message": "unknown field \"foo\""}}
// (doc/api.md lists every code).
#pragma once

#include <absl/status/status.h>

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace bulwark::server {

// A status with canonical `code` whose API error code is `api_code` (e.g. "unknown_field").
[[nodiscard]] absl::Status ApiError(absl::StatusCode code, std::string_view api_code,
                                    std::string_view message);

// The API error code of `status`: its payload if one was attached by ApiError, otherwise derived
// from the canonical code ("invalid_argument", "not_found", "forbidden", "internal", ...).
std::string ApiCodeOf(const absl::Status& status);

// HTTP status for a canonical code: InvalidArgument and OutOfRange 400, Unauthenticated 401,
// PermissionDenied 403, NotFound 404, AlreadyExists, FailedPrecondition and Aborted 409,
// ResourceExhausted 429, Unimplemented 501, Unavailable 503, DeadlineExceeded 504; everything
// else (Internal, DataLoss, Unknown, ...) 500.
int HttpStatusOf(absl::StatusCode code);

// The JSON error body for `status`. A 500-class message is replaced by a generic one so internal
// details reach the log, never the caller.
nlohmann::json ErrorBody(const absl::Status& status);
nlohmann::json ErrorBody(std::string_view api_code, std::string_view message);

// Canned answers that must be byte-identical wherever they are used (tenant isolation: an entry
// or namespace the caller may not see answers exactly like one that does not exist).
absl::Status EntryNotFound();      // 404 {"code": "not_found", "message": "entry not found"}
absl::Status NamespaceNotFound();  // 404 {"code": "namespace_not_found", "message": "namespace not found"}

// 403 {"code": "forbidden", "message": message}.
absl::Status Forbidden(std::string_view message);

}  // namespace bulwark::server
