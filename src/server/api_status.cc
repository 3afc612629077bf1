// The absl::Status -> HTTP mapping of the service (see api_status.h).
#include "server/api_status.h"

#include <absl/strings/cord.h>

#include "core/strings.h"

namespace bulwark::server {
namespace {

constexpr char kApiCodeUrl[] = "bulwark.dev/api-error-code";

std::string_view DefaultApiCode(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOk:
      return "ok";
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
      return "invalid_argument";
    case absl::StatusCode::kUnauthenticated:
      return "unauthenticated";
    case absl::StatusCode::kPermissionDenied:
      return "forbidden";
    case absl::StatusCode::kNotFound:
      return "not_found";
    case absl::StatusCode::kAlreadyExists:
      return "already_exists";
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kAborted:
      return "conflict";
    case absl::StatusCode::kResourceExhausted:
      return "rate_limited";
    case absl::StatusCode::kUnimplemented:
      return "not_implemented";
    case absl::StatusCode::kUnavailable:
      return "unavailable";
    case absl::StatusCode::kDeadlineExceeded:
      return "timeout";
    case absl::StatusCode::kDataLoss:
      return "data_loss";
    default:
      return "internal";
  }
}

}  // namespace

absl::Status ApiError(absl::StatusCode code, std::string_view api_code, std::string_view message) {
  absl::Status status(code, ToAbsl(message));
  status.SetPayload(kApiCodeUrl, absl::Cord(ToAbsl(api_code)));
  return status;
}

std::string ApiCodeOf(const absl::Status& status) {
  if (auto payload = status.GetPayload(kApiCodeUrl); payload.has_value()) return std::string(*payload);
  return std::string(DefaultApiCode(status.code()));
}

int HttpStatusOf(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOk:
      return 200;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
      return 400;
    case absl::StatusCode::kUnauthenticated:
      return 401;
    case absl::StatusCode::kPermissionDenied:
      return 403;
    case absl::StatusCode::kNotFound:
      return 404;
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kAborted:
      return 409;
    case absl::StatusCode::kResourceExhausted:
      return 429;
    case absl::StatusCode::kUnimplemented:
      return 501;
    case absl::StatusCode::kUnavailable:
      return 503;
    case absl::StatusCode::kDeadlineExceeded:
      return 504;
    default:
      return 500;
  }
}

nlohmann::json ErrorBody(std::string_view api_code, std::string_view message) {
  return {{"error", {{"code", api_code}, {"message", message}}}};
}

nlohmann::json ErrorBody(const absl::Status& status) {
  if (HttpStatusOf(status.code()) == 500) {
    return ErrorBody(ApiCodeOf(status), status.code() == absl::StatusCode::kDataLoss
                                            ? "stored data failed verification and was withheld"
                                            : "internal error");
  }
  return ErrorBody(ApiCodeOf(status), ToStd(status.message()));
}

absl::Status Forbidden(std::string_view message) {
  return ApiError(absl::StatusCode::kPermissionDenied, "forbidden", message);
}

// Built once: every authorized request passes one of these to Authorize, and copying a status
// only shares its payload.
absl::Status EntryNotFound() {
  static const absl::Status* const status =
      new absl::Status(ApiError(absl::StatusCode::kNotFound, "not_found", "entry not found"));
  return *status;
}

absl::Status NamespaceNotFound() {
  static const absl::Status* const status =
      new absl::Status(ApiError(absl::StatusCode::kNotFound, "namespace_not_found", "namespace not found"));
  return *status;
}

}  // namespace bulwark::server
