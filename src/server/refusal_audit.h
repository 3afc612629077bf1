// The audit record of a refused request (issue #18 point 8): who was refused (the principal when
// authenticated, else the key id presented), on which route, and why. HttpServer appends one for
// every 401 and 403 it answers, within the per-address and per-principal bounds of
// ServerOptions::refusal_audit_rate.
#pragma once

#include <absl/status/status.h>
#include <httplib.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "audit/audit_log.h"
#include "server/authorization.h"

namespace bulwark::server {

// The key id a refused request presented: KeyIdOf of a well-formed key, "" for none, "malformed"
// for anything else (an attacker's header is not copied into the log).
std::string PresentedKeyId(const httplib::Request& request);

// The "refused" record at `at_us`: principal and session of `caller` (may be null), detail
// {"key_id", "method" (`method_label`), "route", "status" (the HTTP status of `status`), "code",
// "traceparent" when the request has one}; for a session_blocked refusal also the namespace and
// the honeypot monitor's state of the blocked key ("honeypot_monitor", from the status payload).
AuditRecord RefusalRecord(const httplib::Request& request, std::string_view method_label,
                          std::string_view route, const Caller* caller, const absl::Status& status,
                          int64_t at_us);

}  // namespace bulwark::server
