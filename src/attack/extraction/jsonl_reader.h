// Bounded reading of JSON-lines input (the attack log, the benign corpora): every line is checked
// against a length limit before it is parsed, and must be one JSON object. Blank lines are skipped.
#pragma once

#include <absl/status/status.h>
#include <absl/status/statusor.h>

#include <cstdint>
#include <fstream>
#include <functional>
#include <istream>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace bulwark::extraction {

inline constexpr size_t kMaxJsonLineBytes = 1 << 20;
inline constexpr uintmax_t kMaxJsonFileBytes = 256u << 20;

// Calls visit(line_number, object) for every non-blank line of `in`, in order, stopping at the
// first error visit returns (which is returned with "name:line: " in front). InvalidArgument
// ("name:line: ...") for a line over kMaxJsonLineBytes or one that is not a JSON object.
[[nodiscard]] absl::Status ForEachJsonLine(
    std::istream& in, std::string_view name,
    const std::function<absl::Status(int, const nlohmann::json&)>& visit);

// Opens `path` for reading after checking its size: NotFound if it cannot be read,
// ResourceExhausted if it is larger than kMaxJsonFileBytes.
[[nodiscard]] absl::StatusOr<std::ifstream> OpenJsonFile(const std::string& path);

// The same over a file. NotFound if it cannot be opened; ResourceExhausted if it is larger than
// kMaxJsonFileBytes.
[[nodiscard]] absl::Status ForEachJsonLineInFile(
    const std::string& path, const std::function<absl::Status(int, const nlohmann::json&)>& visit);

}  // namespace bulwark::extraction
