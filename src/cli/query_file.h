// Query files read by the gate commands: one query per line, either plain text or a JSON object
// with "query" (or "text"). Blank lines are skipped.
#pragma once

#include <absl/status/statusor.h>

#include <string>
#include <vector>

namespace bulwark::cli {

// The queries of `path`, in order. NotFound if the file cannot be read; InvalidArgument naming the
// line ("queries.jsonl:3: expected {\"query\": \"...\"}") for a JSON line without a string query,
// or if the file holds no query.
absl::StatusOr<std::vector<std::string>> ReadQueryFile(const std::string& path);

}  // namespace bulwark::cli
