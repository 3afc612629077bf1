// The format of the service's log lines (`bulwark serve --log-format text|json`). JSON writes one
// object per line with OpenTelemetry log data model field names:
//   {"timestamp": "2026-11-24T00:51:02.123456Z", "severity_text": "WARN", "severity_number": 13,
//    "body": "...", "resource": {"service.name": "bulwark"}}
// The body is JSON-escaped. What the service logs never includes API keys, memory text, queries or
// metadata (the handlers log status messages, ids and counts only), in either format.
#pragma once

#include <absl/status/status.h>

#include <string_view>

namespace bulwark::server {

// Sets the default spdlog logger's format: "text" (spdlog's default) or "json". InvalidArgument
// for anything else.
[[nodiscard]] absl::Status SetLogFormat(std::string_view format);

}  // namespace bulwark::server
