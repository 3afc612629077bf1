// Checks on caller-supplied values. Each returns OK or InvalidArgument with a message that names
// the problem and, where useful, the byte offset.
#pragma once

#include <absl/status/status.h>

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string_view>

namespace bulwark {

// Text of an entry or a query: non-empty after trimming white space, at most `max_bytes` bytes,
// well-formed UTF-8 (no overlong forms, surrogates or code points above U+10FFFF), no NUL.
[[nodiscard]] absl::Status ValidateText(std::string_view text, size_t max_bytes);

// Namespace names: 1-64 characters of [A-Za-z0-9_.-], starting with a letter or digit.
[[nodiscard]] absl::Status ValidateNamespace(std::string_view name);

// Metadata: a JSON object whose compact dump is at most `max_bytes` bytes.
[[nodiscard]] absl::Status ValidateMetadata(const nlohmann::json& metadata, size_t max_bytes);

// True if `text` is well-formed UTF-8; on failure *bad_offset is the first bad byte.
bool IsValidUtf8(std::string_view text, size_t* bad_offset = nullptr);

}  // namespace bulwark
