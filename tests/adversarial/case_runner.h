// Runs one adversarial case file against a running server (tests/adversarial/README.md).
//
// A case file is one JSON object:
//
//   {"description": "what the attacker tries and what must hold",
//    "principals": [{"name": "w1", "role": "writer", "namespaces": ["a"]}, ...],
//    "steps": [{"as": "w1",                 // a principal above, "admin", or "anonymous" (no key)
//               "method": "PATCH", "path": "/v1/memories/${e1}",
//               "body": {...},              // sent as JSON; or "raw_body" + "content_type"
//               "headers": {"Origin": "https://evil.example"},
//               "expect": {"status": 403, "code": "forbidden",
//                          "json": {"/entry/principal": "w1"},   // JSON pointer -> exact value
//                          "absent": ["\"report\""], "present": ["..."]},
//               "capture": {"e1": "/entry/id"}}, ...]}
//
// `${name}` in a path, header value or any string of a body is replaced by a captured value. The
// principals are created by the server's admin before the first step. Everything is bounded: at
// most kMaxSteps steps and kMaxCaseBytes of file, each request under the client's timeouts, and
// the whole case under `deadline`.
#pragma once

#include <httplib.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace bulwark::testing {

inline constexpr size_t kMaxSteps = 500;
inline constexpr size_t kMaxCaseBytes = 1 << 20;

// Reads and parses a case file; a message in `error` (and null) if it is too large or not JSON.
nlohmann::json LoadCase(const std::filesystem::path& path, std::string* error);

// Runs `test_case` with `client`, the server's admin key `admin_key`, until `deadline`. Returns one
// line per failed expectation ("step 3 (PATCH /v1/...): status 200, expected 403"); empty if every
// expectation held. A malformed case is reported as a failure, never thrown.
std::vector<std::string> RunCase(const nlohmann::json& test_case, httplib::Client& client,
                                 const std::string& admin_key,
                                 std::chrono::steady_clock::time_point deadline);

}  // namespace bulwark::testing
